"""Forward mode through the API (`tz.jvp`, `linearize`, `jacfwd`, `jacrev`, `hessian`,
`custom_jvp`) against JAX in float64 (JAX is the test extra's reference; without it these
tests skip), and against finite differences where JAX has no twin."""

from __future__ import annotations

import numpy as np
import pytest
from harness import HESSIAN_SRC, close

import tenzr as tz

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy

rng = np.random.default_rng(7)


def r(*shape: int) -> np.ndarray:
    return rng.standard_normal(shape)


# --------------------------------------------------------------------------- models, twice


def mlp(np_, params, x):
    h = np_.tanh(x @ params["w1"] + params["b1"])
    return h @ params["w2"]


def mlp_loss(np_, params, x):
    return (mlp(np_, params, x) ** 2).mean()


def softmax_model(np_, nn, w, x):
    return nn.softmax(x @ w, axis=-1)


def conv_model(tz_conv, x, w):
    return tz_conv(x, w)


def _tz_conv(x, w):
    return tz.nn.conv(x, w, stride=1, padding=1).sum(axis=(2, 3))


def _jax_conv(x, w):
    out = jax.lax.conv_general_dilated(x, w, (1, 1), ((1, 1), (1, 1)),
                                       dimension_numbers=("NCHW", "OIHW", "NCHW"))
    return out.sum(axis=(2, 3))


PARAMS = {"w1": r(4, 5), "b1": r(5), "w2": r(5, 3)}
X = r(6, 4)


# --------------------------------------------------------------------------- jvp


def test_jvp_of_a_vector_function():
    f = lambda np_: lambda x, y: np_.sin(x) * y + np_.exp(x / 3.0)  # noqa: E731
    x, y, tx, ty = r(5), r(5), r(5), r(5)
    close(tz.jvp(f(tz), (x, y), (tx, ty)), lambda: jax.jvp(f(jnp), (x, y), (tx, ty)))


def test_jvp_of_a_pytree_loss():
    tangents = jax.tree_util.tree_map(lambda a: rng.standard_normal(a.shape), PARAMS)
    got = tz.jvp(lambda p: mlp_loss(tz, p, X), (PARAMS,), (tangents,))
    want = jax.jvp(lambda p: mlp_loss(jnp, p, X), (PARAMS,), (tangents,))
    close(got, want)


def test_jvp_with_aux_and_integer_inputs():
    def f(np_):
        return lambda x, n: ((np_.sin(x) * n).sum(), {"n": n + 1})

    x, t = r(3), r(3)
    n = np.arange(3, dtype=np.int64)
    y, ydot, aux = tz.jvp(f(tz), (x, n), (t, np.zeros(3, np.int64)), has_aux=True)
    jy, jydot, jaux = jax.jvp(lambda x: f(jnp)(x, n), (x,), (t,), has_aux=True)
    close((y, ydot, aux), (jy, jydot, jaux))


def test_custom_jvp_defjvps_matches_jax():
    """One tangent rule per argument (None: no derivative), under jvp, grad and hessian."""
    def make(ns):
        @ns.custom_jvp
        def f(x, y):
            return ns.numpy.sin(x) * y if ns is jax else tz.sin(x) * y

        np_ = jnp if ns is jax else tz
        f.defjvps(lambda t, ans, x, y: np_.cos(x) * t * y, lambda t, ans, x, y: np_.sin(x) * t)
        return f

    x, y, t, u = r(3), r(3), r(3), r(3)
    ours, theirs = make(tz), make(jax)
    close(tz.jvp(ours, (x, y), (t, u)), lambda: jax.jvp(theirs, (x, y), (t, u)))
    close(tz.grad(lambda a, b: (ours(a, b) ** 2).sum(), argnums=(0, 1))(x, y),
          lambda: jax.grad(lambda a, b: (theirs(a, b) ** 2).sum(), argnums=(0, 1))(x, y))
    close(tz.hessian(lambda a: ours(a, y).sum())(x), lambda: jax.hessian(lambda a: theirs(a, y).sum())(x))

    @tz.custom_jvp
    def g(x, n):
        return x * n

    g.defjvps(lambda t, ans, x, n: t * n, None)
    close(tz.grad(lambda a: g(a, 3.0).sum())(x), np.full(3, 3.0))


