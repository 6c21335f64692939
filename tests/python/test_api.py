"""The transformations: pytrees, has_aux, composition, custom rules, errors, the cache."""

from __future__ import annotations

import collections
import itertools
import os
import subprocess
import sys
import threading

import numpy as np
import pytest
from harness import rng_for

import tenzr as tz
from tenzr.dialect.ir_imports import ir
from tenzr.passes import stablehlo as sh
from tenzr.passes.custom_ops import CUSTOM_OPS

H = 1e-6


def numeric_grad(f, x):
    """Central differences of scalar NumPy function `f` at float64 `x`."""
    g = np.zeros_like(x)
    for i in np.ndindex(*x.shape):
        step = np.zeros_like(x)
        step[i] = H
        g[i] = (f(x + step) - f(x - step)) / (2 * H)
    return g


def mlp_loss(params, x, y):
    h = tz.tanh(x @ params["w1"] + params["b1"])
    logits = h @ params["w2"] + params["b2"]
    return -(tz.nn.log_softmax(logits) * y).sum() / x.shape[0]


def mlp_loss_np(params, x, y):
    h = np.tanh(x @ params["w1"] + params["b1"])
    logits = h @ params["w2"] + params["b2"]
    m = logits.max(axis=1, keepdims=True)
    logp = logits - m - np.log(np.exp(logits - m).sum(axis=1, keepdims=True))
    return -(logp * y).sum() / x.shape[0]


@pytest.fixture(scope="module")
def mlp():
    rng = rng_for("mlp")
    params = {"w1": rng.standard_normal((4, 5)), "b1": rng.standard_normal(5), "w2": rng.standard_normal((5, 3)),
              "b2": rng.standard_normal(3)}
    x = rng.standard_normal((6, 4))
    y = np.eye(3)[rng.integers(0, 3, 6)]
    return params, x, y


def test_grad_of_dict_params_matches_finite_differences(mlp):
    params, x, y = mlp
    grads = tz.grad(mlp_loss)(params, x, y)
    assert set(grads) == set(params)
    for name, value in params.items():
        def f(v, name=name):
            return mlp_loss_np({**params, name: v}, x, y)

        assert grads[name].shape == value.shape and grads[name].dtype == np.float64
        np.testing.assert_allclose(grads[name], numeric_grad(f, value), rtol=1e-6, atol=1e-8)


