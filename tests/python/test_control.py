"""Loops and conditionals (`tz.lax.fori_loop`, `scan`, `while_loop`, `cond`, `switch`,
`tz.checkpoint`): values and gradients in float64 against JAX's own `jax.lax` (the test
extra's reference) or, where JAX cannot differentiate (a while loop), against the same loop
with its trip count found first, and against central differences."""

from __future__ import annotations

import importlib.util
import warnings
from pathlib import Path

import numpy as np
import pytest
from harness import rng_for

import tenzr as tz
from tenzr.dialect.diagnostics import TenzrError
from tenzr.passes.rules.control import TAPE_SLOTS

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp, lax = jax.numpy, jax.lax

rng = rng_for("control")
W = rng.standard_normal((4, 4)) * 0.5
XS = rng.standard_normal((7, 4))
H0 = rng.standard_normal(4)
LONG_XS = rng.standard_normal((50, 4)) * 0.1


def _assert_close(got, want, rtol=1e-10, atol=1e-12):
    got_leaves, want_leaves = jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)
    assert len(got_leaves) == len(want_leaves)
    for g, w in zip(got_leaves, want_leaves, strict=True):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=rtol, atol=atol)


def _same_as_jax(make, *args, argnums=0, jit=True):
    """value_and_grad of make(tz-namespace) against make(jax-namespace), JAX's under jax.jit
    unless jit=False (JAX run op by op compiles each op apart)."""
    ours = tz.value_and_grad(make(tz, tz.lax, tz.checkpoint), argnums=argnums)(*args)
    reference = jax.value_and_grad(make(jnp, lax, jax.checkpoint), argnums=argnums)
    theirs = (jax.jit(reference) if jit else reference)(*args)
    _assert_close(ours, theirs)


@pytest.mark.parametrize("reverse, unroll, steps", [(False, 1, 64), (True, 1, 67), (False, 3, 70)],
                         ids=["forward", "reversed_with_steps_left", "unrolled"])
def test_loops_writing_in_blocks_match_jax(monkeypatch, reverse, unroll, steps):
    """Loops that stack rows into large buffers run in blocks (tenzr-block-loop-writes; its
    threshold lowered here so that small buffers do too): a scan's outputs and its gradient's
    tape, forward and reversed, with iterations left over (67 and 23), unrolled."""
    from tenzr.passes import tenzr_block_loop_writes

    monkeypatch.setattr(tenzr_block_loop_writes, "MIN_BYTES", 0)
    xs = rng_for("blocked").standard_normal((steps, 4))

    def make(np_, lax_, ck):
        def loss(w, h0, xs):
            def step(h, x):
                for _ in range(12):  # (more than scan unrolls by itself)
                    h = np_.tanh(w @ h + x) * 0.5 + h * 0.5
                return h, h * 2.0

            carry, hs = lax_.scan(step, h0, xs, reverse=reverse, unroll=unroll)
            return (hs ** 2).sum() + carry.sum()

        return loss

    _same_as_jax(make, W, H0, xs, argnums=(0, 1, 2))


def rnn(np_, lax_, checkpoint, reverse=False):
    def loss(w, h0):
        def step(h, x):
            h = np_.tanh(w @ h + x)
            return h, (h * h).sum()

        carry, ys = lax_.scan(step, h0, XS, reverse=reverse)
        return (ys * np.arange(1.0, 8.0)).sum() + carry.sum()

    return loss