def test_vjp_with_aux():
    def f(np_):
        return lambda x: (np_.sin(x) * x.sum(), {"n": x.sum(), "k": x * 2})

    x, ybar = r(4), r(4)
    y, pullback, aux = tz.vjp(f(tz), x, has_aux=True)
    jy, jpullback, jaux = jax.vjp(f(jnp), x, has_aux=True)
    close((y, pullback(ybar), aux), (jy, jpullback(ybar), jaux))
    inside = tz.jit(lambda x, ybar: tz.vjp(f(tz), x, has_aux=True)[1](ybar))
    close(inside(x, ybar), jpullback(ybar))


def test_jvp_through_convolution_and_softmax():
    x, w, tx, tw = r(2, 3, 6, 6), r(4, 3, 3, 3), r(2, 3, 6, 6), r(4, 3, 3, 3)
    close(tz.jvp(_tz_conv, (x, w), (tx, tw)), lambda: jax.jvp(_jax_conv, (x, w), (tx, tw)))
    w2, t2 = r(4, 7), r(4, 7)
    got = tz.jvp(lambda w: softmax_model(tz, tz.nn, w, X), (w2,), (t2,))
    want = jax.jvp(lambda w: softmax_model(jnp, jax.nn, w, X), (w2,), (t2,))
    close(got, want)


def test_linearize_matches_jvp():
    f = lambda np_: lambda x: np_.tanh(x) * x.sum()  # noqa: E731
    x, t1, t2 = r(4), r(4), r(4)
    y, f_jvp = tz.linearize(f(tz), x)
    jy, jf_jvp = jax.linearize(f(jnp), x)
    close(y, jy)
    close(f_jvp(t1), jf_jvp(t1))
    close(f_jvp(t2), jf_jvp(t2))


def test_jvp_of_grad_and_grad_of_jvp():
    x, t = r(5), r(5)

    def f(np_):
        return lambda x: (np_.sin(x) ** 2 * np_.exp(x[::-1])).sum()

    close(tz.jvp(tz.grad(f(tz)), (x,), (t,)), lambda: jax.jvp(jax.grad(f(jnp)), (x,), (t,)))
    got = tz.grad(lambda x: tz.jvp(f(tz), (x,), (t,))[1])(x)
    want = jax.grad(lambda x: jax.jvp(f(jnp), (x,), (t,))[1])(x)
    close(got, want)


def test_jvp_composes_with_jit_and_captures_traced_values():
    w = r(4)

    @tz.jit
    def step(x, t):
        return tz.jvp(lambda v: tz.exp(v * x).sum(), (w,), (t,))

    x, t = r(4), r(4)
    close(step(x, t), lambda: jax.jvp(lambda v: jnp.exp(v * x).sum(), (w,), (t,)))


# --------------------------------------------------------------------------- Jacobians


@pytest.mark.parametrize("kind", ["jacfwd", "jacrev"])
def test_jacobian_of_a_vector_function(kind):
    f = lambda np_: lambda x: np_.sin(x) * x.sum() + np_.tanh(x[::-1])  # noqa: E731
    x = r(6)
    close(getattr(tz, kind)(f(tz))(x), lambda: getattr(jax, kind)(f(jnp))(x))


@pytest.mark.parametrize("kind", ["jacfwd", "jacrev"])
def test_jacobian_with_argnums_tuples_and_pytrees(kind):
    def f(np_):
        return lambda p, x: {"out": mlp(np_, p, x), "norm": (x * x).sum(axis=1)}

    got = getattr(tz, kind)(f(tz), argnums=(0, 1))(PARAMS, X)
    want = getattr(jax, kind)(f(jnp), argnums=(0, 1))(PARAMS, X)
    close(got, want)


@pytest.mark.parametrize("kind", ["jacfwd", "jacrev"])
def test_jacobian_with_aux(kind):
    f = lambda np_: lambda x: (np_.exp(x) * 2.0, x.sum())  # noqa: E731
    x = r(3)
    close(getattr(tz, kind)(f(tz), has_aux=True)(x), lambda: getattr(jax, kind)(f(jnp), has_aux=True)(x))


def test_hessian_of_a_vector_argument():
    f = lambda np_: lambda x: (np_.sin(x) ** 2).sum() * np_.exp(x).sum()  # noqa: E731
    x = r(5)
    close(tz.hessian(f(tz))(x), lambda: jax.hessian(f(jnp))(x))