def test_value_and_grad_argnums_tuple(mlp):
    params, x, y = mlp
    value, (g_params, g_x) = tz.value_and_grad(mlp_loss, argnums=(0, 1))(params, x, y)
    assert value.shape == () and value.dtype == np.float64
    np.testing.assert_allclose(value, mlp_loss_np(params, x, y), rtol=1e-12)
    np.testing.assert_allclose(g_x, numeric_grad(lambda v: mlp_loss_np(params, v, y), x), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(g_params["b2"], tz.grad(mlp_loss)(params, x, y)["b2"], rtol=1e-12)


def test_lists_tuples_namedtuples_and_none():
    Pair = collections.namedtuple("Pair", "a b")

    def f(p, extra):
        (u, v), pair, _ = p
        return (u * v).sum() + (pair.a ** 3).sum() - pair.b * 2.0 + extra["k"][0].sum()

    p = ([np.ones(2), np.arange(2.0)], Pair(np.array([1.0, 2.0]), np.float64(3.0)), None)
    extra = {"k": [np.full(3, 0.5)]}
    (gu, gv), pair, none = tz.grad(f)(p, extra)
    assert none is None and isinstance(pair, Pair)
    np.testing.assert_allclose(gu, [0.0, 1.0])
    np.testing.assert_allclose(gv, [1.0, 1.0])
    np.testing.assert_allclose(pair.a, [3.0, 12.0])
    np.testing.assert_allclose(pair.b, -2.0)
    np.testing.assert_allclose(tz.grad(f, argnums=1)(p, extra)["k"][0], np.ones(3))
    x = np.array([1.0, 2.0])
    assert tz.grad(lambda empty, a: (a * a).sum())({}, x) == {}  # (nothing to differentiate)
    value, (empty, g) = tz.value_and_grad(lambda empty, a: (a * a).sum(), argnums=(0, 1))([], x)
    assert empty == [] and float(value) == 5.0
    np.testing.assert_allclose(g, 2 * x)


def test_allow_int_and_donation_are_jax_keywords():
    """grad(allow_int=True) gives an integer input a zero gradient instead of an error; jit's
    donation keywords are accepted and leave the arguments as they were."""
    x, n = np.array([1.0, 2.0]), np.int32(3)
    g, gn = tz.grad(lambda a, k: (a * k).sum(), argnums=(0, 1), allow_int=True)(x, n)
    np.testing.assert_allclose(g, [3.0, 3.0])
    assert gn == 0 and gn.dtype == np.int32
    with pytest.raises(tz.TenzrError, match="cannot differentiate with respect to an input of dtype int32"):
        tz.grad(lambda a, k: (a * k).sum(), argnums=(0, 1))(x, n)
    doubled = tz.jit(lambda a: a * 2, donate_argnums=0, donate_argnames="a", keep_unused=True, inline=True)
    np.testing.assert_allclose(doubled(x), [2.0, 4.0])
    np.testing.assert_allclose(x, [1.0, 2.0])


def test_has_aux():
    def f(x):
        y = tz.sin(x)
        return (y * y).sum(), {"y": y, "n": x.shape[0]}

    x = np.array([0.3, -1.2])
    g, aux = tz.grad(f, has_aux=True)(x)
    np.testing.assert_allclose(g, 2 * np.sin(x) * np.cos(x), rtol=1e-12)
    np.testing.assert_allclose(aux["y"], np.sin(x), rtol=1e-12)
    assert int(aux["n"]) == 2
    (value, aux2), g2 = tz.value_and_grad(f, has_aux=True)(x)
    np.testing.assert_allclose(aux2["y"], aux["y"])
    np.testing.assert_allclose(value, np.sum(np.sin(x) ** 2), rtol=1e-12)
    np.testing.assert_allclose(g2, g)


def test_vjp_multi_output_with_random_cotangents():
    def f(a, b):
        return {"p": a * b, "q": tz.exp(a).sum(), "r": [a @ b.T]}

    rng = rng_for("vjp")
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((2, 3))
    out, pullback = tz.vjp(f, a, b)
    np.testing.assert_allclose(out["p"], a * b)
    ct = {"p": rng.standard_normal((2, 3)), "q": rng.standard_normal(()), "r": [rng.standard_normal((2, 2))]}
    ga, gb = pullback(ct)

    def scalar(a_, b_):
        return np.sum(ct["p"] * a_ * b_) + ct["q"] * np.exp(a_).sum() + np.sum(ct["r"][0] * (a_ @ b_.T))

    np.testing.assert_allclose(ga, numeric_grad(lambda v: scalar(v, b), a), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(gb, numeric_grad(lambda v: scalar(a, v), b), rtol=1e-6, atol=1e-8)


def test_vjp_of_integer_input_gives_zeros():
    out, pullback = tz.vjp(lambda x, n: x * n, np.ones(2), np.array([2, 3], np.int32))
    np.testing.assert_allclose(out, [2.0, 3.0])
    gx, gn = pullback(np.ones(2))
    np.testing.assert_allclose(gx, [2.0, 3.0])
    assert gn.dtype == np.int32 and not gn.any()
    out, pullback = tz.vjp(lambda n: n * 2, np.array([2, 3], np.int32))  # (no float input at all)
    (gn,) = pullback(np.ones(2, np.int32))
    assert gn.dtype == np.int32 and not gn.any()


def test_transformations_compose():
    def f(x):
        return (tz.tanh(x) ** 2).sum()

    x = np.linspace(-1, 1, 5)
    g = tz.grad(f)(x)
    np.testing.assert_allclose(tz.jit(tz.grad(f))(x), g, rtol=1e-12)
    np.testing.assert_allclose(tz.grad(tz.jit(f))(x), g, rtol=1e-12)
    step = tz.jit(lambda x: x - 0.1 * tz.grad(f)(x))
    np.testing.assert_allclose(step(x), x - 0.1 * g, rtol=1e-12)
    np.testing.assert_allclose(g, numeric_grad(lambda v: np.sum(np.tanh(v) ** 2), x), rtol=1e-6)


def test_grad_closing_over_outer_traced_arrays(mlp):
    """The usual training step: grad of a closure over the batch, inside jit."""
    params, x, y = mlp
    step = tz.jit(lambda p, x, y: tz.value_and_grad(lambda p: mlp_loss(p, x, y))(p))
    value, grads = step(params, x, y)
    np.testing.assert_allclose(value, mlp_loss_np(params, x, y), rtol=1e-12)
    for name, v in params.items():
        np.testing.assert_allclose(grads[name], numeric_grad(lambda u, n=name: mlp_loss_np({**params, n: u}, x, y), v),
                                   rtol=1e-6, atol=1e-8)


def test_closures_nest_and_reach_vjp():
    a = np.linspace(0.5, 1.5, 4)
    w = np.linspace(-1.0, 1.0, 4)
    ct = np.array([1.0, -2.0, 0.5, 3.0])

    def outer(a, w, ct):
        def inner(w):  # closes over `a` and `ct`, and its inner grad does too
            g = tz.grad(lambda u: (a * u * u * ct).sum())(a)
            return (tz.sin(w * a) * ct).sum() + (g * w).sum()  # g = 2 a^2 ct, constant in w
        _, pullback = tz.vjp(lambda v: tz.exp(v * a), w)
        return tz.grad(inner)(w), pullback(ct)[0]

    g, pulled = tz.jit(outer)(a, w, ct)
    np.testing.assert_allclose(g, numeric_grad(lambda v: np.sum(np.sin(v * a) * ct + 2 * a * a * ct * v), w), rtol=1e-6)
    np.testing.assert_allclose(pulled, numeric_grad(lambda v: np.sum(np.exp(v * a) * ct), w), rtol=1e-6)


def test_error_escaped_tracer_and_custom_vjp_closure():
    leaked = []
    tz.jit(lambda x: leaked.append(x) or x)(np.ones(2))
    with pytest.raises(tz.TenzrError, match="used outside the function that traced it"):
        tz.jit(lambda x: x + leaked[0])(np.ones(2))

    def f(x, y):
        @tz.custom_vjp
        def scaled(v):
            return v * y

        scaled.defvjp(lambda v: (scaled(v), None), lambda _, c: (c * y,))
        return scaled(x).sum()

    with pytest.raises(tz.TenzrError, match="custom_vjp function 'scaled' uses traced arrays"):
        tz.jit(tz.grad(f))(np.ones(2), np.ones(2))


def test_scalar_and_dtype_results():
    out = tz.jit(lambda x: (x.sum(), x.astype(np.int32), x > 0, x.astype(np.float16)))(np.array([1.5, -2.0],
                                                                                                np.float32))
    assert out[0].shape == () and out[0].dtype == np.float32
    assert out[1].dtype == np.int32 and out[2].dtype == np.bool_ and out[3].dtype == np.float16
    assert tz.jit(lambda x: x * 2)(3.0).dtype == np.float32  # Python floats trace as float32


def test_cpu_inputs_are_used_in_place_yet_results_never_alias_them():
    """On CPU the callers' arrays are handed to IREE without a copy: unaligned views are
    copied first, and an input passed straight through comes back as a copy."""
    x = np.arange(1001, dtype=np.float32)
    view = x[1:]  # 4 bytes past a 16-byte boundary
    assert view.ctypes.data % 16 == 4
    out = tz.jit(lambda a: (a, a * 1.0, a[::-1], a[2:10]))(view)
    for result, expected in zip(out, (view, view, view[::-1], view[2:10]), strict=True):
        np.testing.assert_array_equal(result, expected)
    x64, flags = np.linspace(-1, 1, 6).reshape(2, 3), np.array([True, False, True])
    same, mask, empty = tz.jit(lambda a, m, e: (a, m, e + 1))(x64, flags, np.zeros((0, 3), np.float32))
    assert not any(np.shares_memory(r, a) for r in (*out, same, mask) for a in (x, x64, flags))
    same[0, 0] = 5.0
    assert x64[0, 0] == -1.0
    np.testing.assert_array_equal(mask, flags)
    assert empty.shape == (0, 3)
    _, reflection = tz.jit(lambda a: a * 2.0).compiled(x).program.function("main")
    assert reflection.get("tenzr.inputs") == "in-place"


@pytest.mark.parametrize("op", ["scatter", "dynamic_update_slice", "sort"])
def test_ops_iree_runs_in_place_leave_the_callers_inputs_alone(op):
    """IREE 3.13 writes these ops' results into their operand's buffer, even when that is a
    function input (iree-org/iree#16168): such modules get copies of the inputs."""
    x = np.arange(12, dtype=np.float32)[::-1].reshape(4, 3).copy()
    before = x.copy()
    f = {"scatter": lambda a: a.at[np.array([0, 2])].add(np.ones((2, 3), np.float32)),
         "dynamic_update_slice": lambda a: tz.lax.dynamic_update_slice(a, np.zeros((1, 3), np.float32), [1, 0]),
         "sort": lambda a: tz.sort(a, axis=1)}[op]
    jitted = tz.jit(f)
    for _ in range(2):
        out = jitted(x)
    np.testing.assert_array_equal(x, before)
    assert not np.array_equal(out, before)
    _, reflection = jitted.compiled(x).program.function("main")
    assert "tenzr.inputs" not in reflection


def test_cpu_programs_run_on_both_iree_cpu_drivers_with_the_same_results():
    """A CPU program called often is timed on IREE's task system and on its synchronous
    driver, then runs on the faster: every call gives NumPy's answer whichever ran it, and
    the results of one driver stay intact while the other runs."""
    rng = rng_for("both-drivers")
    f = tz.jit(lambda a, b: (a @ b, tz.tanh(a).sum(axis=0)))
    kept = []
    for _ in range(20):
        a, b = rng.standard_normal((6, 5)).astype(np.float32), rng.standard_normal((5, 4)).astype(np.float32)
        kept.append(((a, b), f(a, b)))
    for (a, b), (product, total) in kept:
        np.testing.assert_allclose(product, a @ b, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(total, np.tanh(a).sum(axis=0), rtol=1e-5, atol=1e-6)
    assert {"local-task", "local-sync"} <= set(f.compiled(*kept[0][0]).program._loaded)


def _drive(choice, cost, calls: int) -> list[str]:
    """The drivers `choice` picks for `calls` calls costing `cost(driver, call number)`."""
    ran = []
    for _ in range(calls):
        driver = choice.next()
        ran.append(driver)
        choice.record(driver, cost(driver, len(ran)))
    return ran


def test_the_faster_cpu_driver_runs_and_both_are_measured_again():
    from tenzr.runtime import CPU_DRIVERS, _DriverChoice

    task, sync = CPU_DRIVERS
    choice = _DriverChoice(sample=_unknown_load)
    measuring = sum(_DriverChoice.PROBES.values()) + 1  # (one more synchronous call warms it up)
    first_sync = []

    def cost(driver, n):
        if driver == sync and not first_sync:
            first_sync.append(n)
            return 5.0  # (a slow first call)
        return {task: 1.0, sync: 0.5}[driver]

    ran = _drive(choice, cost, _DriverChoice.FIRST + measuring + _DriverChoice.RUN)
    measured = ran[_DriverChoice.FIRST:_DriverChoice.FIRST + measuring]
    assert ran[:_DriverChoice.FIRST] == [task] * _DriverChoice.FIRST
    assert measured.count(task) == _DriverChoice.PROBES[task] and measured.count(sync) == _DriverChoice.PROBES[sync] + 1
    assert measured[:3] == [task, sync, task]  # (spread among the task system's calls)
    assert set(ran[-_DriverChoice.RUN:]) == {sync}
    # The machine changed: measured again, the task system wins.
    _drive(choice, lambda d, n: {task: 0.2, sync: 0.5}[d], measuring)
    assert choice.next() == task


def test_a_driver_dropped_after_a_failed_call_is_not_used_again():
    from tenzr.runtime import CPU_DRIVERS, _DriverChoice

    task, sync = CPU_DRIVERS
    choice = _DriverChoice(sample=_unknown_load)
    assert choice.next() == task and choice.drop(task)
    assert set(_drive(choice, lambda d, n: {task: 0.1, sync: 1.0}[d], 2 * _DriverChoice.RUN)) == {sync}
    assert not choice.drop(sync)


def test_a_task_system_slowed_now_and_then_keeps_running():
    """Beside another framework's threads three in ten calls on the task system take 2.5
    times as long; the synchronous driver, steadily slower than the task system's usual
    time, stays unused. (The median of four probes each chose it on these times.)"""
    from tenzr.runtime import CPU_DRIVERS, _DriverChoice

    task = CPU_DRIVERS[0]
    slow = itertools.cycle([False, False, False, True, True, False, False, False, True, False])
    choice = _DriverChoice(sample=_unknown_load)
    ran = _drive(choice, lambda d, n: (6.6 if next(slow) else 2.6) if d == task else 4.4, 40)
    assert ran[-10:] == [task] * 10


def test_a_task_system_whose_times_spread_gives_way_to_a_steadier_synchronous_driver():
    """An RNN gradient's thousands of tiny dispatches spread the task system's times: some
    calls beat the synchronous driver, most do not, and the synchronous driver runs."""
    from tenzr.runtime import CPU_DRIVERS, _DriverChoice

    task, sync = CPU_DRIVERS
    spread = itertools.cycle([3.5, 3.6, 4.0, 4.4, 4.7, 5.0, 6.0, 3.7])
    ran = _drive(_DriverChoice(sample=_unknown_load), lambda d, n: next(spread) if d == task else 3.8, 40)
    assert ran[-10:] == [sync] * 10


def test_beside_busy_processes_the_driver_faster_on_average_runs_after_a_few_calls():
    """With other processes keeping all but half a core busy, a step of many small dispatches
    on the task system now takes 2 ms (both workers ran), now 7 ms (one waited for its core),
    and the steady synchronous driver, faster on average, runs though a quantile of the
    task system's times is lower; a step of a few large products keeps the task system. Both
    are chosen after a few calls on each driver. Once the other processes stop, the choice
    goes back to the quantile."""
    from tenzr.runtime import CPU_DRIVERS, _DriverChoice, _usable_cores

    task, sync = CPU_DRIVERS
    clock = {"busy": 0.0, "own": 0.0, "wall": 0.0, "others": _usable_cores() - 0.5}

    def sample():  # each call a second later, this process busy on one core, others on `others`
        clock["wall"] += 1.0
        clock["own"] += 1.0
        clock["busy"] += 1.0 + clock["others"]
        return clock["busy"], clock["own"], clock["wall"]

    # (and the synchronous driver's warm-up call, and the task system's first timed call, made
    # before the load was known, which does not count)
    few = _DriverChoice.FIRST + 2 * _DriverChoice.BUSY_PROBES + 2
    split = itertools.cycle([2.0, 7.0])
    small = _DriverChoice(sample=sample)
    ran = _drive(small, lambda d, n: next(split) if d == task else 3.2, few + 10)
    assert ran[-10:] == [sync] * 10 and ran.count(task) == _DriverChoice.FIRST + _DriverChoice.BUSY_PROBES + 1
    large = _DriverChoice(sample=sample)
    assert _drive(large, lambda d, n: {task: 14.5, sync: 24.0}[d], few + 10)[-10:] == [task] * 10
    clock["others"] = 0.0
    rest = _drive(small, lambda d, n: next(split) if d == task else 3.2, _DriverChoice.RUN - 10 + 40)
    assert rest[-10:] == [task] * 10


def test_calls_made_before_the_machine_was_known_busy_do_not_count_for_the_task_system():
    """The machine's load is known only after SHORTEST_WINDOW seconds of timed calls. Until
    then the caller waits for the task system giving way, which beside busy processes takes
    12 ms where polling takes 5; those calls do not count once the load is known, and the
    task system, faster than the synchronous driver's 7 ms when polling, runs."""
    from tenzr.runtime import CPU_DRIVERS, _DriverChoice, _usable_cores

    task, sync = CPU_DRIVERS
    clock = {"busy": 0.0, "own": 0.0, "wall": 0.0}
    step = _DriverChoice.SHORTEST_WINDOW / 4

    def sample():  # each call `step` later, this process on one core, others on all but half a core
        clock["wall"] += step
        clock["own"] += step
        clock["busy"] += step * _usable_cores() + step / 2
        return clock["busy"], clock["own"], clock["wall"]

    choice = _DriverChoice(sample=sample)

    def cost(driver, n):
        if driver == sync:
            return 7.0
        return 5.0 if choice.waiting(task) == "poll" else 12.0

    ran = _drive(choice, cost, 40)
    assert choice.busy and ran[-10:] == [task] * 10


def _busy_machine(others: dict[str, float]):
    """A machine sample for `_DriverChoice`: each call a second later, this process busy on
    one core, other processes on `others["cores"]` (which a test may change)."""
    from tenzr.runtime import _usable_cores

    clock = {"busy": 0.0, "own": 0.0, "wall": 0.0}
    others.setdefault("cores", _usable_cores() - 0.5)

    def sample():
        clock["wall"] += 1.0
        clock["own"] += 1.0
        clock["busy"] += 1.0 + others["cores"]
        return clock["busy"], clock["own"], clock["wall"]

    return sample


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2 if hasattr(os, "sched_getaffinity") else False,
                    reason="on one core anything else running counts as busy")
def test_beside_busy_processes_the_task_system_runs_on_its_device_with_more_workers():
    """Beside busy processes the BUSY_TASK device stands in for the task system's own one:
    measured against the synchronous driver, it runs where its calls are faster on average.
    On a quiet machine it is never called, however fast (its extra workers slowed quiet
    steps)."""
    from tenzr.runtime import BUSY_TASK, CPU_DRIVERS, _DriverChoice

    task, sync = CPU_DRIVERS
    costs = {task: 6.0, BUSY_TASK: 4.0, sync: 8.0}
    others: dict[str, float] = {}
    choice = _DriverChoice((task, sync, BUSY_TASK), sample=_busy_machine(others))
    ran = _drive(choice, lambda d, n: costs[d], 40)
    assert choice.busy and ran[-10:] == [BUSY_TASK] * 10
    assert task not in ran[_DriverChoice.FIRST + 1:]  # (the first timed call came before the load was known)
    costs[BUSY_TASK] = 9.0
    assert _drive(choice, lambda d, n: costs[d], _DriverChoice.RUN + 40)[-10:] == [sync] * 10
    costs[BUSY_TASK] = 4.0
    others["cores"] = 0.0  # (the other processes stopped)
    ran = _drive(choice, lambda d, n: costs[d], _DriverChoice.RUN + 60)
    assert not choice.busy and ran[-10:] == [task] * 10
    assert BUSY_TASK not in ran[_DriverChoice.RUN:]
    quiet = _DriverChoice((task, sync, BUSY_TASK), sample=_unknown_load)
    assert BUSY_TASK not in _drive(quiet, lambda d, n: costs[d], 2 * _DriverChoice.RUN)


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2 if hasattr(os, "sched_getaffinity") else False,
                    reason="on one core anything else running counts as busy")
def test_beside_busy_processes_close_means_are_measured_over_twice_as_many_calls():
    """Beside one busy process the BUSY_TASK device's calls spread wide: its first eight
    average 5.5 ms against the synchronous driver's steady 5.0, within CLOSE, and the next
    eight 3.0. The choice waits for sixteen calls of each and takes the busy device (its
    mean 4.25 ms); means as far apart as CLOSE and more are chosen on eight."""
    from tenzr.runtime import BUSY_TASK, CPU_DRIVERS, _DriverChoice

    task, sync = CPU_DRIVERS
    calls = {BUSY_TASK: 0}

    def cost(driver, n):
        if driver != BUSY_TASK:
            return 5.0
        calls[BUSY_TASK] += 1  # (the first, a warm-up before the load was known, does not count)
        return 5.5 if calls[BUSY_TASK] <= 1 + _DriverChoice.BUSY_PROBES else 3.0

    choice = _DriverChoice((task, sync, BUSY_TASK), sample=_busy_machine({}))
    ran = _drive(choice, cost, _DriverChoice.FIRST + 4 * _DriverChoice.BUSY_PROBES + 20)
    assert choice.busy and ran[-10:] == [BUSY_TASK] * 10
    assert ran.count(sync) == 2 * _DriverChoice.BUSY_PROBES + 1
    apart = _DriverChoice((task, sync, BUSY_TASK), sample=_busy_machine({}))
    ran = _drive(apart, lambda d, n: 5.0 if d == sync else 5.0 * _DriverChoice.CLOSE + 0.1, 60)
    assert ran[-10:] == [sync] * 10 and ran.count(BUSY_TASK) == _DriverChoice.BUSY_PROBES + 1


def test_calls_timed_before_other_processes_started_do_not_count_once_they_did():
    """The synchronous driver's calls on a quiet machine took 1 ms; beside the busy
    processes that started midway through the probes they take 8, and the task system's
    busy device 5.5: the choice goes by calls timed beside them only. (Keeping the quiet
    calls chose the synchronous driver in one of three benchmark runs.)"""
    from tenzr.runtime import BUSY_TASK, CPU_DRIVERS, _DriverChoice, _usable_cores

    task, sync = CPU_DRIVERS
    clock = {"busy": 0.0, "own": 0.0, "wall": 0.0, "calls": 0}

    def sample():  # quiet for the first 20 timed calls, then the other processes take every core
        clock["calls"] += 1
        clock["wall"] += 1.0
        clock["own"] += 1.0
        clock["busy"] += 1.0 + (100 * _usable_cores() if clock["calls"] > 20 else 0.0)
        return clock["busy"], clock["own"], clock["wall"]

    choice = _DriverChoice((task, sync, BUSY_TASK), sample=sample)

    def cost(driver, n):
        if driver == sync:
            return 8.0 if choice.busy else 1.0
        return 5.5 if choice.busy else 2.0

    ran = _drive(choice, cost, 60)
    assert choice.busy and ran[-10:] == [BUSY_TASK] * 10


def test_a_worker_count_set_for_the_process_opens_no_device_with_more_workers(monkeypatch):
    """`tz.distributed.init` shares a host's cores among its ranks (`set_cpu_threads`):
    then no rank takes more of them beside busy processes."""
    from tenzr import runtime

    monkeypatch.setattr(runtime, "_cores_shared", False)
    monkeypatch.setattr(runtime, "_busy_task_refused", False)
    monkeypatch.setattr(runtime, "_usable_cores", lambda: 2)
    assert runtime.BUSY_TASK in runtime.cpu_devices()
    monkeypatch.setattr(runtime, "_cores_shared", True)
    assert runtime.cpu_devices() == runtime.CPU_DRIVERS


def test_a_process_on_one_core_opens_no_device_with_more_workers(monkeypatch):
    """On one core anything else running makes the machine busy (`_DriverChoice._busy`),
    and more workers there would only share that core."""
    from tenzr import runtime

    monkeypatch.setattr(runtime, "_cores_shared", False)
    monkeypatch.setattr(runtime, "_busy_task_refused", False)
    monkeypatch.setattr(runtime, "_usable_cores", lambda: 1)
    assert runtime.cpu_devices() == runtime.CPU_DRIVERS


def test_a_failed_call_on_the_task_system_drops_both_of_its_devices():
    from tenzr.runtime import BUSY_TASK, CPU_DRIVERS, _DriverChoice

    task, sync = CPU_DRIVERS
    choice = _DriverChoice((task, sync, BUSY_TASK), sample=_busy_machine({}))
    assert choice.drop(task) and choice.drivers == (sync,)


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2 if hasattr(os, "sched_getaffinity") else False,
                    reason="no busy-machine workers on one core")