CASES = {
    "fori_loop": lambda np_, lax_, ck: lambda x: lax_.fori_loop(
        0, 5, lambda i, v: np_.sin(v) * v + 0.1 * i.astype(np.float64), x).sum(),
    "fori_loop_unrolled": lambda np_, lax_, ck: lambda x: lax_.fori_loop(
        0, 5, lambda i, v: np_.sin(v) * v + 0.1 * i.astype(np.float64), x, unroll=True).sum(),
    "fori_loop_two_steps_per_iteration": lambda np_, lax_, ck: lambda x: lax_.fori_loop(
        1, 6, lambda i, v: np_.cos(v) * v, x, unroll=2).sum(),
    "fori_loop_traced_bounds": lambda np_, lax_, ck: lambda x: lax_.fori_loop(
        np.int32(1), np.int32(4) + (x[0] > 10).astype(np.int32), lambda i, v: np_.cos(v) * x, x).sum(),
    "scan_rnn": lambda np_, lax_, ck: lambda w: rnn(np_, lax_, ck)(w, H0),
    "scan_reverse": lambda np_, lax_, ck: lambda w: rnn(np_, lax_, ck, reverse=True)(w, H0),
    "scan_pytree_carry_and_outputs": lambda np_, lax_, ck: lambda p: (lambda out: (
        out[0][0].sum() + out[0][1]["k"].sum() + out[1][0].sum() + out[1][1]["y"].sum()))(lax_.scan(
            lambda c, x: ((c[0] * x, {"k": c[1]["k"] + np_.sin(c[0])}), (c[0].sum(), {"y": x * c[1]["k"]})),
            (p["a"], {"k": p["b"]}), XS)),
    "scan_without_xs": lambda np_, lax_, ck: lambda x: lax_.scan(
        lambda c, _: (np_.tanh(W @ c), c[0]), x, None, length=6)[1].sum(),
    "nested_loops": lambda np_, lax_, ck: lambda x: lax_.fori_loop(
        0, 3, lambda i, v: lax_.fori_loop(0, 4, lambda j, u: np_.tanh(u * W[0] + v), v), x).sum(),
    "cond_inside_a_loop": lambda np_, lax_, ck: lambda x: lax_.fori_loop(0, 6, lambda i, v: lax_.cond(
        v.sum() > 0, lambda a: a * 0.9 - 0.3, lambda a: np_.sin(a) + 0.5, v), x).sum(),
    # (a scan whose body branches to a product: unrolled 8 steps per iteration, its gradient
    # failed to compile on IREE 3.13, "failed to solve for timepoint coverage")
    "cond_with_a_product_inside_a_scan": lambda np_, lax_, ck: lambda w: lax_.scan(
        lambda c, i: (lax_.cond(i < 3.0, lambda a: np_.tanh(a @ w), lambda a: a * 0.9, c), None), W,
        np.arange(16.0))[0].sum(),
    "loop_inside_a_cond": lambda np_, lax_, ck: lambda x: lax_.cond(
        x.sum() < 100, lambda a: lax_.fori_loop(0, 3, lambda i, v: np_.sin(v) * a, a), lambda a: a, x).sum(),
    "checkpoint_inside_a_scan": lambda np_, lax_, ck: lambda w: lax_.scan(
        ck(lambda h, x: (np_.tanh(w @ h + x), h.sum())), H0, XS)[1].sum(),
    "checkpoint_of_straight_line_code": lambda np_, lax_, ck: lambda x: ck(
        lambda a: np_.sin(np_.exp(a) * W[0]) * a)(x).sum(),
}


@pytest.mark.parametrize("name", list(CASES))
def test_value_and_grad_match_jax(name):
    arg = {"scan_rnn": W, "scan_reverse": W, "checkpoint_inside_a_scan": W, "cond_with_a_product_inside_a_scan": W,
           "scan_pytree_carry_and_outputs": {"a": H0, "b": H0 * 2}}.get(name, H0)
    # (JAX reverse-differentiates a fori_loop only with bounds it knows, not traced by jax.jit)
    _same_as_jax(CASES[name], arg, jit=name != "fori_loop_traced_bounds")


def test_scan_gradient_with_respect_to_the_initial_carry_and_the_weights():
    _same_as_jax(rnn, W, H0, argnums=(0, 1))


@pytest.mark.parametrize("pred", [True, False])
def test_cond_differentiates_the_branch_taken(pred):
    x = np.abs(H0) if pred else -np.abs(H0)
    _same_as_jax(lambda np_, lax_, ck: lambda a: lax_.cond(
        a.sum() > 0, lambda b: np_.sin(b) * b * W[1], lambda b: np_.exp(b) * W[2], a).sum(), x)


@pytest.mark.parametrize("index", [-1, 0, 1, 2, 7])
def test_switch_clamps_its_index_as_jax(index):
    def make(np_, lax_, ck):
        branches = [lambda a: a * a, lambda a: np_.sin(a), lambda a: a * W[0]]
        return lambda x: lax_.switch(index, branches, x).sum()

    _same_as_jax(make, H0)