def test_hessian_of_matrix_arguments_and_argnums():
    def f(np_):
        return lambda w, x: (np_.tanh(x @ w) ** 2).sum()

    w = r(4, 3)
    close(tz.hessian(f(tz))(w, X), lambda: jax.hessian(f(jnp))(w, X))
    close(tz.hessian(f(tz), argnums=(0, 1))(w, X[:2]), lambda: jax.hessian(f(jnp), argnums=(0, 1))(w, X[:2]))


def test_jit_of_hessian():
    f = lambda np_: lambda x: (x ** 4).sum() + (x[:-1] * x[1:]).sum()  # noqa: E731
    h = tz.jit(tz.hessian(f(tz)))
    x = r(4)
    close(h(x), lambda: jax.hessian(f(jnp))(x))
    close(h(x + 1.0), lambda: jax.hessian(f(jnp))(x + 1.0))


def test_hessians_through_sort_max_and_gathers():
    idx = np.array([3, 0, 2, 2])

    def sort_loss(np_):
        return lambda x: (np_.sort(x) * np_.arange(1.0, 6.0)).sum() ** 2

    def max_loss(np_):
        return lambda x: np_.max(x * x, axis=1).sum() * x.sum()

    def gather_loss(np_):
        return lambda x: (np_.exp(x[idx]) * x[idx[::-1]]).sum()

    x = r(5)
    close(tz.hessian(sort_loss(tz))(x), lambda: jax.hessian(sort_loss(jnp))(x))
    m = r(3, 4)
    close(tz.hessian(max_loss(tz))(m), lambda: jax.hessian(max_loss(jnp))(m))
    close(tz.hessian(gather_loss(tz))(x), lambda: jax.hessian(gather_loss(jnp))(x))


def test_batched_reverse_mode_of_gathers_along_later_axes():
    """Their cotangents are batched scatters into a later dim, which IREE 3.13 rejected
    until tenzr-order-scatter-dims."""
    idx, i3 = np.array([4, 1, 1]), np.array([3, 0, 3, 2])
    m, t = r(3, 5), r(2, 4, 3)
    close(tz.jacrev(lambda m: m[:, idx])(m), lambda: jax.jacrev(lambda m: m[:, idx])(m))
    close(tz.jacrev(lambda t: tz.take(t, np.array([2, 0]), axis=2))(t),
          lambda: jax.jacrev(lambda t: jnp.take(t, np.array([2, 0]), axis=2))(t))

    def loss(np_):
        return lambda t: (np_.tanh(t[:, i3]) ** 2).sum()

    close(tz.hessian(loss(tz))(t), lambda: jax.hessian(loss(jnp))(t))
    close(tz.vmap(tz.grad(loss(tz)))(t[None].repeat(2, 0)),
          lambda: jax.vmap(jax.grad(loss(jnp)))(t[None].repeat(2, 0)))


def test_hessians_through_softmax_and_a_reciprocal_of_a_kept_sum():
    """IREE 3.13 reordered `negate(reshape(...))` wrongly inside its input conversion on these
    Hessians (a divide of a 5-vector by 5x1), until tenzr-elementwise-before-reshapes."""
    def reciprocal(np_):
        return lambda s: np_.sum(1.0 / np_.sum(s * s, keepdims=True))

    def mixed(np_, nn):
        return lambda s: np_.sum(nn.log_softmax(s)[:, 1] * nn.softmax(s)[:, 0])

    s, m = r(5), r(3, 4)
    close(tz.hessian(reciprocal(tz))(s), lambda: jax.hessian(reciprocal(jnp))(s))
    close(tz.hessian(lambda s: tz.nn.softmax(s)[0])(s), lambda: jax.hessian(lambda s: jax.nn.softmax(s)[0])(s))
    close(tz.hessian(mixed(tz, tz.nn))(m), lambda: jax.hessian(mixed(jnp, jax.nn))(m))
    close(tz.jacfwd(tz.jacfwd(mixed(tz, tz.nn)))(m), lambda: jax.jacfwd(jax.jacfwd(mixed(jnp, jax.nn)))(m))