def test_beside_busy_processes_a_program_runs_right_on_more_unpinned_workers():
    """A program told the machine is busy (and its calls on the wider task device made to
    look fastest) runs there: IREE then has BUSY_WORKERS_PER_CORE more worker threads per
    core, and every call gives NumPy's answer. In a new process, so that no earlier test
    opened that device."""
    script = """
import os, numpy as np, tenzr as tz
from tenzr import runtime
def workers():
    names = [open(f"/proc/self/task/{t}/comm").read() for t in os.listdir("/proc/self/task")]
    return sum(n.startswith("iree-worker") for n in names)
f = tz.jit(lambda a, b: tz.tanh(a @ b).sum(axis=0))
rng = np.random.default_rng(0)
a, b = rng.standard_normal((64, 32)).astype(np.float32), rng.standard_normal((32, 16)).astype(np.float32)
f(a, b)
before = workers()
program = f.compiled(a, b).program
clock = [0.0]
def busy():
    clock[0] += 1.0
    return clock[0] * runtime._usable_cores(), 0.0, clock[0]
choice = program._choices["main"] = runtime._DriverChoice(program._drivers, sample=busy)
record = choice.record
choice.record = lambda d, s: record(d, s / 100 if d == runtime.BUSY_TASK else s)
for _ in range(60):
    np.testing.assert_allclose(f(a, b), np.tanh(a @ b).sum(axis=0), rtol=1e-5, atol=1e-5)
assert choice.busy and choice.chosen == runtime.BUSY_TASK, (choice.busy, choice.chosen)
print(before, workers(), runtime.BUSY_WORKERS_PER_CORE * runtime._usable_cores())
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=_without_cpu_driver())
    assert done.returncode == 0, done.stderr
    before, after, extra = map(int, done.stdout.split())
    assert after == before + extra


def test_where_the_busy_machine_workers_cannot_start_calls_keep_the_usual_ones(monkeypatch):
    """A BUSY_TASK device that fails to open (its threads refused, say) is tried once and
    left out with one warning, for every program; the round of timed calls goes on (the
    synchronous driver is still measured), and every call gives NumPy's answer."""
    import warnings

    from tenzr import runtime

    tries = []

    def refused():
        tries.append(1)
        raise RuntimeError("RESOURCE_EXHAUSTED; thread creation failed")

    monkeypatch.delitem(runtime._CONFIGS, runtime.BUSY_TASK, raising=False)
    monkeypatch.setattr(runtime, "_busy_task_device", refused)
    monkeypatch.setattr(runtime, "_busy_task_refused", False)
    monkeypatch.setattr(runtime, "_cores_shared", False)
    monkeypatch.setattr(runtime, "_usable_cores", lambda: 2)
    a = np.arange(12, dtype=np.float32).reshape(3, 4) / 10
    functions = [tz.jit(lambda a: tz.tanh(a).sum(axis=0) * 3.0), tz.jit(lambda a: tz.exp(a).max(axis=1))]
    expected = [np.tanh(a).sum(axis=0) * 3.0, np.exp(a).max(axis=1)]
    choices = []
    for f in functions:
        f(a)
        program = f.compiled(a).program
        program._choices.clear()
        program._loaded.pop(runtime.BUSY_TASK, None)
        choices.append(runtime._DriverChoice(runtime.cpu_devices(), sample=_busy_machine({})))
        program._choices["main"] = choices[-1]
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        for _ in range(40):
            for f, want in zip(functions, expected, strict=True):
                np.testing.assert_allclose(f(a), want, rtol=1e-6)
    said = [w for w in seen if "could not start" in str(w.message)]
    assert len(tries) == 1 and len(said) == 1 and "thread creation failed" in str(said[0].message)
    assert "local-task-busy" not in str(said[0].message)
    for choice in choices:
        assert choice.busy and runtime.BUSY_TASK not in choice.drivers and choice.left > 0
    assert runtime.cpu_devices() == runtime.CPU_DRIVERS


