"""`tz.linalg` and `tz.scipy.linalg`: values against NumPy and SciPy, first derivatives
against JAX (float64) and finite differences, Hessian-vector products against JAX, stacks
of matrices, vmap, and the errors. Eigenvectors and singular vectors enter through
functions their arbitrary signs do not change."""

from __future__ import annotations

import functools

import numpy as np
import pytest
import scipy.linalg as sl

import tenzr as tz

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy

RNG = np.random.default_rng(7)
A = RNG.standard_normal((4, 4))
SPD = A @ A.T + 4 * np.eye(4)
B = RNG.standard_normal((4, 3))
TALL = RNG.standard_normal((5, 3))
STACK = RNG.standard_normal((2, 3, 3))
H = 1e-6


def _sym(f):
    """f of the symmetric part, so that derivatives of Cholesky-based functions are defined
    for any perturbation (as JAX's tests symmetrize)."""
    return lambda a, *rest: f((a + a.swapaxes(-1, -2)) / 2, *rest)


# name, tz function, JAX function, NumPy/SciPy function, inputs
ROWS = [
    ("det", tz.linalg.det, jnp.linalg.det, np.linalg.det, [A]),
    ("det_stack", tz.linalg.det, jnp.linalg.det, np.linalg.det, [STACK]),
    ("slogdet", lambda a: tz.linalg.slogdet(a)[1] * tz.linalg.slogdet(a).sign,
     lambda a: jnp.linalg.slogdet(a)[1] * jnp.linalg.slogdet(a)[0],
     lambda a: np.linalg.slogdet(a)[1] * np.linalg.slogdet(a)[0], [A]),
    ("inv", tz.linalg.inv, jnp.linalg.inv, np.linalg.inv, [A]),
    ("inv_stack", tz.linalg.inv, jnp.linalg.inv, np.linalg.inv, [STACK]),
    ("solve_matrix", tz.linalg.solve, jnp.linalg.solve, np.linalg.solve, [A, B]),
    ("solve_vector", tz.linalg.solve, jnp.linalg.solve, np.linalg.solve, [A, B[:, 0]]),
    ("cholesky", _sym(tz.linalg.cholesky), _sym(jnp.linalg.cholesky), _sym(np.linalg.cholesky), [SPD]),
    ("cholesky_of_the_symmetric_part", tz.linalg.cholesky, jnp.linalg.cholesky,  # (a symmetric gradient, as JAX's)
     lambda a: np.linalg.cholesky((a + a.T) / 2), [SPD + 0.1 * A]),
    ("cholesky_upper", _sym(lambda a: tz.scipy.linalg.cholesky(a)), _sym(jax.scipy.linalg.cholesky),
     _sym(sl.cholesky), [SPD]),
    ("solve_triangular", lambda l, b: tz.scipy.linalg.solve_triangular(l, b, lower=True),
     lambda l, b: jax.scipy.linalg.solve_triangular(l, b, lower=True),
     lambda l, b: sl.solve_triangular(l, b, lower=True), [np.linalg.cholesky(SPD), B]),
    ("solve_triangular_trans", lambda u, b: tz.scipy.linalg.solve_triangular(u, b, trans="T"),
     lambda u, b: jax.scipy.linalg.solve_triangular(u, b, trans="T"),
     lambda u, b: sl.solve_triangular(u, b, trans="T"), [np.linalg.cholesky(SPD).T, B[:, 1]]),
    ("cho_solve", _sym(lambda a, b: tz.scipy.linalg.cho_solve(tz.scipy.linalg.cho_factor(a), b)),
     _sym(lambda a, b: jax.scipy.linalg.cho_solve(jax.scipy.linalg.cho_factor(a), b)),
     _sym(lambda a, b: sl.cho_solve(sl.cho_factor(a), b)), [SPD, B]),
    ("qr_modes", lambda a: _qr_parts(tz, a), lambda a: _qr_parts(jnp, a), lambda a: _qr_parts(np, a), [TALL]),
    ("norms", lambda a: tz.linalg.norm(a) + tz.linalg.norm(a, 1) + tz.linalg.norm(a, -np.inf) + tz.linalg.norm(a, "fro")
     + tz.linalg.norm(a[0], 3) + tz.linalg.norm(a[1], -np.inf) + tz.linalg.norm(a, axis=0, ord=1).sum()
     + tz.linalg.norm(a, axis=1, keepdims=True).sum(),
     lambda a: jnp.linalg.norm(a) + jnp.linalg.norm(a, 1) + jnp.linalg.norm(a, -np.inf) + jnp.linalg.norm(a, "fro")
     + jnp.linalg.norm(a[0], 3) + jnp.linalg.norm(a[1], -np.inf) + jnp.linalg.norm(a, axis=0, ord=1).sum()
     + jnp.linalg.norm(a, axis=1, keepdims=True).sum(),
     lambda a: np.linalg.norm(a) + np.linalg.norm(a, 1) + np.linalg.norm(a, -np.inf) + np.linalg.norm(a, "fro")
     + np.linalg.norm(a[0], 3) + np.linalg.norm(a[1], -np.inf) + np.linalg.norm(a, axis=0, ord=1).sum()
     + np.linalg.norm(a, axis=1, keepdims=True).sum(), [A]),
    ("eigh", _sym(lambda a: _eigen_parts(tz, a)), _sym(lambda a: _eigen_parts(jnp, a)),
     _sym(lambda a: _eigen_parts(np, a)), [A]),
    ("eigh_stack_upper", lambda a: _eigen_parts(tz, a, symmetrize_input=False, UPLO="U"),
     lambda a: _eigen_parts(jnp, _upper_symmetric(jnp, a)), lambda a: _eigen_parts(np, a, UPLO="U"), [STACK]),
    ("svd_tall", lambda a: _singular_parts(tz, a), lambda a: _singular_parts(jnp, a),
     lambda a: _singular_parts(np, a), [TALL]),
    ("svd_wide_stack", lambda a: _singular_parts(tz, a), lambda a: _singular_parts(jnp, a),
     lambda a: _singular_parts(np, a), [RNG.standard_normal((2, 3, 5))]),
    ("pinv", tz.linalg.pinv, jnp.linalg.pinv, np.linalg.pinv, [TALL]),
    ("spectral_norms", lambda a: tz.linalg.norm(a, 2) + tz.linalg.norm(a, -2) * tz.linalg.norm(a.T, "nuc"),
     lambda a: jnp.linalg.norm(a, 2) + jnp.linalg.norm(a, -2) * jnp.linalg.norm(a.T, "nuc"),
     lambda a: np.linalg.norm(a, 2) + np.linalg.norm(a, -2) * np.linalg.norm(a.T, "nuc"), [B]),
    # (1-norms that take two and three squarings and the order-13 approximant; the others in
    # test_expm_of_each_order_and_its_errors)
    ("expm_stack_squared", tz.scipy.linalg.expm, jax.scipy.linalg.expm, lambda a: np.stack([sl.expm(m) for m in a]),
     [STACK * np.array([3.0, 5.0])[:, None, None]]),
    ("scipy_lu_qr_polar", lambda a, b: _scipy_parts(tz, tz.scipy.linalg, a, b),
     lambda a, b: _scipy_parts(jnp, jax.scipy.linalg, a, b), lambda a, b: _scipy_parts(np, sl, a, b), [A, B]),
    ("block_diag_toeplitz", lambda a, b: _blocks(tz, tz.scipy.linalg, a, b),
     lambda a, b: _blocks(jnp, jax.scipy.linalg, a, b), lambda a, b: _blocks(np, sl, a, b), [A[:3, :4], B[:, :1]]),
]