def test_hessian_of_the_mlp_loss_against_finite_differences_of_its_gradient():
    x = r(4)
    params = {"w1": r(4, 5), "b1": r(5), "w2": r(5, 3)}

    def loss(w1):
        return mlp_loss(tz, {**params, "w1": w1}, x.reshape(1, 4))

    h = tz.hessian(loss)(params["w1"])
    g = tz.jit(tz.grad(loss))
    v = r(4, 5)
    step = 1e-5
    numeric = (g(params["w1"] + step * v) - g(params["w1"] - step * v)) / (2 * step)
    np.testing.assert_allclose(np.tensordot(h, v, axes=2), numeric, rtol=1e-6, atol=1e-8)


def test_meta_learning_gradient():
    # The gradient of the loss after one inner SGD step, with respect to the initial
    # weights (second order: the Hessian of the inner loss enters).
    def meta(np_, grad):
        def inner(w, x):
            return (np_.tanh(x @ w) ** 2).sum()

        def outer(w):
            adapted = w - 0.1 * grad(inner)(w, X)
            return inner(adapted, X[::-1] * 0.5)

        return outer

    w = r(4, 3)
    close(tz.grad(meta(tz, tz.grad))(w), lambda: jax.grad(meta(jnp, jax.grad))(w))
    close(tz.jvp(meta(tz, tz.grad), (w,), (w,)), lambda: jax.jvp(meta(jnp, jax.grad), (w,), (w,)))


# --------------------------------------------------------------------------- control flow


def _scan_loss(np_, lax_):
    def loss(w, h0):
        def step(h, x):
            h = np_.tanh(h @ w + x)
            return h, h.sum()

        h, ys = lax_.scan(step, h0, X[:, :3])
        return (h * h).sum() + ys.sum()

    return loss


def test_forward_mode_through_loops_and_conditionals():
    w, h0 = r(3, 3) * 0.5, r(3)
    close(tz.jvp(_scan_loss(tz, tz.lax), (w, h0), (w, h0)),
          lambda: jax.jvp(_scan_loss(jnp, jax.lax), (w, h0), (w, h0)))
    close(tz.hessian(_scan_loss(tz, tz.lax), argnums=1)(w, h0),
          lambda: jax.hessian(_scan_loss(jnp, jax.lax), argnums=1)(w, h0))

    def branchy(np_, lax_):
        return lambda x: lax_.cond(x.sum() > 0, lambda v: np_.sin(v) * v, lambda v: np_.exp(v), x)

    for x in (r(4), -np.abs(r(4))):
        close(tz.jacfwd(branchy(tz, tz.lax))(x), lambda x=x: jax.jacfwd(branchy(jnp, jax.lax))(x))

    def growing(np_, lax_):
        return lambda x: lax_.while_loop(lambda s: s[1] < 10.0,
                                         lambda s: (s[0] * 1.1 + np_.sin(s[0]), s[1] + (s[0] ** 2).sum() + 1),
                                         (x, x.sum()))[0]

    x, t = r(3), r(3)
    close(tz.jvp(growing(tz, tz.lax), (x,), (t,)), lambda: jax.jvp(growing(jnp, jax.lax), (x,), (t,)))


# --------------------------------------------------------------------------- custom rules


def _clipped_exp(np_):
    return lambda x: np_.exp(np_.minimum(x, 2.0))


def test_custom_jvp_is_used_by_jvp_and_transposed_by_grad():
    @tz.custom_jvp
    def f(x):
        return tz.exp(tz.minimum(x, 2.0))

    @f.defjvp
    def f_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        y = f(x)
        return y, y * t * 3.0  # not the true derivative: proves the rule is the one used

    @jax.custom_jvp
    def g(x):
        return jnp.exp(jnp.minimum(x, 2.0))

    @g.defjvp
    def g_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        y = g(x)
        return y, y * t * 3.0

    x, t = r(4) + 1.0, r(4)
    close(tz.jvp(f, (x,), (t,)), lambda: jax.jvp(g, (x,), (t,)))
    close(tz.grad(lambda x: f(x).sum())(x), lambda: jax.grad(lambda x: g(x).sum())(x))
    close(tz.hessian(lambda x: (f(x) * x).sum())(x), lambda: jax.hessian(lambda x: (g(x) * x).sum())(x))