def _without_cpu_driver() -> dict[str, str]:
    from tenzr.runtime import CPU_DRIVER_ENV

    return {k: v for k, v in os.environ.items() if k != CPU_DRIVER_ENV}


def _unknown_load():
    """A machine sample for `_DriverChoice` where the kernel says nothing (as off Linux)."""
    return None


@pytest.mark.skipif(not hasattr(os, "SCHED_BATCH"), reason="Linux's scheduling policies")
def test_the_caller_waits_for_the_task_system_giving_way_or_polling_beside_busy_processes(monkeypatch):
    """On a quiet machine the calling thread waits as a SCHED_BATCH thread, and is a normal
    (SCHED_OTHER) one again after it; a thread with a policy of its own keeps it; beside busy
    processes it polls, as a normal thread. A synchronous call has ended when IREE returns."""
    from tenzr import runtime
    from tenzr.runtime import CPU_DRIVER_ENV, CPU_DRIVERS, _DriverChoice, _usable_cores

    monkeypatch.setenv(CPU_DRIVER_ENV, "local-task")
    f = tz.jit(lambda a: a * 2.0)
    x = np.arange(4, dtype=np.float32)
    f(x)
    program = f.compiled(x).program
    ways, policies = [], []  # whether each call polled; the thread's policy as it waited
    wait_for = runtime._wait_for

    def spy(signal, done, poll):
        ways.append("poll" if poll else "block")
        policies.append(os.sched_getscheduler(0))
        return wait_for(signal, done, poll)

    monkeypatch.setattr(runtime, "_wait_for", spy)
    program._choices["main"] = _DriverChoice(("local-task",), sample=_unknown_load)
    np.testing.assert_array_equal(f(x), x * 2)
    assert ways == ["block"] and policies == [os.SCHED_BATCH]
    assert os.sched_getscheduler(0) == os.SCHED_OTHER

    def idle_caller():
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
        f(x)

    caller = threading.Thread(target=idle_caller)
    caller.start()
    caller.join()
    assert policies[-1:] == [os.SCHED_IDLE] and ways[-1] == "block"

    clock = [0.0]

    def busy_machine():  # each call a second later: this process on one core, others on the rest
        clock[0] += 1.0
        return clock[0] * _usable_cores(), clock[0], clock[0]

    program._choices["main"] = _DriverChoice(("local-task",), sample=busy_machine)
    calls = _DriverChoice.FIRST + 3  # (the load is known once the first timed call ends)
    del ways[:], policies[:]
    for _ in range(calls):
        np.testing.assert_array_equal(f(x), x * 2)
    assert ways == ["block"] * (_DriverChoice.FIRST + 1) + ["poll"] * 2
    assert policies == [os.SCHED_BATCH] * (_DriverChoice.FIRST + 1) + [os.SCHED_OTHER] * 2
    assert os.sched_getscheduler(0) == os.SCHED_OTHER
    assert _DriverChoice(sample=busy_machine).waiting(CPU_DRIVERS[1]) == "block"