def _body(np_):
    return lambda c: (c[0] * 0.999 + 0.01 * np_.sin(c[0]), c[1] + 0.01 + 0.001 * np_.abs(c[0]).sum())


@pytest.mark.parametrize("limit", [0.0, 3.0, 30.0])
def test_while_loop_with_a_data_dependent_trip_count(limit):
    """The reference is the same loop as a fori_loop of the trip count found first (JAX
    does not reverse-differentiate while_loop). 30.0 takes 1,539 iterations: more than the
    tape's slots, so the adjoint recomputes carries from every s-th stored one."""
    def ours(x):
        return tz.lax.while_loop(lambda c: c[1] < limit, _body(tz), (x, np.float64(0.0)))[0].sum()

    carry, trips = (H0, 0.0), 0
    while carry[1] < limit:
        carry = tuple(np.asarray(v) for v in _body(np)(carry))
        trips += 1
    assert (trips > TAPE_SLOTS) == (limit == 30.0)

    def reference(x):
        return lax.fori_loop(0, trips, lambda i, c: _body(jnp)(c), (x, 0.0))[0].sum()

    _assert_close(tz.value_and_grad(ours)(H0), jax.value_and_grad(reference)(H0))


def test_euler_integrator_under_vjp():
    def make(np_, lax_):
        def solve(y0, k):
            def step(y, _):
                return y + 0.01 * (-k * y + np_.sin(y)), None
            return lax_.scan(step, y0, None, length=50)[0]
        return solve

    ybar = rng.standard_normal(4)
    y, pullback = tz.vjp(make(tz, tz.lax), H0, np.float64(0.7))
    y_jax, pullback_jax = jax.vjp(make(jnp, lax), H0, 0.7)
    _assert_close(y, y_jax)
    _assert_close(pullback(ybar), pullback_jax(ybar))


def test_jit_of_value_and_grad_of_a_scan():
    f = tz.jit(tz.value_and_grad(rnn(tz, tz.lax, tz.checkpoint), argnums=(0, 1)))
    _assert_close(f(W, H0), jax.value_and_grad(rnn(jnp, lax, jax.checkpoint), argnums=(0, 1))(W, H0))


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("unroll", [2, 3, True, 100])
def test_scan_unrolled_matches_jax(unroll, reverse):
    """Several steps per loop iteration, with a remainder after the loop (7 = 2·3 + 1)."""
    def make(np_, lax_, ck):
        def loss(w):
            carry, ys = lax_.scan(lambda h, x: (np_.tanh(w @ h + x), h * x), H0, XS, reverse=reverse, unroll=unroll)
            return (ys * np.arange(28.0).reshape(7, 4)).sum() + carry.sum()
        return loss

    _same_as_jax(make, W)


@pytest.mark.parametrize(("steps", "hidden", "every"), [(37, 4, 5), (1000, 64, 16)])
def test_scan_checkpointed_every_k_steps_matches_jax(steps, hidden, every):
    """`checkpoint_every` (Tenzr's own) keeps every k-th carry and runs each segment again:
    the gradient is JAX's (which keeps them all). 37 steps: segments of eight-step
    iterations with steps left over; 1,000 steps, hidden 64: the adjoint on which IREE's
    memoized command buffers failed at run time (compiler.NO_MEMOIZATION)."""
    xs = rng.standard_normal((steps, hidden)) * 0.5
    w, h0 = rng.standard_normal((hidden, hidden)) / np.sqrt(hidden), rng.standard_normal(hidden)

    def make(np_, lax_, **options):
        def loss(w):
            def step(h, x):
                h = np_.tanh(w @ h + x)
                return h, (h * h).sum()
            return lax_.scan(step, h0, xs, **options)[1].sum()
        return loss

    checkpointed = tz.jit(tz.grad(make(tz, tz.lax, checkpoint_every=every)))
    assert "stablehlo.while" in checkpointed.lower(w).split("do {", 1)[1]  # (its segments' loops)
    _assert_close(checkpointed(w), jax.grad(make(jnp, lax))(w))


