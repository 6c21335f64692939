"""`tz.vmap` against `jax.vmap` in float64 (JAX is the test extra's reference; without it
these tests skip): axes, pytrees, nesting, and composition with grad, jvp and jit."""

from __future__ import annotations

import numpy as np
import pytest
from harness import close

import tenzr as tz

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy

rng = np.random.default_rng(11)


def r(*shape: int) -> np.ndarray:
    return rng.standard_normal(shape)


def both(make, *args, **kwargs):
    """tz.vmap(make(tz)) and jax.vmap(make(jnp)) on args, compared."""
    close(tz.vmap(make(tz, tz), **kwargs)(*args), lambda: jax.vmap(make(jnp, jax), **kwargs)(*args))


def test_elementwise_with_none_and_axis_1():
    def make(np_, _):
        return lambda x, y: np_.sin(x) * y + np_.exp(-x * x)

    both(make, r(4, 3), r(3), in_axes=(0, None))
    both(make, r(3, 4), r(3, 4), in_axes=(1, 1))
    both(make, r(4, 3), r(4, 3), out_axes=1)


def test_reductions_softmax_and_matmul():
    def make(np_, lib):
        return lambda x, w: lib.nn.softmax(x @ w, axis=-1).max(axis=0) + (x * x).sum()

    both(make, r(5, 2, 3), r(3, 4), in_axes=(0, None))
    both(make, r(5, 2, 3), r(5, 3, 4))


def test_indexing_gathers_with_batched_indices():
    idx = np.array([[0, 2, 1], [1, 1, 0], [2, 0, 0], [1, 2, 2]])
    x = r(4, 3)
    close(tz.vmap(lambda x, i: x[i] * 2.0)(x, idx), lambda: jax.vmap(lambda x, i: x[i] * 2.0)(x, idx))
    close(tz.vmap(lambda x, i: tz.take_along_axis(x, i, axis=0))(x, idx),
          lambda: jax.vmap(lambda x, i: jnp.take_along_axis(x, i, axis=0))(x, idx))


def test_dynamic_slice_with_batched_starts():
    x, starts = r(4, 6), np.array([0, 2, 3, 1])
    got = tz.vmap(lambda x, s: tz.lax.dynamic_slice(x, [s], [3]))(x, starts)
    want = jax.vmap(lambda x, s: jax.lax.dynamic_slice(x, [s], [3]))(x, starts)
    close(got, want)


def test_sort_argmax_and_scatter_add():
    def make(np_, _):
        return lambda x: np_.sort(x) + np_.argmax(x).astype(np.float64)

    both(make, r(5, 4))
    idx = np.array([[0], [2], [0]])
    x, u = r(4, 3), r(4, 3)
    got = tz.vmap(lambda x, u: tz.lax.scatter_add(x, idx, u, tz.lax.ScatterDimensionNumbers((), (0,), (0,))))(x, u)
    want = jax.vmap(lambda x, u: x.at[idx[:, 0]].add(u))(x, u)
    close(got, want)


def test_convolution():
    def tz_conv(x, w):
        return tz.nn.conv(x, w, padding=1)

    def jax_conv(x, w):
        return jax.lax.conv_general_dilated(x, w, (1, 1), ((1, 1), (1, 1)))

    x, w = r(3, 2, 2, 5, 5), r(4, 2, 3, 3)
    close(tz.vmap(tz_conv, in_axes=(0, None))(x, w), lambda: jax.vmap(jax_conv, in_axes=(0, None))(x, w))
    ws = r(3, 4, 2, 3, 3)
    close(tz.vmap(tz_conv)(x, ws), lambda: jax.vmap(jax_conv)(x, ws))


def test_nested_vmap_and_dict_pytrees():
    def make(np_, _):
        return lambda p, x: {"y": np_.tanh(x @ p["w"] + p["b"]), "n": (x * x).sum()}

    p = {"w": r(3, 2), "b": r(2)}
    both(make, p, r(5, 3), in_axes=({"w": None, "b": None}, 0))
    x = r(4, 6, 3)
    got = tz.vmap(tz.vmap(make(tz, tz), in_axes=(None, 0)), in_axes=(None, 1))(p, x)
    close(got, lambda: jax.vmap(jax.vmap(make(jnp, jax), in_axes=(None, 0)), in_axes=(None, 1))(p, x))


def _loss(np_):
    def loss(w, x, y):
        return ((np_.tanh(x @ w) - y) ** 2).sum()

    return loss