def test_custom_vjp_under_jvp_is_a_clear_error():
    @tz.custom_vjp
    def f(x):
        return tz.sin(x)

    f.defvjp(lambda x: (tz.sin(x), x), lambda x, ct: (ct * tz.cos(x),))
    with pytest.raises(tz.TenzrError, match=r"forward mode.*custom VJP"):
        tz.jvp(f, (r(3),), (r(3),))


def test_bad_jvp_arguments_are_clear_errors():
    f = lambda x: x * 2.0  # noqa: E731
    with pytest.raises(tz.TenzrError, match="must be a tuple or a list"):
        tz.jvp(f, r(3), r(3))
    with pytest.raises(tz.TenzrError, match="tangent has shape"):
        tz.jvp(f, (r(3),), (r(4),))
    with pytest.raises(tz.TenzrError, match="dtype"):
        tz.jvp(f, (r(3),), (r(3).astype(np.float32),))
    with pytest.raises(tz.TenzrError, match="only floating-point outputs"):
        tz.jacfwd(lambda x: (x > 0).astype(np.int32))(r(3))


# --------------------------------------------------------------------------- the tools


@pytest.mark.parametrize("width", [0, 3])
def test_the_tools_push_tangents_through_a_gradient(tmp_path, width):
    """`--tenzr-grad=func=f wrt=1 --tenzr-jvp="func=f_grad wrt=1"` is a Hessian-vector
    product (forward over reverse); with width=3 and the identity's columns, the whole
    Hessian in one program; through tenzr-opt, tenzr-compile and tenzr-run. For
    f = Σ tanh(A w): ∇f = Aᵀ(1 - t²), H = Aᵀ diag(-2t(1 - t²)) A with t = tanh(A w)."""
    import subprocess
    import sys
    from pathlib import Path

    a, w = r(4, 3), r(3, 1)
    v = r(3, 1) if width == 0 else np.eye(3).reshape(3, 3, 1)
    (tmp_path / "f.mlir").write_text(HESSIAN_SRC)
    for i, x in enumerate([a, w, v]):
        np.save(tmp_path / f"in{i}.npy", x)
    tools = Path(sys.executable).parent
    commands = [
        [tools / "tenzr-opt", "f.mlir", "--tenzr-grad=func=f wrt=1", f"--tenzr-jvp=func=f_grad wrt=1 width={width}",
         "-o", "h.mlir"],
        [tools / "tenzr-compile", "h.mlir", "--target=cpu", "-o", "h.vmfb"],
        [tools / "tenzr-run", "h.vmfb", "--function", "f_grad_jvp", "--input", "in0.npy", "--input", "in1.npy",
         "--input", "in2.npy", "--output-dir", "out"],
    ]
    for command in commands:
        done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
    grad, hvp = (np.load(tmp_path / "out" / f"result{i}.npy") for i in range(2))
    t = np.tanh(a @ w)
    hessian = a.T @ np.diag((-2 * t * (1 - t ** 2))[:, 0]) @ a
    np.testing.assert_allclose(grad, a.T @ (1 - t ** 2), rtol=1e-12)
    want = hessian @ v if width == 0 else hessian.T.reshape(3, 3, 1)  # row k: H e_k
    np.testing.assert_allclose(hvp, want, rtol=1e-12, atol=1e-14)


# --------------------------------------------------------------------------- the benchmark models


def _benchmark_models():
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    from models import MODELS

    return {m.name: m for m in MODELS}


def _in_float64(tree):
    return jax.tree_util.tree_map(lambda a: np.asarray(a, np.float64) if np.asarray(a).dtype.kind == "f" else a, tree)


@pytest.mark.parametrize("name", ["MLP", "chain", "GMM"])
def test_hessian_vector_products_of_the_benchmark_models_against_finite_differences(name):
    model = _benchmark_models()[name]
    params, *data = _in_float64(model.make_inputs())

    def loss(p):
        return model.loss(tz, tz.nn, p, *data)

    tangent = jax.tree_util.tree_map(lambda a: rng.standard_normal(a.shape) * 1e-2, params)
    grad = tz.jit(tz.grad(loss))
    hvp = tz.jit(lambda p, t: tz.jvp(tz.grad(loss), (p,), (t,))[1])(params, tangent)
    step = 1e-4
    ahead = grad(jax.tree_util.tree_map(lambda a, t: a + step * t, params, tangent))
    behind = grad(jax.tree_util.tree_map(lambda a, t: a - step * t, params, tangent))
    numeric = jax.tree_util.tree_map(lambda a, b: (a - b) / (2 * step), ahead, behind)
    got, want = (np.concatenate([np.ravel(x) for x in jax.tree_util.tree_leaves(t)]) for t in (hvp, numeric))
    assert np.linalg.norm(got - want) <= 1e-6 * np.linalg.norm(want) + 1e-12