@pytest.mark.parametrize("batch_size", [None, 1, 3, 7, 10])
def test_map_matches_jax(batch_size):
    """`lax.map` over a pytree of xs, its value and its gradient: 7 rows in steps of 3
    leave one row for the vmapped call after the loop; 10 is more than there are."""
    xs = {"a": XS, "b": XS[:, :1] * 2}

    def make(np_, lax_, ck):
        def loss(w):
            ys = lax_.map(lambda x: np_.tanh(w @ x["a"]) * x["b"], xs, batch_size=batch_size)
            return (ys * np.arange(28.0).reshape(7, 4)).sum()
        return loss

    _same_as_jax(make, W)


def test_map_batch_size_must_be_a_positive_int():
    with pytest.raises(TenzrError, match="batch_size must be a positive int, got 0"):
        tz.lax.map(lambda x: x, XS, batch_size=0)


def test_scan_whose_body_iree_folds_to_constants_matches_jax():
    """A one-step scan from ones, no xs: IREE folds the adjoint loop's invariant carries and
    full-size slices into constants, and miscompiled the two sums of its body when
    tenzr-merge-reductions had made them one reduce (1.0 for 3.0)."""
    def make(np_, lax_, ck):
        def loss(a):
            _, ys = lax_.scan(lambda c, _: (c * a, c * a), np.ones(3), None, length=1)
            return ys.sum()
        return loss

    _same_as_jax(make, np.float64(0.9))


@pytest.mark.parametrize("steps", [17, 33])
def test_gradient_of_a_scalar_scan_with_a_step_past_its_blocks_matches_jax(steps):
    """A scalar carry's scan runs in blocks of eight steps; the step left over is differentiated
    outside the adjoint loop, its cotangent added to the loop's result. IREE 3.13's stream
    partitioner ordered that in a cycle with the loop ("circular dependency"), and the module
    did not compile; it does with the loop's results behind a barrier
    (tenzr-barrier-loop-results)."""
    def make(np_, lax_, ck):
        def loss(w):
            return lax_.scan(lambda c, _: (np_.tanh(w * c + 0.3), None), np.float64(0.1), None, length=steps)[0]
        return loss

    _same_as_jax(make, np.float64(0.9))


def test_checkpoint_every_must_be_a_positive_int():
    with pytest.raises(TenzrError, match="checkpoint_every must be a positive int, got 0"):
        tz.jit(lambda x: tz.lax.scan(lambda c, r: (c + r, c), x[0], x, checkpoint_every=0))(XS)


@pytest.mark.parametrize("reverse", [False, True])
def test_indexed_loop_remainder_steps_under_x64(x64, reverse):
    """With 64-bit default ints, the steps after the unrolled loop (50 = 6·8 + 2) still
    pass the body the int32 index it was traced with."""
    def make(np_, lax_, ck):
        def loss(w):
            carry, ys = lax_.scan(lambda h, x: (np_.tanh(w @ h + x[0]), h.sum() * x[1]), H0,
                                  (LONG_XS, np.linspace(0, 1, 50)), reverse=reverse)
            return carry.sum() + ys.sum() + lax_.fori_loop(0, 50, lambda i, v: v * w[0] * 0.99, H0).sum()
        return loss

    _same_as_jax(make, W)
    forward = tz.jit(make(tz, tz.lax, tz.checkpoint))(W)
    np.testing.assert_allclose(forward, make(jnp, lax, jax.checkpoint)(W), rtol=1e-12)


@pytest.mark.parametrize("carry", [1.5, np.linspace(0.5, 1.5, 3)], ids=["scalar", "vector"])
def test_loop_index_in_float64_arithmetic(x64, carry):
    """A 0-d integer converted to float64 inside a loop: IREE runs it in its host VM, which
    cannot convert integers to float64, so tenzr-expand-math builds it from float32 parts."""
    def make(np_, lax_, ck):
        return lambda c: lax_.fori_loop(0, 50, lambda i, v: v * 0.99 + np_.sin(v) * i * 0.001, c).sum()

    _same_as_jax(make, np.asarray(carry, np.float64))


def test_scalar_integers_become_the_float64_numpy_makes(x64):
    """The float32-parts conversion is exact for every i32 and rounds i64 as NumPy does."""
    as_float = tz.jit(lambda i: i.astype(tz.float64))
    values = [np.int32(v) for v in (0, -1, 4095, 4096, -4097, 123456789, 2**31 - 1, -2**31)] + \
             [np.int64(v) for v in (2**53 + 1, -(2**53) - 3, 987654321987654321, 2**63 - 1, -2**63, -5)]
    for value in values:
        assert as_float(value) == np.float64(value), value