def test_per_example_gradients_match_jax_and_a_loop():
    w, xs, ys = r(3, 2), r(6, 1, 3), r(6, 1, 2)
    got = tz.vmap(tz.grad(_loss(tz)), in_axes=(None, 0, 0))(w, xs, ys)
    close(got, lambda: jax.vmap(jax.grad(_loss(jnp)), in_axes=(None, 0, 0))(w, xs, ys))
    loop = np.stack([tz.grad(_loss(tz))(w, xs[k], ys[k]) for k in range(6)])
    close(got, loop)


def test_jit_of_vmap_of_value_and_grad_and_grad_of_a_vmapped_loss():
    w, xs, ys = r(3, 2), r(6, 1, 3), r(6, 1, 2)
    step = tz.jit(tz.vmap(tz.value_and_grad(_loss(tz)), in_axes=(None, 0, 0)))
    close(step(w, xs, ys), lambda: jax.vmap(jax.value_and_grad(_loss(jnp)), in_axes=(None, 0, 0))(w, xs, ys))

    def total(np_, lib):
        return lambda w: lib.vmap(_loss(np_), in_axes=(None, 0, 0))(w, xs, ys).sum()

    close(tz.grad(total(tz, tz))(w), lambda: jax.grad(total(jnp, jax))(w))


def test_vmap_of_jvp_and_of_a_loop():
    x, ts = r(4), r(5, 4)
    got = tz.vmap(lambda t: tz.jvp(lambda v: tz.sin(v) * v, (x,), (t,))[1])(ts)
    close(got, lambda: jax.vmap(lambda t: jax.jvp(lambda v: jnp.sin(v) * v, (x,), (t,))[1])(ts))

    def make(np_, lib):
        return lambda x: lib.lax.fori_loop(0, 3, lambda i, v: np_.sin(v) * 1.5, x)

    both(make, r(5, 4))


def test_bad_vmap_arguments_are_clear_errors():
    with pytest.raises(tz.TenzrError, match="inconsistent sizes"):
        tz.vmap(lambda a, b: a + b)(r(3, 2), r(4, 2))
    with pytest.raises(tz.TenzrError, match="out of range"):
        tz.vmap(lambda a: a, in_axes=2)(r(3, 2))
    with pytest.raises(tz.TenzrError, match="in_axes has 1 entries"):
        tz.vmap(lambda a, b: a + b, in_axes=(0,))(r(3), r(3))


def _loops(lowered: str) -> int:
    return lowered.count("stablehlo.while")


def test_vmap_of_a_scan_batches_its_carry_and_keeps_its_counter():
    w, h0, xs = r(3, 3) * 0.5, r(6, 3), r(6, 5, 3)

    def make(np_, lib):
        def rnn(h, seq):
            return lib.lax.scan(lambda c, x: (np_.tanh(c @ w + x), c.sum()), h, seq)
        return rnn

    both(make, h0, xs)
    # One loop (the scan's, its counter unbatched), not one per batch element around it.
    assert _loops(tz.jit(tz.vmap(make(tz, tz))).lower(h0, xs)) == 1

    def per_example(np_, lib):
        def loss(w_, h, seq):
            return lib.lax.scan(lambda c, x: (np_.tanh(c @ w_ + x), None), h, seq)[0].sum()
        return lib.vmap(lib.grad(loss), in_axes=(None, 0, 0))

    close(per_example(tz, tz)(w, h0, xs), lambda: per_example(jnp, jax)(w, h0, xs))


def test_vmap_of_a_while_loop_whose_condition_depends_on_the_element():
    def make(np_, lib):
        # doubles x until it passes the limit: 0 to 9 iterations per element
        return lambda x, limit: lib.lax.while_loop(lambda c: c[0] < limit, lambda c: (c[0] * 2.0, c[1] + 1),
                                                   (x, 0))

    x = np.abs(r(7)) + 0.01
    limits = np.array([0.0, 0.5, 1.0, 2.0, 3.0, 10.0, 0.1])
    both(make, x, limits)
    both(make, x, 2.5, in_axes=(0, None))
    # d/dx of x·2^k is 2^k, k each element's own count (JAX has no reverse mode through a while_loop)
    counts = [next(k for k in range(60) if v * 2.0**k >= lim) for v, lim in zip(x, limits, strict=True)]
    grads = tz.vmap(tz.grad(lambda x, lim: make(tz, tz)(x, lim)[0]))(x, limits)
    close(grads, 2.0 ** np.array(counts))
    close(tz.grad(lambda x: tz.vmap(make(tz, tz))(x, limits)[0].sum())(x), 2.0 ** np.array(counts))