@pytest.mark.skipif(not hasattr(os, "SCHED_BATCH"), reason="Linux's scheduling policies")
def test_where_the_kernel_refuses_a_change_of_policy_calls_run_as_a_normal_thread(monkeypatch):
    """(A sandbox may refuse sched_setscheduler.) The call runs, and no later call tries again."""
    from tenzr import runtime
    from tenzr.runtime import CPU_DRIVER_ENV, _DriverChoice

    monkeypatch.setenv(CPU_DRIVER_ENV, "local-task")
    f = tz.jit(lambda a: a * 3.0)
    x = np.arange(4, dtype=np.float32)
    f(x)
    f.compiled(x).program._choices["main"] = _DriverChoice(("local-task",), sample=_unknown_load)
    tries = []

    def refuse(*args):
        tries.append(args)
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(runtime, "_can_give_way", True)
    monkeypatch.setattr(runtime.os, "sched_setscheduler", refuse)
    for _ in range(3):
        np.testing.assert_array_equal(f(x), x * 3)
    assert len(tries) == 1 and not runtime._can_give_way


def test_an_interrupt_while_polling_waits_for_the_call_to_end(monkeypatch):
    """IREE reads the caller's arrays in place until the call ends: an interrupt (Ctrl-C)
    while the caller polls for that comes out only then."""
    from tenzr import runtime
    from tenzr.runtime import CPU_DRIVER_ENV

    monkeypatch.setenv(CPU_DRIVER_ENV, "local-task")
    f = tz.jit(lambda a: ((a @ a) @ a) @ a)  # (tens of milliseconds)
    x = np.full((768, 768), 1 / 768, np.float32)
    f(x)
    ended = []
    wait_for = runtime._wait_for

    def polling(signal, done, poll):
        try:
            wait_for(signal, done, True)
        except KeyboardInterrupt:
            ended.append(done.query())
            raise

    def interrupt(seconds):
        raise KeyboardInterrupt

    monkeypatch.setattr(runtime, "_wait_for", polling)
    monkeypatch.setattr(runtime.time, "sleep", interrupt)
    with pytest.raises(KeyboardInterrupt):
        f(x)
    assert ended == [1]