def test_second_derivative_through_a_loop():
    """The adjoint loop is a stablehlo.while, which tenzr-grad differentiates again."""
    def f(t):
        return tz.lax.fori_loop(0, 4, lambda i, v: tz.sin(v) * t, t)

    def f_jax(t):
        return lax.fori_loop(0, 4, lambda i, v: jnp.sin(v) * t, t)

    t = np.float64(0.8)
    np.testing.assert_allclose(tz.grad(tz.grad(f))(t), jax.grad(jax.grad(f_jax))(t), rtol=1e-10)


def test_a_loop_that_does_not_touch_the_argument_gives_zeros():
    def f(x, y):
        return x.sum() + tz.lax.fori_loop(0, 3, lambda i, v: v * 2.0, y).sum()

    g = tz.grad(f, argnums=(0, 1))(H0, H0)
    _assert_close(g, (np.ones(4), np.full(4, 8.0)))


def test_a_loop_trip_count_does_not_change_the_compiled_program_size():
    """1,600 steps compile to the same loop as 16 (the module text has one size)."""
    def text(steps):
        xs = np.zeros((steps, 4))
        return tz.jit(tz.grad(lambda w: tz.lax.scan(lambda h, x: (tz.tanh(w @ h + x), h.sum()), H0, xs)[1]
                                 .sum())).lower(W)

    short, long = text(16), text(1600)
    assert len(long.splitlines()) == len(short.splitlines())


# --------------------------------------------------------------------------- errors


def _traced_error(fn, *args) -> str:
    with pytest.raises(TenzrError) as info:
        tz.jit(fn)(*args)
    return str(info.value)


def test_body_that_changes_the_carry_type_is_a_clear_error():
    message = _traced_error(lambda x: tz.lax.fori_loop(0, 3, lambda i, v: v.sum(), x), H0)
    assert "tz.lax.fori_loop: body_fun's output must have the same structure and types" in message


def test_unroll_needs_int_bounds():
    message = _traced_error(lambda x: tz.lax.fori_loop(0, x.shape[0] + (x[0] > 0).astype(np.int32), lambda i, v: v, x,
                                                        unroll=2), H0)
    assert "tz.lax.fori_loop: unroll needs Python int bounds" in message


def test_while_condition_must_be_a_boolean_scalar():
    message = _traced_error(lambda x: tz.lax.while_loop(lambda v: v, lambda v: v, x), H0)
    assert "cond_fun must return a boolean scalar" in message


def test_scan_body_must_return_a_pair():
    message = _traced_error(lambda x: tz.lax.scan(lambda c, x: c, x, XS), H0)
    assert "f must return a pair (carry, y)" in message


def test_branches_must_agree():
    message = _traced_error(lambda x: tz.lax.cond(x.sum() > 0, lambda a: a, lambda a: a.sum(), x), H0)
    assert "every branch must return the same structure and types: false_fun returns tensor<f64>, true_fun returns " \
        "tensor<4xf64>" in message
    message = _traced_error(lambda x: tz.lax.switch(1, [lambda a: a, lambda a: a.sum()], x), H0)
    assert "branch 0 returns tensor<4xf64>, branch 1 returns tensor<f64>" in message


def test_python_if_on_a_traced_value_names_lax_cond():
    def f(x):
        if x.sum() > 0:
            return x
        return -x

    assert "tz.lax.cond" in _traced_error(f, H0)


def test_eager_calls_run_compiled():
    out = tz.lax.fori_loop(0, 3, lambda i, v: v * 2.0, H0)
    np.testing.assert_allclose(out, H0 * 8)


def test_the_rnn_example_learns():
    """examples/rnn.py trains with tz.lax.scan: its loss falls by more than 10x."""
    path = Path(__file__).parents[2] / "examples" / "rnn.py"
    spec = importlib.util.spec_from_file_location("rnn_example", path)
    assert spec is not None and spec.loader is not None
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    losses = example.train(steps=80, length=20, target="cpu", log=lambda line: None)
    assert losses[-1] < losses[0] / 10