def _eigen_parts(xp, a, **options):
    """Eigenvalues and squared eigenvectors (unchanged by each vector's arbitrary sign)."""
    w, v = xp.linalg.eigh(a, **options)
    return w[..., None, :] + v ** 2


def _scipy_parts(xp, linalg, a, b):
    """SciPy's LU (of a and of its first three columns), lu_solve both ways, QR (full, of
    aᵀ's first three columns) and the polar factors of a, in one vector (JAX's polar by
    the SVD, as its default iterations do not reverse-differentiate)."""
    polar = linalg.polar if xp is np else functools.partial(linalg.polar, method="svd")
    p, lower, upper = linalg.lu(a[:, :3])
    permuted_lower, upper_square = linalg.lu(a, permute_l=True)
    factored = linalg.lu_factor(a)
    q, r = linalg.qr(a[:, :3].T)
    parts = [p @ lower, upper, permuted_lower, upper_square, linalg.lu_solve(factored, b),
             linalg.lu_solve(factored, b[:, 0], trans=1), q, r, *polar(a), polar(a[:3], "left")[1]]
    return xp.concatenate([xp.ravel(x) for x in parts])


def _blocks(xp, linalg, a, b):
    """A block-diagonal matrix (of a matrix, a 1-element row and a column) times a Toeplitz one."""
    return linalg.block_diag(a, b[0], b) @ linalg.toeplitz(xp.concatenate([a[0], b[:2, 0]]), a[1])


