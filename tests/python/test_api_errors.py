"""Misuse of the Python API ends in a clear TenzrError whose traceback ends in the user's
code, and the inputs NumPy users pass (read-only arrays, NumPy scalars, bfloat16) work."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
import traceback

import numpy as np
import pytest

import tenzr as tz
from tenzr.cache import STATS

ESCAPED: list = []


def _escape(x):
    ESCAPED.append(x)
    return x.sum()


def _deep(levels):
    tree = np.ones(2)
    for _ in range(levels):
        tree = [tree]
    return tree


def _escaped_use():
    tz.jit(_escape)(np.ones(2))
    return ESCAPED[-1] + 1


ONES = np.ones(3)
# name, the call, a phrase the error must hold
MISUSE = [
    ("argnums_string", lambda: tz.grad(lambda x: x.sum(), argnums="x"), "argnums must be an int or a non-empty tuple"),
    ("argnums_empty", lambda: tz.grad(lambda x: x.sum(), argnums=()), "argnums must be an int or a non-empty tuple"),
    ("argnums_range", lambda: tz.grad(lambda x: x.sum(), argnums=3)(ONES), "argnums 3 is out of range"),
    ("mixed_dict_keys", lambda: tz.jit(lambda d: d[1] + d["a"])({1: ONES, "a": ONES}),
     "keys that cannot be sorted against each other (int, str)"),
    ("negative_shape", lambda: tz.ShapeDtype((-3,)), "dimensions must be non-negative, got shape (-3,)"),
    ("jit_of_an_array", lambda: tz.jit(ONES), "jit: expected a function to transform, got ndarray"),
    ("vmap_of_a_number", lambda: tz.vmap(3), "vmap: expected a function to transform, got int"),
    ("hessian_of_none", lambda: tz.hessian(None), "hessian: expected a function to transform, got NoneType"),
    ("bad_shape", lambda: tz.ShapeDtype(("a", 2)), "a shape must be an int or a sequence of ints"),
    ("escaped_tracer", _escaped_use, "a traced array was used outside the function that traced it"),
    ("deep_pytree", lambda: tz.jit(lambda t: 0.0)(_deep(3000)), "a pytree nests more than 200 containers deep"),
    ("huge_zeros", lambda: tz.jit(lambda x: tz.zeros((10**5, 10**5)) + x)(np.ones(1, np.float32)),
     "tensor<100000x100000xf32> would take 37.3 GiB"),
    ("huge_result", lambda: tz.jit(lambda x: tz.broadcast_to(x, (10**6, 10**6)))(np.ones(1, np.float32)),
     "would take 3725.3 GiB"),
    ("grad_of_tuple", lambda: tz.grad(lambda x: (x.sum(), x.sum()))(ONES), "returned a tuple of 2 values; pass "
     "has_aux=True"),
    ("has_aux_scalar", lambda: tz.grad(lambda x: x.sum(), has_aux=True)(ONES), "needs f to return a pair (output, "
     "aux), but it returned a single Array"),
    ("population_count_of_floats", lambda: tz.lax.population_count(ONES), "population_count: takes integer tensors "
     "(i8 to i64, ui8 to ui64), got f64"),
    ("reduce_precision_bits", lambda: tz.lax.reduce_precision(ONES, 0, 2), "reduce_precision: keeps 0 exponent and 2 "
     "mantissa bits: it needs at least one exponent bit"),
    ("approx_min_k_of_ints", lambda: tz.lax.approx_min_k(np.array([5, -2 ** 31, 3], np.int32), 2),
     "approx_min_k: operand must be a floating type, got int32"),
    ("bitwise_count_of_floats", lambda: tz.bitwise_count(ONES), "bitwise_count: takes integers, got float64"),
    ("matrix_transpose_1d", lambda: tz.matrix_transpose(ONES), "matrix_transpose: needs an array of rank 2 or more"),
    ("convolve_mode", lambda: tz.convolve(ONES, ONES, mode="wide"), "convolve: mode must be 'full', 'same' or 'valid'"),
    ("digitize_2d_bins", lambda: tz.digitize(ONES, np.ones((2, 2))), "digitize: bins must be 1-d, got shape (2, 2)"),
    ("ldexp_float_exponent", lambda: tz.ldexp(ONES, ONES), "ldexp: the exponents must be integers"),
    ("vectorize_signature", lambda: tz.vectorize(lambda a: a, signature="(n->()"), "vectorize: not a valid signature"),
    ("vectorize_loops", lambda: tz.vectorize(lambda a, b: a * b)(np.ones(2), np.ones(3)),
     "vectorize: the loop dimensions [(2,), (3,)] do not broadcast"),
    ("vjp_has_aux_single", lambda: tz.vjp(lambda x: x * 2, ONES, has_aux=True), "vjp with has_aux=True needs f to "
     "return a pair (output, aux), but it returned a single ndarray"),
    ("complex_output", lambda: tz.grad(lambda x: (x * (1.0 + 0.2j)).sum())(ONES), "grad needs a real-valued "
     "output, but f returned complex128; for holomorphic differentiation pass holomorphic=True, or take the real part"),
    ("clongdouble_input", lambda: tz.jit(lambda x: x * 2)(np.ones(2, np.clongdouble)), "NumPy dtype complex256 is "
     "not a tenzr element type"),
    ("float_of_traced", lambda: tz.jit(lambda x: float(x))(np.ones(())), "cannot be used as a Python float"),
    ("einsum_bad_sublist", lambda: tz.jit(lambda a: tz.einsum(a, [0, "x"]))(np.ones((2, 2))),
     "einsum: axis ids must be ints in [0, 52), got 'x'"),
    ("einsum_first_argument", lambda: tz.jit(lambda a: tz.einsum(3, a))(np.ones(2)),
     "expected a list of axis ids after each operand"),
]


@pytest.mark.parametrize("call, phrase", [row[1:] for row in MISUSE], ids=[row[0] for row in MISUSE])
def test_misuse_is_a_clear_error(call, phrase):
    with pytest.raises(tz.TenzrError) as caught:
        call()
    assert phrase in str(caught.value)
    frames = traceback.extract_tb(caught.value.__traceback__)
    own = [f for f in frames if os.sep + "tenzr" + os.sep in f.filename or f.filename.endswith(("core.py",
                                                                                              "transforms.py"))]
    assert not own, f"Tenzr's own frames left in the traceback: {own}"


def test_debug_env_keeps_the_whole_traceback(monkeypatch):
    monkeypatch.setenv("TENZR_DEBUG", "1")
    with pytest.raises(tz.TenzrError) as caught:
        tz.grad(lambda x: x.sum(), argnums=5)(ONES)
    assert any(f.filename.endswith("transforms.py") for f in traceback.extract_tb(caught.value.__traceback__))


def test_repeated_argnums_give_the_gradient_at_each_position():
    x = np.array([0.5, -1.0, 2.0])
    gx, gy = tz.grad(lambda a: (a * a).sum(), argnums=(0, 0))(x)
    np.testing.assert_allclose(gx, 2 * x)
    np.testing.assert_allclose(gy, 2 * x)


def test_numpy_scalars_keep_their_dtype():
    g = tz.grad(lambda x: tz.sin(x))(np.float64(1.3))
    assert g.dtype == np.float64 and g.shape == ()
    np.testing.assert_allclose(g, np.cos(1.3), rtol=1e-15)
    assert tz.grad(lambda x: tz.sin(x))(np.float32(1.3)).dtype == np.float32
    assert tz.grad(lambda x: tz.sin(x))(1.3).dtype == np.float32  # a Python float is weakly typed


def test_bfloat16_arrays_go_in_and_come_out():
    import ml_dtypes

    x = np.array([1.5, -2.0, 3.25], ml_dtypes.bfloat16)
    out = tz.jit(lambda v: v * 2.0 + tz.asarray(np.array([0.5, 0.25, 0.0]), x.dtype))(x)
    assert out.dtype == x.dtype
    np.testing.assert_array_equal(out.astype(np.float32), [3.5, -3.75, 6.5])


def test_read_only_inputs_work():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    x.flags.writeable = False
    np.testing.assert_array_equal(tz.jit(lambda v: v * 2.0)(x), np.arange(6).reshape(2, 3) * 2.0)
    np.testing.assert_array_equal(tz.grad(lambda v: (v * v).sum())(x), 2 * x)


def test_results_outlive_clear_caches():
    """They are views of the CPU device's memory: closing the device under them crashed."""
    script = textwrap.dedent("""
        import numpy as np
        import tenzr as tz
        g = tz.grad(lambda x: tz.sin(x).sum())(np.ones(3))
        tz.clear_caches()
        import gc; gc.collect()
        print(float(g.sum()))
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    np.testing.assert_allclose(float(done.stdout), 3 * np.cos(1.0), rtol=1e-12)


def test_threads_asking_for_one_new_program_compile_it_once():
    f = tz.jit(lambda x: tz.sin(x) * 3.0 + 1.75)
    x = np.linspace(0, 1, 7, dtype=np.float32)
    before = STATS.compiles + STATS.disk_hits
    results: list = [None] * 8
    errors: list = []

    def work(i):
        try:
            results[i] = f(x)
        except Exception as e:  # a failure in a thread must fail the test
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert STATS.compiles + STATS.disk_hits - before == 1
    for r in results:
        np.testing.assert_allclose(r, np.sin(x) * 3.0 + 1.75, rtol=1e-6)


def test_threads_tracing_different_programs_do_not_mix():
    fs = [tz.jit(lambda x, k=k: tz.exp(x) * float(k)) for k in range(6)]
    x = np.linspace(0, 1, 5)
    out: dict = {}

    def work(k):
        out[k] = fs[k](x)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for k in range(6):
        np.testing.assert_allclose(out[k], np.exp(x) * k, rtol=1e-14)


def test_assigning_into_a_traced_array_points_at_at():
    def f(x):
        x[0] = 1.0
        return x

    with pytest.raises(tz.TenzrError, match=r"cannot be changed in place; write x = x.at\[index\].set\(value\)"):
        tz.jit(f)(np.ones(2))