def test_python_number_carries_take_the_body_type_as_in_jax():
    """`(x, 0.0)`: the 0.0 becomes float64 when the body makes it so (JAX promotes weakly
    typed carries and traces again). The while loop's reference is a fori_loop of its trip
    count (JAX does not reverse-differentiate while loops)."""
    c, trips = (H0, 0.0), 0
    while c[1] < 3.0:
        c, trips = (c[0] * 1.1, c[1] + np.abs(c[0]).sum() * 0.3), trips + 1

    def make(np_, lax_, ck):
        def body(c):
            return c[0] * 1.1, c[1] + np_.abs(c[0]).sum() * 0.3

        def loss(x):
            if lax_ is tz.lax:
                a = lax_.while_loop(lambda c: c[1] < 3.0, body, (x, 0.0))[0].sum()
            else:
                a = lax_.fori_loop(0, trips, lambda i, c: body(c), (x, 0.0))[0].sum()
            b = lax_.scan(lambda c, xt: (c + (xt * x).sum(), c), 0.0, XS)[0]
            return a + b + lax_.fori_loop(0, 3, lambda i, c: c + x.sum() * i, 0.0)
        return loss

    _same_as_jax(make, H0)


def test_loops_and_conditionals_run_on_vulkan():
    from tenzr.runtime import device_available

    if not device_available("vulkan"):
        pytest.skip("no Vulkan device (install Mesa's lavapipe: apt-get install mesa-vulkan-drivers)")
    w, xs, h0 = W.astype(np.float32), XS.astype(np.float32), np.zeros(4, np.float32)

    def loss(w):
        c, ys = tz.lax.scan(lambda h, x: (tz.tanh(w @ h + x), (h * h).sum()), h0, xs)
        kept = tz.lax.cond(c.sum() > 0, lambda a: a.sum(), lambda a: (a * a).sum(), c)
        looped = tz.lax.while_loop(lambda v: v[1] < 5, lambda v: (v[0] * 0.9 + w[0], v[1] + 1), (h0, np.int32(0)))
        return ys.sum() + kept + looped[0].sum()

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # (lavapipe emulates a GPU, slowly)
        on_vulkan = tz.grad(loss, target="vulkan")(w)
    np.testing.assert_allclose(on_vulkan, tz.grad(loss)(w), rtol=2e-5, atol=2e-6)


def test_python_number_carries_take_the_bodys_type_as_jax(x64):
    """With x64, a carry started from a Python number is weakly typed: a body adding float32
    arrays to it makes it float32 (JAX traces the body again), in scan, fori_loop and
    while_loop, eagerly and jitted (where the number arrives as an argument)."""
    xs = np.ones(3, np.float32)

    def loops(np_, lax_):  # (the float32 values as arrays: Tenzr types NumPy's scalars weakly)
        return [lambda s: lax_.scan(lambda c, x: (c + x, c), s, xs),
                lambda s: lax_.fori_loop(0, 3, lambda i, c: c + np_.asarray(xs)[i], s),
                lambda s: lax_.while_loop(lambda c: c < 2.0, lambda c: c + np_.asarray(xs[:1]).sum(), s)]

    for ours, theirs in zip(loops(tz, tz.lax), loops(jnp, lax), strict=True):
        want = jax.tree_util.tree_map(lambda a: a.dtype, theirs(0.0))
        assert jax.tree_util.tree_map(lambda a: a.dtype, ours(0.0)) == want
        assert jax.tree_util.tree_map(lambda a: a.dtype, tz.jit(ours)(0.0)) == want
        _assert_close(ours(0.0), theirs(0.0))


def test_gradient_of_a_scan_body_a_thousand_ops_deep_is_derived():
    """The adjoint's dependency analysis walked a loop body's uses recursively: a body 1,400
    ops deep (a long scan step, or a short one unrolled) overflowed Python's stack."""
    def loss(c):
        def step(h, _):
            for _ in range(700):
                h = h * 0.999 + 0.001
            return h, h
        return tz.lax.scan(step, c, None, length=4)[1].sum()

    assert "stablehlo.while" in tz.jit(tz.grad(loss)).lower(np.linspace(0.0, 1.0, 4))