def _upper_symmetric(xp, a):
    """The symmetric matrix that a's upper triangle describes (what UPLO="U" reads)."""
    upper = xp.triu(a, 1)
    return upper + xp.swapaxes(upper, -1, -2) + xp.eye(a.shape[-1]) * a


def _singular_parts(xp, a):
    """The singular values and sum_k k u_k v_k^T (unchanged by the paired signs of u_k, v_k)."""
    u, s, vh = xp.linalg.svd(a, full_matrices=False)
    return (u * xp.arange(1.0, s.shape[-1] + 1)) @ vh + s[..., :1, None]


def _qr_parts(xp, a):
    """The reduced Q and R of tall a, the complete ones of wide aᵀ, and "r" of a (LAPACK's
    signs, as Householder reflections give them); a is [5, 3]."""
    q, r = xp.linalg.qr(a)
    q_wide, r_wide = xp.linalg.qr(a.T, mode="complete")
    return xp.concatenate([q * 2 + r[:1, :], q_wide, r_wide.T, xp.linalg.qr(a, mode="r") ** 2], 0)


@pytest.mark.parametrize("row", ROWS, ids=[r[0] for r in ROWS])
def test_values_match_numpy_and_scipy(row):
    _, fn, _, ref, inputs = row
    np.testing.assert_allclose(tz.jit(fn)(*inputs), ref(*inputs), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("row", ROWS, ids=[r[0] for r in ROWS])
def test_gradients_match_jax_and_finite_differences(row):
    _, fn, jax_fn, ref, inputs = row
    weights = np.cos(np.arange(np.size(ref(*inputs))) + 0.5).reshape(np.shape(ref(*inputs)))
    argnums = tuple(range(len(inputs)))
    ours = tz.grad(lambda *a: tz.sum(fn(*a) * weights), argnums)(*inputs)
    theirs = jax.jit(jax.grad(lambda *a: jnp.sum(jax_fn(*a) * weights), argnums))(*inputs)
    for k, (g, j) in enumerate(zip(ours, theirs, strict=True)):
        np.testing.assert_allclose(g, j, rtol=1e-8, atol=1e-10)
        direction = np.sin(np.arange(inputs[k].size) + 1.0).reshape(inputs[k].shape)
        shifted = [a + H * direction if n == k else a for n, a in enumerate(inputs)]
        lowered = [a - H * direction if n == k else a for n, a in enumerate(inputs)]
        fd = (np.sum(ref(*shifted) * weights) - np.sum(ref(*lowered) * weights)) / (2 * H)
        np.testing.assert_allclose(np.sum(g * direction), fd, rtol=1e-6)


def test_expm_of_each_order_and_its_errors():
    """expm's Padé orders by 1-norm (float64: 3, 5, 7, 9, 13; float32: 3, 5, 7, then
    squarings), against SciPy; NaN past max_squarings, as JAX's."""
    unit = A / np.abs(A).sum(0).max()  # (1-norm 1)
    double = unit * np.array([0.002, 0.03, 0.15, 0.4, 1.0])[:, None, None]
    single = (unit * np.array([0.05, 0.2, 2.0])[:, None, None]).astype(np.float32)
    for got, stack in zip(tz.jit(lambda d, s: (tz.scipy.linalg.expm(d), tz.scipy.linalg.expm(s)))(double, single),
                          (double, single), strict=True):
        assert got.dtype == stack.dtype
        np.testing.assert_allclose(got, [sl.expm(m) for m in stack], rtol=1e-13 if stack.dtype == np.float64 else 1e-5,
                                   atol=1e-15)
    assert np.isnan(tz.jit(lambda a: tz.scipy.linalg.expm(a, max_squarings=2))(A * 20)).all()
    with pytest.raises(tz.TenzrError, match="expm: A must be a square matrix"):
        tz.jit(tz.scipy.linalg.expm)(B)


def test_hessian_vector_products_match_jax():
    """Hessian-vector products (forward over reverse) through LU, Cholesky, eigh, SVD and QR, on 3x3
    matrices (the full Hessian of an unrolled factorization is a large program for IREE)."""
    a, spd, v = A[:3, :3], SPD[:3, :3], np.cos(np.arange(9.0)).reshape(3, 3)

    for ours, theirs, x in [
        (lambda m: tz.linalg.slogdet(m)[1], lambda m: jnp.linalg.slogdet(m)[1], a),
        (_sym(lambda m: tz.sum(tz.linalg.cholesky(m) ** 3)), _sym(lambda m: jnp.sum(jnp.linalg.cholesky(m) ** 3)), spd),
        (_sym(lambda m: tz.sum(_eigen_parts(tz, m) ** 2)), _sym(lambda m: jnp.sum(_eigen_parts(jnp, m) ** 2)), a),
        (lambda m: tz.sum(_singular_parts(tz, m) ** 2), lambda m: jnp.sum(_singular_parts(jnp, m) ** 2), a),
        (lambda m: tz.sum(_qr_parts(tz, m) ** 3), lambda m: jnp.sum(_qr_parts(jnp, m) ** 3), a),
    ]:
        got = tz.jvp(tz.grad(ours), (x,), (v,))[1]
        want = jax.jit(lambda x, v, theirs=theirs: jax.jvp(jax.grad(theirs), (x,), (v,))[1])(x, v)
        np.testing.assert_allclose(got, want, rtol=1e-8, atol=1e-10)


def test_vmap_of_solve_matches_numpy():
    b = RNG.standard_normal((2, 3))
    np.testing.assert_allclose(tz.vmap(tz.linalg.solve)(STACK, b), np.linalg.solve(STACK, b[..., None])[..., 0],
                               rtol=1e-10)
    symmetric = STACK + STACK.swapaxes(-1, -2)
    np.testing.assert_allclose(tz.vmap(tz.linalg.eigvalsh)(symmetric), np.linalg.eigvalsh(symmetric), rtol=1e-10)


def test_large_matrices_compile_and_match_numpy():
    """The factorizations and substitutions run one row or column per loop iteration: written
    out step by step, solve failed to compile at n = 20 and a triangular solve at n = 40
    ("failed to solve for usage analysis"), Cholesky at n = 100 took 25 s to compile and QR at
    n = 40 26 s."""
    n = 100
    m = RNG.standard_normal((n, n))
    spd, b = m @ m.T + n * np.eye(n), RNG.standard_normal(n)
    np.testing.assert_allclose(tz.linalg.solve(m, b), np.linalg.solve(m, b), rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(tz.linalg.solve(m, b[:, None]), np.linalg.solve(m, b[:, None]), rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(tz.linalg.cholesky(spd), np.linalg.cholesky(spd), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(tz.linalg.slogdet(m)[1], np.linalg.slogdet(m)[1], rtol=1e-10)
    q, r = tz.linalg.qr(m)
    q_numpy, r_numpy = np.linalg.qr(m)
    np.testing.assert_allclose(q * 2 + r[:1, :], q_numpy * 2 + r_numpy[:1, :], rtol=1e-8, atol=1e-10)
    upper = np.triu(m) + n * np.eye(n)
    np.testing.assert_allclose(tz.scipy.linalg.solve_triangular(upper, b), sl.solve_triangular(upper, b),
                               rtol=1e-10, atol=1e-12)
    x = np.eye(20, dtype=np.float32) * 2 + 0.1
    np.testing.assert_allclose(tz.linalg.solve(x, np.ones(20, np.float32)), np.linalg.solve(x, np.ones(20)),
                               rtol=1e-5)


def test_svd_full_matrices_and_float32():
    """full_matrices=True completes U (tall) or Vh (wide) to orthogonal matrices; float32
    input is factored to float32 precision."""
    for a in (TALL, TALL.T):
        u, s, vh = tz.linalg.svd(a)
        m, n = a.shape
        assert u.shape == (m, m) and vh.shape == (n, n)
        np.testing.assert_allclose(u.T @ u, np.eye(m), atol=1e-12)
        np.testing.assert_allclose(vh @ vh.T, np.eye(n), atol=1e-12)
        np.testing.assert_allclose((u[:, :s.size] * s) @ vh[:s.size], a, atol=1e-12)
    a32 = A.astype(np.float32)
    s32 = tz.linalg.svd(a32, compute_uv=False)
    assert s32.dtype == np.float32
    np.testing.assert_allclose(s32, np.linalg.svd(A, compute_uv=False), rtol=1e-5)
    w, v = tz.linalg.eigh(a32 + a32.T)
    np.testing.assert_allclose(v @ np.diag(w) @ v.T, a32 + a32.T, atol=1e-5)
    rank_two = TALL[:, :2] @ B[:2]  # [5, 3] of rank 2
    assert tz.linalg.matrix_rank(rank_two) == np.linalg.matrix_rank(rank_two) == 2


def test_qr_raw_and_stacks_match_numpy():
    """mode="raw" (the reflectors and taus, transposed as NumPy's), and stacks of wide and
    tall matrices, complete, against NumPy's LAPACK."""
    wide, tall = RNG.standard_normal((2, 3, 4)), RNG.standard_normal((2, 4, 3))
    got = tz.jit(lambda a: (tz.linalg.qr(a, mode="raw"), tz.linalg.qr(a.T, mode="raw"), tz.linalg.qr(wide, "complete"),
                            tz.linalg.qr(tall, "complete")))(TALL)
    want = (np.linalg.qr(TALL, mode="raw"), np.linalg.qr(TALL.T, mode="raw"), np.linalg.qr(wide, "complete"),
            np.linalg.qr(tall, "complete"))
    for g, w in zip(tz.tree_util.tree_leaves(got), tz.tree_util.tree_leaves(tuple(tuple(p) for p in want)),
                    strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize(("name", "args"), [
    ("hilbert", (5,)), ("invhilbert", (4,)), ("pascal", (5,)), ("pascal", (4, "lower")), ("invpascal", (5,)),
    ("invpascal", (4, "upper")), ("helmert", (5, True)), ("hadamard", (8,)), ("dft", (6, "sqrtn")),
    ("circulant", (STACK[0],)), ("hankel", (STACK[:, 0], B[:, 0])), ("fiedler", (STACK[0],)),
    ("companion", (STACK[0],)),
    ("fiedler_companion", (A[0, :4],)), ("leslie", (A[0], B[:3, 1])), ("convolution_matrix", (B[:, 0], 6, "same")),
    ("convolution_matrix", (STACK[0], 2, "valid")),
])
def test_special_matrices_match_jax_and_scipy(name, args, x64):
    """Shapes and dtypes as JAX's (with x64, as this module runs JAX; pascal is float32
    regardless), values as SciPy's (JAX's for batches, which SciPy does not take)."""
    got, theirs = getattr(tz.scipy.linalg, name)(*args), getattr(jax.scipy.linalg, name)(*args)
    assert (got.shape, got.dtype) == (theirs.shape, theirs.dtype)
    batched = any(np.ndim(x) > 1 for x in args)
    want = theirs if batched else getattr(sl, name)(*args)
    np.testing.assert_allclose(np.asarray(got, np.complex128), np.asarray(want, np.complex128), rtol=2e-6, atol=1e-6)


@pytest.mark.parametrize(("name", "args", "options"), [
    ("vector_norm", (STACK,), {}), ("vector_norm", (STACK,), {"axis": (0, 2), "ord": 1, "keepdims": True}),
    ("vector_norm", (STACK,), {"ord": 3}), ("matrix_norm", (STACK,), {"ord": 1, "keepdims": True}),
    ("svdvals", (TALL,), {}),
    ("matrix_transpose", (STACK,), {}), ("trace", (STACK,), {"offset": 1}), ("outer", (B[:, 0], A[0]), {}),
    ("cross", (TALL, TALL[::-1]), {}), ("cross", (TALL.T, TALL.T ** 2), {"axis": 0}),
    ("tensordot", (STACK, B.T), {"axes": 1}),
    ("vecdot", (STACK, STACK), {"axis": 1}), ("tensorinv", (A.reshape(2, 2, 4),), {"ind": 2}),
    ("tensorsolve", (A.reshape(2, 2, 4), B[:, 0].reshape(2, 2)), {}), ("matmul", (STACK, B[:3]), {}),
])
def test_array_api_linalg_names_match_jax(name, args, options):
    np.testing.assert_allclose(getattr(tz.linalg, name)(*args, **options), getattr(jnp.linalg, name)(*args, **options),
                               rtol=1e-10, atol=1e-12)


def test_singular_and_eager():
    singular = np.array([[1.0, 2.0], [2.0, 4.0]])
    assert tz.linalg.det(singular) == 0.0
    sign, logabsdet = tz.linalg.slogdet(singular)
    assert sign == 0.0 and logabsdet == -np.inf
    np.testing.assert_allclose(tz.linalg.inv(A) @ A, np.eye(4), atol=1e-12)


@pytest.mark.parametrize(("call", "message"), [
    (lambda: tz.linalg.det(np.ones((2, 3))), "det: expects a square matrix"),
    (lambda: tz.linalg.solve(A, np.ones(3)), "solve: a is [4, 4] but b is [3]"),
    (lambda: tz.linalg.norm(A, 3), "norm: matrix ord 3 is not supported"),
    (lambda: tz.linalg.eigh(A, UPLO="X"), "eigh: UPLO must be 'L' or 'U'"),
    (lambda: tz.linalg.svd(np.ones(3)), "svd: expects a matrix"),
    (lambda: tz.linalg.qr(TALL, mode="economic"), "qr: unsupported mode 'economic'"),
    (lambda: tz.scipy.linalg.qr(TALL, pivoting=True), "qr: pivoting=True is not supported"),
    (lambda: tz.scipy.linalg.lu_solve(tz.scipy.linalg.lu_factor(A), np.ones(3)), "lu_solve: lu is [4, 4] but b is [3]"),
    (lambda: tz.scipy.linalg.eigh(A, A), "eigh: only the standard problem is supported"),
    (lambda: tz.scipy.linalg.hadamard(6), "hadamard: n must be a power of 2"),
    (lambda: tz.linalg.tensorinv(B), "tensorinv: a of shape [4, 3] with ind=2 is not square"),
    (lambda: tz.linalg.cross(A, A), "cross: expects 3-vectors along axis -1"),
    (lambda: tz.scipy.linalg.leslie(A[0], A[0]), "leslie: expects f [..., n]"),
    (lambda: tz.scipy.linalg.solve_triangular(A, B, trans=3), "trans must be 0, 1, 2"),
])
def test_errors(call, message):
    with pytest.raises(tz.TenzrError, match=message.replace("[", r"\[").replace("]", r"\]")):
        call()


def test_cholesky_of_a_matrix_not_positive_definite_is_nan_as_jax():
    """Each failed matrix of a stack is NaN in its whole triangle (the columns before the
    failing pivot were finite), the others factored, as JAX's."""
    a = np.array([[[4.0, 2.0, 0.0], [2.0, 1.0, 3.0], [0.0, 3.0, 1.0]], np.diag([2.0, 3.0, 1.0])])
    for upper in (False, True):
        ours, theirs = tz.linalg.cholesky(a, upper=upper), jnp.linalg.cholesky(a, upper=upper)
        np.testing.assert_array_equal(np.isnan(ours), np.isnan(theirs))
        np.testing.assert_allclose(np.nan_to_num(ours), np.nan_to_num(theirs), rtol=1e-12)