@pytest.mark.parametrize("name", ["CNN", "transformer"])
def test_hessian_vector_products_of_the_models_with_relu_match_jax(name):
    # (ReLU over many pre-activations puts kinks within any finite-difference step: on the
    # transformer, JAX's own HVP and central differences of its gradient differ by 0.14.)
    model = _benchmark_models()[name]
    import frameworks  # beside the models, on the path _benchmark_models adds

    params, *data = _in_float64(model.make_inputs())
    tangent = jax.tree_util.tree_map(lambda a: rng.standard_normal(a.shape) * 1e-2, params)
    got = tz.jit(lambda p, t: tz.jvp(tz.grad(lambda p: model.loss(tz, tz.nn, p, *data)), (p,), (t,))[1])(params,
                                                                                                       tangent)
    ops = frameworks._JaxOps(jax)
    want = jax.jvp(jax.grad(lambda p: model.loss(jnp, ops, p, *data)), (params,), (tangent,))[1]
    close(got, want, rtol=1e-9, atol=1e-14)


@pytest.mark.parametrize("name", ["MLP", "GMM"])
def test_jacobians_of_the_benchmark_models_gradients_against_finite_differences(name):
    # A block of the Hessian: the Jacobian of the gradient with respect to one small
    # parameter (the last bias; the GMM's mixture weights), both ways.
    model = _benchmark_models()[name]
    params, *data = _in_float64(model.make_inputs())
    key = (len(params) - 1, "b") if name == "MLP" else ("alphas",)

    def get(p):
        for k in key:
            p = p[k]
        return p

    def with_leaf(p, leaf):
        p = jax.tree_util.tree_map(lambda a: a, p)
        inner = p
        for k in key[:-1]:
            inner = inner[k]
        inner[key[-1]] = leaf
        return p

    def gradient_of_leaf(leaf):
        return get(tz.grad(lambda p: model.loss(tz, tz.nn, p, *data))(with_leaf(params, leaf)))

    leaf = get(params)
    forward, reverse = tz.jacfwd(gradient_of_leaf)(leaf), tz.jacrev(gradient_of_leaf)(leaf)
    g = tz.jit(gradient_of_leaf)
    step = 1e-5
    numeric = np.stack([(g(leaf + step * e) - g(leaf - step * e)) / (2 * step) for e in np.eye(leaf.size)], axis=-1)
    np.testing.assert_allclose(forward, numeric, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(reverse, numeric, rtol=1e-6, atol=1e-9)


def test_keyword_arguments_pass_through_every_transformation_as_in_jax():
    """grad, jacobians and hessian pass keyword arguments through undifferentiated; vmap maps
    them over their leading axis; custom_vjp, custom_jvp and checkpoint give them positions."""
    def f(np_):
        return lambda a, b, c=1.0: (np_.sin(a) * b * c).sum()

    x, y, xs, ys = r(3), r(3), r(2, 3), r(2, 3)
    for tz_t, jax_t in ((tz.grad, jax.grad), (tz.value_and_grad, jax.value_and_grad), (tz.jacfwd, jax.jacfwd),
                        (tz.hessian, jax.hessian)):
        close(tz_t(f(tz))(x, b=y, c=2.0), lambda jax_t=jax_t: jax_t(f(jnp))(x, b=y, c=2.0))
    close(tz.vmap(f(tz))(xs, b=ys), lambda: jax.vmap(f(jnp))(xs, b=ys))
    close(tz.vmap(f(tz), in_axes=(None,))(x, b=ys), lambda: jax.vmap(f(jnp), in_axes=(None,))(x, b=ys))

    def rules(np_, lib):
        @lib.custom_vjp
        def by_vjp(a, b):
            return np_.sin(a) * b

        by_vjp.defvjp(lambda a, b: (np_.sin(a) * b, (a, b)),
                      lambda res, g: (g * np_.cos(res[0]) * res[1], g * np_.sin(res[0])))

        @lib.custom_jvp
        def by_jvp(a, scale=2.0):
            return np_.exp(a) * scale

        by_jvp.defjvps(lambda t, ans, a, scale: t * ans, None)
        def kept_fn(a, b=None, *, unused=0.0):
            return (np_.sin(a) * b).sum() + unused

        kept = lib.checkpoint(kept_fn)
        return lambda a, b: (by_vjp(a, b=b) * by_jvp(a, scale=3.0)).sum() + kept(a, b=b)

    close(tz.grad(rules(tz, tz), argnums=(0, 1))(x, y), lambda: jax.grad(rules(jnp, jax), argnums=(0, 1))(x, y))


def test_custom_vjp_with_nondiff_argnums_as_in_jax():
    """A function argument and an integer power held out of differentiation: bwd takes
    them first and gives cotangents for the rest."""
    import functools

    def make(np_, lib):
        @functools.partial(lib.custom_vjp, nondiff_argnums=(0,))
        def twice(f, a):
            return f(a) * 2

        twice.defvjp(lambda f, a: (twice(f, a), a), lambda f, a, g: (g * 2 * np_.cos(a),))  # (f is sin)

        @functools.partial(lib.custom_vjp, nondiff_argnums=(1,))
        def power(a, k):
            return a ** k

        power.defvjp(lambda a, k: (a ** k, a), lambda k, a, g: (g * k * a ** (k - 1),))
        return lambda a: (twice(np_.sin, a) * power(a, 3)).sum()

    x = r(4)
    close(tz.grad(make(tz, tz))(x), lambda: jax.grad(make(jnp, jax))(x))
    close(tz.jit(tz.grad(make(tz, tz)))(x), lambda: jax.grad(make(jnp, jax))(x))
    close(make(tz, tz)(x), lambda: make(jnp, jax)(x))  # (called outside any trace: the function stays a function)

    def ordered(lib):
        @functools.partial(lib.custom_vjp, nondiff_argnums=(2, 0))
        def scaled(k, a, m):
            return a * k * m

        # (bwd takes k and m in argument order, as JAX's; its rule is wrong on purpose, to tell them apart)
        scaled.defvjp(lambda k, a, m: (a * k * m, None), lambda first, second, _, g: (g * (first + 10 * second),))
        return lambda a: scaled(3.0, a, 5.0).sum()

    close(tz.grad(ordered(tz))(x), lambda: jax.grad(ordered(jax))(x))
    close(tz.grad(ordered(tz))(x), np.full(4, 53.0))


def test_custom_jvp_with_nondiff_argnums_as_in_jax():
    """A function argument and two numbers held out of differentiation: the rule takes them
    first, in argument order, then the other arguments' primals and tangents; under grad,
    jit, vmap and jvp. (nondiff_argnums was refused.)"""
    import functools

    def make(np_, lib):
        @functools.partial(lib.custom_jvp, nondiff_argnums=(0,))
        def apply(f, a):
            return f(a)

        @apply.defjvp
        def apply_jvp(f, primals, tangents):
            return f(primals[0]), 2.0 * tangents[0]  # (a made-up derivative: the rule is what runs)

        @functools.partial(lib.custom_jvp, nondiff_argnums=(2, 1))
        def affine(a, n, m):
            return a * n + m

        @affine.defjvp
        def affine_jvp(first, second, primals, tangents):
            return affine(primals[0], first, second), tangents[0] * (first + 100 * second)

        return lambda a: (apply(np_.sin, a) * affine(a, 3.0, 1.0)).sum()

    x = r(4)
    close(tz.grad(make(tz, tz))(x), lambda: jax.grad(make(jnp, jax))(x))
    close(tz.jit(tz.grad(make(tz, tz)))(x), lambda: jax.grad(make(jnp, jax))(x))
    xs = r(2, 4)
    close(tz.vmap(tz.grad(make(tz, tz)))(xs), lambda: jax.vmap(jax.grad(make(jnp, jax)))(jnp.asarray(xs)))
    close(tz.jvp(make(tz, tz), (x,), (np.ones(4),)), lambda: jax.jvp(make(jnp, jax), (x,), (np.ones(4),)))
    close(make(tz, tz)(x), lambda: make(jnp, jax)(x))