def test_vmap_of_cond_and_switch_with_batched_and_unbatched_predicates():
    def cond(np_, lib):
        return lambda p, x: lib.lax.cond(p > 0, lambda v: np_.sin(v) * p, lambda v: np_.cos(v) - p, x)

    p, x = r(6), r(6, 3)
    both(cond, p, x)                         # the predicate varies with the element
    both(cond, 0.5, x, in_axes=(None, 0))    # it does not: one branch runs, batched
    assert _loops(tz.jit(tz.vmap(cond(tz, tz), in_axes=(None, 0))).lower(0.5, x)) == 0

    def switch(np_, lib):
        return lambda i, x: lib.lax.switch(i, [lambda v: v * 2.0, np_.sin, lambda v: v.sum() + v], x)

    both(switch, np.array([-3, 0, 1, 2, 5, 1]), x)
    both(switch, 1, x, in_axes=(None, 0))

    def captured(np_, lib):  # the branches and the loop body capture a batched value
        return lambda a, x: lib.lax.fori_loop(0, 4, lambda i, v: lib.lax.cond(i < 2, lambda u: u * a,
                                                                                lambda u: u + a, v), x)

    both(captured, r(6, 3), x)
    both(captured, r(3), x, in_axes=(None, 0))
    a = r(6, 3)
    close(tz.vmap(tz.grad(lambda a, x: captured(tz, tz)(a, x).sum()))(a, x),
          lambda: jax.vmap(jax.grad(lambda a, x: captured(jnp, jax)(a, x).sum()))(a, x))


def test_unmapped_python_numbers_stay_numbers():
    """As JAX's vmap, an unmapped (in_axes None) Python number is a number where the function
    needs one (a slice bound, a Python branch), eager and inside jit (static there)."""
    x = r(3, 5)

    def make(xp, _):
        def f(row, n, double):
            head = xp.sum(row[:n])
            return head * 2 if double else head
        return f

    for n, double in [(2, True), (4, False)]:
        both(make, x, n, double, in_axes=(0, None, None))
    close(tz.jit(tz.vmap(make(tz, tz), in_axes=(0, None, None)), static_argnums=(1, 2))(x, 3, True),
          lambda: jax.vmap(make(jnp, jax), in_axes=(0, None, None))(x, 3, True))


def test_vmap_of_custom_rules_and_checkpoint_and_their_gradients():
    """A call kept whole for its custom rule (custom_vjp, custom_jvp, checkpoint) runs per
    element; the ops after it, one or two such calls deep, still find its batched results."""
    def make(np_, lib):
        @lib.custom_vjp
        def f(a):
            return np_.sin(a) * a

        f.defvjp(lambda a: (np_.sin(a) * a, a), lambda a, g: (g * (np_.cos(a) * a + np_.sin(a)),))

        @lib.custom_jvp
        def h(a):
            return np_.exp(a) * 2

        h.defjvps(lambda t, ans, a: t * ans)
        kept = lib.checkpoint(lambda b: np_.sin(b).sum())
        return lambda a: (f(f(a)) + h(a)).sum() * kept(a)

    x = r(3, 4)
    # (JAX's references run op by op here: under jax.jit, JAX 0.10's custom_vjp rejects x as a
    # closed-over constant, "non-canonical constant of type ndarray")
    close(tz.vmap(make(tz, tz))(x), jax.vmap(make(jnp, jax))(x))
    close(tz.vmap(tz.grad(make(tz, tz)))(x), jax.vmap(jax.grad(make(jnp, jax)))(x))
    close(tz.grad(lambda a: tz.vmap(make(tz, tz))(a).sum())(x),
          jax.grad(lambda a: jax.vmap(make(jnp, jax))(a).sum())(x))


def test_vmap_of_the_gradient_of_a_scan_through_a_custom_jvp_matches_jax():
    """A custom_jvp call on the carry of a scan: its gradient calls the function again on the
    carry's primal, the batch runs each call per element, and the first call's loop is read
    only through the ops before the second's (it was left unerased, "tenzr-batch left a use
    of argument 2")."""
    def make(np_, lib):
        @lib.custom_jvp
        def slog(x):
            return np_.log(x)

        slog.defjvp(lambda p, t: (slog(p[0]), t[0] / p[0]))
        return lib.grad(lambda a: lib.lax.scan(lambda c, x: (slog(c + 2.) * a, None), 0.0, np.arange(1.0, 4.0))[0])

    both(make, np.array([1.5, 2.0]))


def test_axis_size_alone_stacks_the_same_results_as_jax():
    x = r(1, 2)
    for out_axes in (0, 1, -1):
        both(lambda np_, _: lambda s: np_.sin(s) * 2, x, in_axes=None, axis_size=3, out_axes=out_axes)
    close(tz.grad(lambda w: tz.vmap(lambda s: (s * w).sum(), in_axes=None, axis_size=4)(x).sum())(np.float64(2.0)),
          lambda: jax.grad(lambda w: jax.vmap(lambda s: (s * w).sum(), in_axes=None, axis_size=4)(x).sum())(
              np.float64(2.0)))