def test_an_iree_run_time_failure_is_a_clear_error(monkeypatch):
    """IREE reports some run-time failures as IndexError (its OUT_OF_RANGE status, as in the
    failure tz.lax.scan's checkpoint_every documents): they come out as TenzrError too."""
    from tenzr import runtime

    f = tz.jit(lambda a: a * 5.0)
    x = np.arange(3, dtype=np.float32)
    f(x)

    def out_of_range(*args):
        raise IndexError("Error invoking function: OUT_OF_RANGE; indirect buffer reference slot 0 is out range")

    monkeypatch.setattr(runtime.Program, "_invoke", staticmethod(out_of_range))
    with pytest.raises(tz.TenzrError, match=r"running 'main' on cpu failed: .*OUT_OF_RANGE"):
        f(x)


def test_a_cpu_driver_can_be_named(monkeypatch):
    monkeypatch.setenv("TENZR_CPU_DRIVER", "local-sync")
    f = tz.jit(lambda a: a * 3.0 + 1.0)
    x = np.arange(4, dtype=np.float32)
    for _ in range(6):
        np.testing.assert_array_equal(f(x), x * 3 + 1)
    assert set(f.compiled(x).program._loaded) == {"local-sync"}
    monkeypatch.setenv("TENZR_CPU_DRIVER", "threads")
    with pytest.raises(tz.TenzrError, match="TENZR_CPU_DRIVER='threads' is not a CPU driver"):
        tz.jit(lambda a: a * 4.0)(x)
    monkeypatch.setenv("TENZR_CPU_DRIVER", "")  # (set but empty: as if unset, both are measured)
    g = tz.jit(lambda a: a * 5.0)
    for _ in range(30):
        np.testing.assert_array_equal(g(x), x * 5)
    assert set(g.compiled(x).program._loaded) == {"local-task", "local-sync"}


def test_jit_caches_per_signature():
    calls = []

    def f(x):
        calls.append(x.shape)
        return x + 1

    jf = tz.jit(f)
    jf(np.zeros(2, np.float32))
    jf(np.ones(2, np.float32))
    jf(np.zeros(3, np.float32))
    assert calls == [(2,), (3,)]


def test_stop_gradient():
    g = tz.grad(lambda x: (x * tz.lax.stop_gradient(x)).sum())(np.array([2.0, 3.0]))
    np.testing.assert_allclose(g, [2.0, 3.0])


def test_custom_vjp_rule_is_used():
    @tz.custom_vjp
    def clip_gradient(x):
        return x

    clip_gradient.defvjp(lambda x: (x, None), lambda _, ct: (tz.clip(ct, -1.0, 1.0),))
    g = tz.grad(lambda x: (clip_gradient(x) * np.array([5.0, -0.5, -3.0])).sum())(np.ones(3))
    np.testing.assert_allclose(g, [1.0, -0.5, -1.0])


def test_custom_vjp_with_residuals_matches_finite_differences():
    @tz.custom_vjp
    def softplus(x):
        return tz.log1p(tz.exp(x))

    def fwd(x):
        return softplus(x), tz.nn.sigmoid(x)

    softplus.defvjp(fwd, lambda s, ct: (ct * s,))
    x = np.array([-3.0, 0.1, 2.0])
    g = tz.grad(lambda v: (softplus(v) ** 2).sum())(x)
    np.testing.assert_allclose(g, numeric_grad(lambda v: np.sum(np.log1p(np.exp(v)) ** 2), x), rtol=1e-6)
    assert "tenzr.custom_vjp" in tz.trace(lambda v: softplus(v), x)


def test_custom_vjp_whose_bwd_makes_another_of_the_same_code():
    """bwd may call the function it differentiates through a new custom_vjp made from the same
    code (JAX's fixed_point recipe): tracing each such backward would never end, so inside
    one the same rule traces its function plainly. Values against sin's derivatives."""
    def sin(x):
        @tz.custom_vjp
        def f(x):
            return tz.sin(x)

        f.defvjp(lambda x: (f(x), x), lambda x, g: (g * sin(x + np.pi / 2),))
        return f(x)

    x = 1.0
    np.testing.assert_allclose(tz.jit(sin)(x), np.sin(x), rtol=1e-6)
    np.testing.assert_allclose(tz.grad(sin)(x), np.cos(x), rtol=1e-6)
    np.testing.assert_allclose(tz.grad(tz.grad(sin))(x), -np.sin(x), rtol=1e-6)


def test_registered_custom_op_lowering_and_vjp():
    def lower(op):
        (x,) = op.operands
        return sh.multiply(x, sh.multiply(x, x))

    def vjp(op, ct):
        (x,) = op.operands
        return (sh.multiply(ct, sh.multiply(sh.full(sh.spec(x), 3.0), sh.multiply(x, x))),)

    tz.register_custom_op("test.cube", lower=lower, vjp=vjp)
    try:
        x = np.array([1.0, -2.0, 0.5])
        np.testing.assert_allclose(tz.jit(lambda v: tz.lax.custom_call("test.cube", v))(x), x ** 3)
        g = tz.grad(lambda v: tz.lax.custom_call("test.cube", v).sum())(x)
        np.testing.assert_allclose(g, numeric_grad(lambda v: np.sum(v ** 3), x), rtol=1e-6)
    finally:
        CUSTOM_OPS.pop("test.cube")


def test_custom_op_without_rules_is_a_clear_error():
    tz.register_custom_op("test.opaque", lower=lambda op: op.operands[0], differentiable=False)
    try:
        with pytest.raises(tz.TenzrError, match=r"target 'test\.opaque' has no gradient: it is registered as non-"):
            tz.grad(lambda v: tz.lax.custom_call("test.opaque", v * 2.0).sum())(np.ones(2))
        with pytest.raises(tz.TenzrError, match=r"no lowering registered for target 'test\.unknown'"):
            tz.jit(lambda v: tz.lax.custom_call("test.unknown", v))(np.ones(2))
    finally:
        CUSTOM_OPS.pop("test.opaque")


# --------------------------------------------------------------------------- errors


def test_error_non_scalar_grad():
    with pytest.raises(tz.TenzrError, match=r"grad needs f to return a floating-point scalar, but it returned shape "
                                            r"\(2,\).*use tz.vjp"):
        tz.grad(lambda x: x * 2.0)(np.ones(2))


def test_error_integer_wrt():
    with pytest.raises(tz.TenzrError, match="cannot differentiate with respect to an input of dtype int32"):
        tz.grad(lambda n: (n * 2.0).sum())(np.arange(3, dtype=np.int32))


def test_error_python_control_flow_says_what_to_use():
    def f(x):
        if x.sum() > 0:
            return x
        return -x

    with pytest.raises(tz.TenzrError) as info:
        tz.jit(f)(np.ones(2))
    message = str(info.value)
    assert "tz.where" in message
    assert f"{__file__}:{f.__code__.co_firstlineno + 1}:" in message