def test_disable_jit_runs_jitted_functions_and_loops_as_python_as_jax():
    def program(np_, lax_, seen):
        def f(x, n):
            def body(i, v):
                seen.append(float(v.sum()))  # (a value, not a tracer: only without jit)
                return v * 2 + i

            y = lax_.fori_loop(0, n, body, x)
            z = lax_.cond(y.sum() > 10, lambda a: a + 1, lambda a: a - 1, y)
            c, ys = lax_.scan(lambda c, x: (c + x, c * x), 0.0, np_.arange(4.0), reverse=True)
            w = lax_.while_loop(lambda v: v < 100, lambda v: v * 3, 1.0)
            s = lax_.switch(5, [lambda a: a, lambda a: -a], z)
            return z, c, ys, w, s
        return f

    x = np.ones(3, np.float32)
    seen, jax_seen = [], []
    with tz.disable_jit():
        got = tz.jit(program(tz, tz.lax, seen), static_argnums=1)(x, 3)
        assert tz.config.jax_disable_jit
    jax.config.update("jax_enable_x64", False)  # (as tz here)
    try:
        with jax.disable_jit():
            want = jax.jit(program(jax.numpy, jax.lax, jax_seen), static_argnums=1)(x, 3)
    finally:
        jax.config.update("jax_enable_x64", True)
    assert not tz.config.jax_disable_jit
    assert seen == jax_seen == [3.0, 6.0, 15.0]
    for g, w in zip(tz.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want), strict=True):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))
        assert np.asarray(g).dtype == np.asarray(w).dtype and np.shape(g) == np.shape(w)
    tz.config.update("jax_disable_jit", True)
    try:
        assert tz.jit(lambda v: type(v))(x) is np.ndarray  # (the argument as given, untraced)
        # (JAX refuses a scan of no steps here; its stacked outputs' types come from tracing)
        _, empty = tz.lax.scan(lambda c, x: (c, c * x), np.float32(1), np.zeros((0, 2), np.float32))
        assert empty.shape == (0, 2) and empty.dtype == np.float32
    finally:
        tz.config.update("jax_disable_jit", False)


def test_scan_unrolls_bodies_by_their_size_and_keeps_the_steps_values():
    """Left at unroll=1, a body of 80 ops runs 4 steps per iteration, one of 130 two, one of
    over 512 one (AUTO_UNROLL_OPS); the values are NumPy's."""
    def stepper(depth):
        def step(h, x):
            for _ in range(depth):
                h = h * h * 0.3 + 0.1
            return tz.cos(h) + x, h.sum()
        return step

    xs = np.linspace(0, 1, 36, dtype=np.float32).reshape(12, 3)
    for depth, copies in ((15, 4), (25, 2), (200, 1)):
        program = tz.jit(lambda xs, depth=depth: tz.lax.scan(stepper(depth), tz.zeros(3), xs))
        assert program.lower(xs).count("stablehlo.cosine") == copies, depth
    h, sums = np.zeros(3, np.float32), []
    for x in xs:
        for _ in range(15):
            h = h * h * np.float32(0.3) + np.float32(0.1)
        sums.append(h.sum())
        h = np.cos(h) + x
    carry, ys = tz.jit(lambda xs: tz.lax.scan(stepper(15), tz.zeros(3), xs))(xs)
    np.testing.assert_allclose(carry, h, rtol=1e-6)
    np.testing.assert_allclose(ys, sums, rtol=1e-6)


def test_checkpoint_passes_keyword_arguments_keyword_only_ones_too():
    """As jax.checkpoint: keyword arguments (keyword-only ones too) pass through, and are
    differentiated like the positional ones. (They were refused: 'could not be given positions'.)"""
    def loss(x, *, k):
        return tz.exp(x * k).sum()

    def jax_loss(x, *, k):
        return jnp.exp(x * k).sum()

    x = np.array([0.5, -1.0])
    _assert_close(tz.grad(tz.checkpoint(loss))(x, k=2.0), jax.grad(jax.checkpoint(jax_loss))(x, k=2.0))
    _assert_close(tz.grad(lambda k: tz.checkpoint(loss)(x, k=k))(np.float64(1.5)),
                  jax.grad(lambda k: jax.checkpoint(jax_loss)(x, k=k))(np.float64(1.5)))