def test_error_shape_points_at_user_line():
    def f(a, b):
        return a @ b  # the bad line

    with pytest.raises(tz.TenzrError) as info:
        tz.jit(f)(np.ones((2, 3)), np.ones((4, 5)))
    message = str(info.value)
    assert f"{__file__}:{f.__code__.co_firstlineno + 1}:" in message
    assert "contracting dimensions differ" in message


def test_error_numpy_function_on_traced_value():
    with pytest.raises(tz.TenzrError, match="cannot become a NumPy array while tracing"):
        tz.jit(lambda x: np.exp(x))(np.ones(2))


def test_error_boolean_mask_and_bad_index():
    with pytest.raises(tz.TenzrError, match="boolean mask indexing with a traced mask"):
        tz.jit(lambda x: x[x > 0])(np.ones(3))
    with pytest.raises(tz.TenzrError, match=r"a boolean index of shape \(2,\) does not match the shape \(3,\)"):
        tz.jit(lambda x: x[:, np.array([True, False])])(np.ones((2, 3)))
    with pytest.raises(tz.TenzrError, match="index 5 is out of bounds for axis 0 with size 3"):
        tz.jit(lambda x: x[5])(np.ones(3))


def test_numpy_boolean_masks_index_their_true_positions_under_jit_as_jax():
    """A NumPy mask's entries are known while tracing: it indexes as np.nonzero's arrays, as
    JAX's (over one dim or several, after an ellipsis or a new axis), and differentiates."""
    jax = pytest.importorskip("jax")
    x = np.arange(6.0).reshape(2, 3)
    row, grid = np.array([True, False, True]), np.array([[True, False, True], [False, False, True]])
    for index in [(slice(None), row), grid, (Ellipsis, row), (None, grid), (np.array([False, True]), 1),
                  (slice(None), [True, False, True])]:
        np.testing.assert_array_equal(tz.jit(lambda v, i=index: v[i])(x), jax.jit(lambda v, i=index: v[i])(x))
    np.testing.assert_array_equal(tz.grad(lambda v: (v[grid] ** 2).sum())(x), np.where(grid, 2 * x, 0.0))


def test_index_arrays_out_of_range_clamp_reads_and_drop_writes_as_jax():
    """Reads clamp each index array along its own dimension; writes through x.at drop the
    entries out of range (negative ones count from the end first), traced or constant."""
    x, a = np.zeros(5, np.float32), np.arange(6, dtype=np.float32).reshape(3, 2)
    i = np.array([1, 7, -1, -6], np.int32)
    np.testing.assert_array_equal(tz.jit(lambda v, k: v.at[k].set(9.0))(x, i), [0, 9, 0, 0, 9])
    np.testing.assert_array_equal(tz.jit(lambda v, k: v.at[k].add(9.0))(x, np.int32(-7)), np.zeros(5))
    np.testing.assert_array_equal(tz.jit(lambda v: v.at[np.array([1, 7])].set(9.0))(x), [0, 9, 0, 0, 0])
    np.testing.assert_array_equal(tz.jit(lambda m, k: m.at[k, 0].set(9.0))(a, np.array([1, 7], np.int32)),
                                  [[0, 1], [9, 3], [4, 5]])
    np.testing.assert_array_equal(tz.jit(lambda m, k: m.at[:, k].add(1.0))(a, np.array([1, 3], np.int32)),
                                  [[0, 2], [2, 4], [4, 6]])
    rows, columns = np.array([1, 7, -9], np.int32), np.array([5, 0, 1], np.int32)
    np.testing.assert_array_equal(tz.jit(lambda m, r, c: m[r, c])(a, rows, columns), [a[1, 1], a[2, 0], a[0, 1]])
    with pytest.raises(tz.TenzrError, match="boolean mask indexing"):  # (a traced mask is still refused)
        tz.jit(lambda v: v.at[v > 0].set(0.0))(x)
    np.testing.assert_array_equal(tz.jit(lambda m: m.at[a > 2].set(-1.0))(a), np.where(a > 2, -1.0, a))  # 2-d mask


def test_trace_gives_tenzr_module_text():
    text = tz.trace(lambda x, w: tz.nn.relu(x @ w).sum(), np.ones((2, 3), np.float32), tz.ShapeDtype((3, 4)))
    assert '"tenzr.matmul"' in text and '"tenzr.relu"' in text and "tensor<2x4xf32>" in text
    assert ir is not None

def test_constants_are_splat_only_when_every_element_has_the_same_bits():
    signed = np.array([0.0, -0.0], np.float32)
    assert list(np.signbit(tz.jit(lambda x: x * signed)(np.ones(2, np.float32)))) == [False, True]
    text = tz.trace(lambda x: x + np.full((64, 64), 2.5, np.float32), np.ones((64, 64), np.float32))
    assert "dense<2.500000e+00> : tensor<64x64xf32>" in text
    nan = np.array([np.nan, np.nan], np.float32)
    assert np.isnan(tz.jit(lambda x: x + nan)(np.ones(2, np.float32))).all()


def test_import_leaves_the_runtime_for_later():
    """`import tenzr` stays light (about 0.25 s here): IREE's runtime and ml_dtypes, which
    took 0.5 s of it, load only when a program first runs."""
    script = "import sys, tenzr; print(sorted(m for m in ('iree.runtime', 'ml_dtypes') if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_a_script_ends_without_the_runtimes_leak_report():
    """Programs kept in memory to the end (an eager call's, a jitted function's) and a result
    in the CPU device's memory: nanobind printed 146 lines of "leaked instance" on stderr as
    such a script ended."""
    script = ("import numpy as np, tenzr as tz\n"
              "x = tz.asarray(np.arange(6.0, dtype=np.float32))\n"
              "f = tz.jit(lambda v: v * 2)\n"
              "kept = f(x)\n"
              "print(tz.searchsorted(x, x), kept)\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert "[0 1 2 3 4 5]" in done.stdout
    assert "leaked" not in done.stderr, done.stderr[:500]


def test_grad_of_grad_matches_finite_differences_of_the_gradient():
    """tenzr-grad reads its own StableHLO output, so the gradient of a gradient is one
    program: ∇(∇f · v) = H v, against central differences of the (compiled) gradient."""
    rng = rng_for("hvp")
    w0 = rng.standard_normal((3, 2))
    x = rng.standard_normal((4, 3))
    v = rng.standard_normal((3, 2))

    def f(w):
        h = tz.tanh(x @ w)
        return (tz.exp(h * 0.5) + tz.sin(h) * h).sum() / 4.0 + (w ** 3).sum()

    grad_f = tz.jit(tz.grad(f))
    hvp = tz.grad(lambda w: (tz.grad(f)(w) * v).sum())(w0)
    numeric = (grad_f(w0 + H * v) - grad_f(w0 - H * v)) / (2 * H)
    np.testing.assert_allclose(hvp, numeric, rtol=1e-6, atol=1e-8)
    d2 = tz.grad(tz.grad(lambda t: tz.sin(t) * t * t))(0.7)
    np.testing.assert_allclose(d2, 2 * np.sin(0.7) + 4 * 0.7 * np.cos(0.7) - 0.49 * np.sin(0.7), rtol=1e-6)


def test_third_derivative_matches_the_derivation():
    """f = t² sin t: f''' = 6 cos t - 6 t sin t - t² cos t."""
    t = np.float64(0.7)
    d3 = tz.grad(tz.grad(tz.grad(lambda s: tz.sin(s) * s * s)))(t)
    np.testing.assert_allclose(d3, 6 * np.cos(t) - 6 * t * np.sin(t) - t * t * np.cos(t), rtol=1e-10)


def test_grad_through_an_inner_sgd_step_matches_finite_differences():
    """A meta-loss: the loss after one SGD step, differentiated in the step size and the
    starting weights. The reference is NumPy's forward (with the inner gradient derived by
    hand) under central differences."""
    rng = rng_for("meta")
    x, y = rng.standard_normal((8, 3)), rng.standard_normal(8)

    def loss(w):
        return ((tz.tanh(x @ w) - y) ** 2).mean()

    def meta(lr, w):
        return loss(w - lr * tz.grad(loss)(w))

    def meta_np(lr, w):
        t = np.tanh(x @ w)
        w1 = w - lr * 2 / len(y) * x.T @ ((t - y) * (1 - t ** 2))
        return ((np.tanh(x @ w1) - y) ** 2).mean()

    lr, w = np.float64(0.3), rng.standard_normal(3)
    g_lr, g_w = tz.grad(meta, argnums=(0, 1))(lr, w)
    np.testing.assert_allclose(g_lr, (meta_np(lr + H, w) - meta_np(lr - H, w)) / (2 * H), rtol=1e-6)
    numeric = [(meta_np(lr, w + H * e) - meta_np(lr, w - H * e)) / (2 * H) for e in np.eye(3)]
    np.testing.assert_allclose(g_w, numeric, rtol=1e-6, atol=1e-9)


def test_grad_runs_the_function_on_every_call_as_jax_does():
    """Outside jit, grad (like JAX's) runs the Python function on each call: a NumPy random
    draw inside it is new every time, a global it reads is read again. The NumPy arrays it
    meets are inputs of one compiled program, reused for new values; jit traces once per
    signature, as JAX's jit."""
    from tenzr.transforms import _RETRACED

    rs, ref = np.random.RandomState(0), np.random.RandomState(0)
    scale = {"now": 2.0}

    def loss(w):
        samples = rs.standard_normal((50, 3))
        return (tz.tanh(samples * w) ** 2).sum() * scale["now"]

    def numpy_loss(w, samples):
        return (np.tanh(samples * w) ** 2).sum() * scale["now"]

    w = np.array([0.3, -0.7, 1.1])
    g = tz.grad(loss)
    before = len(_RETRACED)
    for now in (2.0, 2.0, -1.0):
        scale["now"] = now
        samples = ref.standard_normal((50, 3))
        np.testing.assert_allclose(g(w), numeric_grad(lambda v, s=samples: numpy_loss(v, s), w), rtol=1e-7, atol=1e-8)
    assert len(_RETRACED) - before == 2  # one program per scale value; new samples reuse it
    jitted = tz.jit(loss)
    assert np.array_equal(jitted(w), jitted(w))  # traced once: the draw is part of the program


def test_vjp_pullback_sees_the_draws_of_its_forward():
    """tz.vjp runs the function for its value, then again to trace its pullback (a
    difference from JAX, whose vjp runs it once) but with the NumPy arrays the first run
    met, so value and cotangents agree; a new tz.vjp draws again."""
    rs = np.random.RandomState(1)
    drawn = []

    def f(w):
        drawn.append(rs.standard_normal(4))
        return tz.sin(w * drawn[-1])

    w = np.linspace(0.1, 0.4, 4)
    firsts = []
    for _ in range(2):
        firsts.append(len(drawn))
        y, pullback = tz.vjp(f, w)
        s = drawn[firsts[-1]]
        np.testing.assert_allclose(y, np.sin(w * s), rtol=1e-12)
        for _ in range(2):
            (g,) = pullback(np.ones(4))
            np.testing.assert_allclose(g, np.cos(w * s) * s, rtol=1e-12)
    assert not np.array_equal(drawn[firsts[0]], drawn[firsts[1]])


def test_vjp_and_linearize_see_the_function_as_it_was_when_called():
    """As JAX's, the pullback and the linearized function belong to the function as it was
    when tz.vjp or tz.linearize ran: a Python number it closes over may change after."""
    x = np.array([0.5, 2.0])
    scales = [1.0, 10.0]
    pullbacks = [tz.vjp(lambda v: tz.sin(v) * s, x)[1] for s in scales]  # noqa: B023 (late binding is the point)
    pushforwards = [tz.linearize(lambda v: tz.sin(v) * s, x)[1] for s in scales]  # noqa: B023
    for s, pullback, pushforward in zip(scales, pullbacks, pushforwards, strict=True):
        np.testing.assert_allclose(pullback(np.ones(2))[0], np.cos(x) * s, rtol=1e-12)
        np.testing.assert_allclose(pushforward(np.ones(2)), np.cos(x) * s, rtol=1e-12)
    with pytest.raises(tz.TenzrError, match=r"linearize: a tangent of shape \(3,\)"):
        pushforwards[0](np.ones(3))
    np.testing.assert_allclose(tz.vmap(pushforwards[1])(np.eye(2)), np.diag(np.cos(x) * 10.0), rtol=1e-12)
    np.testing.assert_allclose(tz.jit(pullbacks[1])(np.ones(2))[0], np.cos(x) * 10.0, rtol=1e-12)


def test_a_reused_program_returns_each_calls_own_output_structure():
    """Outside jit, functions whose traced programs are the same share one compiled program;
    each call's result still has its own output's structure (dict keys, container types)."""
    x, y = np.array([1.0, 2.0]), np.array([10.0, 20.0])

    def squares(d):
        return sum((v ** 2).sum() for v in d.values())

    first = tz.grad(squares)({"a": x, "b": y})
    second = tz.grad(squares)({"b": x, "c": y})
    assert list(first) == ["a", "b"] and list(second) == ["b", "c"]
    np.testing.assert_allclose(second["b"], 2 * x)
    np.testing.assert_allclose(second["c"], 2 * y)
    assert isinstance(tz.vmap(lambda t: t)([x, y]), list)
    assert isinstance(tz.vmap(lambda t: t)((x, y)), tuple)
    assert isinstance(tz.grad(lambda a, b: (a * b).sum(), argnums=(1,))(x, y), tuple)
    assert isinstance(tz.grad(lambda a, b: (a * b).sum(), argnums=1)(x, y), np.ndarray)


def test_views_of_results_outlive_the_result():
    """A row of a result (`first, second = f(x)`, JAX's `key, subkey = split(key)`) keeps
    its memory once the result itself is gone: later calls do not overwrite it."""
    import gc

    stacked = tz.jit(lambda x: tz.stack([x * 2, x * 3]))
    other = tz.jit(lambda x: tz.exp(x))
    first, second = stacked(np.ones(4, np.float32))
    key, subkey = tz.random.split(tz.random.PRNGKey(0))
    kept = key.copy(), subkey.copy()
    for _ in range(3):
        other(np.ones((2, 4), np.float32))
        tz.exp(np.ones((2, 2), np.float32))
        gc.collect()
    np.testing.assert_array_equal(first, np.full(4, 2, np.float32))
    np.testing.assert_array_equal(second, np.full(4, 3, np.float32))
    np.testing.assert_array_equal(key, kept[0])
    np.testing.assert_array_equal(subkey, kept[1])
