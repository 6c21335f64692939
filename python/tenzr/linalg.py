"""`tz.linalg`: NumPy's and JAX's `linalg` for real matrices (and stacks of them, in the last
two dims): `cholesky`, `solve_triangular`, `det`, `slogdet`, `inv`, `solve`, `qr`, `norm`,
`eigh`, `eigvalsh`, `svd`, `pinv`, `matrix_rank`, `lstsq`, and the array API's names
(`vector_norm`, `matrix_norm`, `svdvals`, `vecdot`, `tensorsolve`, ...).

IREE 3.13 compiles neither StableHLO's `cholesky` nor its `triangular_solve` ("failed to
legalize"), so each factorization is written out here in tenzr ops, one vectorized step per
row or column: LU, Cholesky, Householder QR and the triangular solves as a loop of one
iteration per row or column (a program of fixed size). Being ordinary traced code, every
function differentiates to any order, forward and reverse, and batches under `vmap`; the
derivatives are those of the factorization itself (for LU, at its pivoting; for Cholesky,
the standard one, as the factor is unique), except where a custom JVP gives JAX's rule
(QR, eigh, svd).
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from tenzr import numpy_api as tnp
from tenzr import numpy_lib
from tenzr.control import fori_loop
from tenzr.core import Array, check_arguments, promote, user_location
from tenzr.dialect.diagnostics import TenzrError
from tenzr.flags import default_int
from tenzr.forward import custom_jvp
from tenzr.lax import dynamic_index_in_dim, dynamic_update_slice_in_dim
from tenzr.numpy_lib import imag, real, tril, triu
from tenzr.numpy_routines import matrix_transpose as matrix_transpose  # (tz.linalg has them too, as jnp.linalg)
from tenzr.numpy_routines import vecdot as vecdot

ArrayLike = Any


def _matrix(a: ArrayLike, what: str) -> Array:
    a = tnp._float(a)
    if a.ndim < 2:
        raise TenzrError(f"{what}: expects a matrix (or a stack of them), got shape {list(a.shape)}", user_location())
    return a


def _square(a: ArrayLike, what: str) -> Array:
    a = tnp._float(a)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise TenzrError(f"{what}: expects a square matrix (or a stack of them) in the last two dims, got shape "
                         f"{list(a.shape)}", user_location())
    return a


_UNROLLED_UP_TO = 16
"""Factorizations of at most this many rows run their steps written out (a longer program
that ran 2-4x faster at n = 16: 105 against 218 us for a solve, 85 against 347 us for the
gradient of slogdet); larger ones run them in a loop (a program of fixed size: written out,
IREE 3.13 failed to compile a solve of 20 rows, and took 25 s for a Cholesky of 100)."""


def _steps(n: int, step: Any, start: Any) -> Any:
    """fori_loop(0, n, step, start), written out for small n (_UNROLLED_UP_TO)."""
    return fori_loop(0, n, step, start, unroll=True if n <= _UNROLLED_UP_TO else 1)


def _rows(n: int) -> Array:
    return tnp.arange(n, dtype=np.int32)


def _dot_rows(m: Array, x: Array) -> Array:
    """m [..., r] times x [..., r, k]: [..., k]."""
    return tnp.einsum("...r,...rk->...k", m, x)


def _triangular(a: Array, b: Array, lower: bool, unit_diagonal: bool) -> Array:
    """x with a x = b, for triangular a [..., n, n] and b [..., n, k], by substitution: one
    row of x per loop iteration, from the top (lower) or the bottom (upper), so the program
    does not grow with n (written out row by row, IREE 3.13 failed to compile n >= 40:
    "failed to solve for usage analysis"). x's rows not yet solved are zero, so a whole row
    of a times x is the sum over the rows already known."""
    if b.shape[-1] == 1:
        # One right-hand side makes every step's values 0-d, which IREE 3.13's vectorizer
        # miscompiles inside the loop in float64 (a crash, or "'arith.divf' op requires the
        # same type for all operands"); a zero second column keeps them vectors.
        padded = tnp.concatenate([b, tnp.zeros(b.shape, b.dtype)], axis=-1)
        return _triangular(a, padded, lower, unit_diagonal)[..., :1]
    n = a.shape[-1]
    diagonal_entries = diagonal(a)

    def step(t: Array, x: Array) -> Array:
        i = t if lower else n - 1 - t
        row = dynamic_index_in_dim(b, i, -2, False) - _dot_rows(dynamic_index_in_dim(a, i, -2, False), x)
        if not unit_diagonal:
            row = row / dynamic_index_in_dim(diagonal_entries, i, -1)
        return dynamic_update_slice_in_dim(x, row[..., None, :], i, -2)

    return _steps(n, step, tnp.zeros(b.shape, b.dtype))


def _batched(a: Array, b: Array) -> tuple[Array, Array]:
    """a and b with their batch dims broadcast together."""
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    return tnp.broadcast_to(a, (*batch, *a.shape[-2:])), tnp.broadcast_to(b, (*batch, *b.shape[-2:]))


def solve_triangular(a: ArrayLike, b: ArrayLike, trans: int | str = 0, lower: bool = False,
                     unit_diagonal: bool = False) -> Array:
    """x with op(a) x = b for triangular a (SciPy's and `jax.scipy.linalg`'s arguments:
    op is a itself for trans 0 or "N", its transpose for 1, 2, "T" or "C"); b is [..., n]
    or [..., n, k]. Only the triangle named by `lower` is read."""
    a = _square(a, "solve_triangular")
    a, b = promote(a, b)
    if trans not in (0, 1, 2, "N", "T", "C"):
        raise TenzrError(f"solve_triangular: trans must be 0, 1, 2, 'N', 'T' or 'C', got {trans!r}", user_location())
    if trans not in (0, "N"):
        a, lower = tnp.swapaxes(a, -1, -2), not lower
    vector = b.ndim == a.ndim - 1
    if (b.shape[-1] if vector else b.shape[-2]) != a.shape[-1]:
        raise TenzrError(f"solve_triangular: a is {list(a.shape)} but b is {list(b.shape)}", user_location())
    a = tril(a) if lower else triu(a)
    a, b2 = _batched(a, b[..., None] if vector else b)
    x = _triangular(a, b2, lower, unit_diagonal)
    return x[..., 0] if vector else x


def cholesky(a: ArrayLike, upper: bool = False, symmetrize_input: bool = True) -> Array:
    """The Cholesky factor L (lower, L L^T = a) of a symmetric positive definite a; with
    upper=True, L^T. As JAX's, it factors (a + a^T)/2, so its gradient is symmetric too
    (symmetrize_input=False: a's lower triangle alone). A matrix not positive definite
    gives NaNs in all of its factor's triangle, as JAX's.
    One column of L per loop iteration; the columns not yet found are zero, so a whole row
    of L times L^T sums over the columns already known."""
    a = _square(a, "cholesky")
    if symmetrize_input:
        a = (a + tnp.swapaxes(a, -1, -2)) / 2
    n = a.shape[-1]
    rows = _rows(n)

    def step(j: Array, factor: Array) -> Array:
        known = tnp.einsum("...ij,...j->...i", factor, dynamic_index_in_dim(factor, j, -2, False))
        column = dynamic_index_in_dim(a, j, -1, False) - known
        column = column / tnp.sqrt(dynamic_index_in_dim(column, j, -1))
        return dynamic_update_slice_in_dim(factor, tnp.where(rows >= j, column, 0.0)[..., None], j, -1)

    factor = _steps(n, step, tnp.zeros(a.shape, a.dtype))
    # (a failed factor's columns before its failing pivot are finite)
    failed = numpy_lib.any(tnp.isnan(factor), axis=(-2, -1), keepdims=True)
    factor = tnp.where(failed & (rows[:, None] >= rows[None, :]), np.nan, factor)
    return tnp.swapaxes(factor, -1, -2) if upper else factor


class _LU(NamedTuple):
    lower: Array  # unit lower triangular [..., m, k], k = min(m, n)
    upper: Array  # [..., k, n]
    permutation: Array  # row i of the factored matrix is row permutation[i] of a
    parity: Array  # the permutation's sign, +1 or -1
    pivots: Array | None  # (with_pivots) LAPACK's, from 0: step j swapped rows j and pivots[j]


def _lu(a: Array, with_pivots: bool = False) -> _LU:
    """P a = L U of a [..., m, n] by Gaussian elimination with partial pivoting (LAPACK's
    pivots, ties to the first row), one column per loop iteration (so the program does not
    grow with the size). The pivots are carried only when asked for: the larger loop body
    would lose scan's automatic unrolling (a solve of 100 rows 49 -> 94 ms)."""
    m, n = a.shape[-2:]
    k = min(m, n)
    batch = a.shape[:-2]
    rows, columns = _rows(m), _rows(k)

    def step(j: Array, carry: tuple[Array, ...]) -> tuple[Array, ...]:
        a, lower, permutation, parity, *pivots = carry
        column = dynamic_index_in_dim(a, j, -1, False)
        pivot_row = tnp.argmax(tnp.where(rows >= j, tnp.abs(column), -1.0), axis=-1).astype(np.int32)[..., None]
        swap = tnp.where(rows == j, pivot_row, tnp.where(rows == pivot_row, j, rows))
        a = tnp.take_along_axis(a, tnp.broadcast_to(swap[..., None], a.shape), axis=-2, mode="promise_in_bounds")
        lower = tnp.take_along_axis(lower, tnp.broadcast_to(swap[..., None], lower.shape), axis=-2,
                                    mode="promise_in_bounds")
        permutation = tnp.take_along_axis(permutation, swap, axis=-1, mode="promise_in_bounds")
        parity = parity * tnp.where(pivot_row[..., 0] == j, 1.0, -1.0)
        column = dynamic_index_in_dim(a, j, -1, False)
        pivot = dynamic_index_in_dim(column, j, -1)
        safe = tnp.where(pivot == 0, 1.0, pivot)  # a singular column: nothing to eliminate
        factors = tnp.where(rows > j, column / safe, 0.0)
        a = a - factors[..., :, None] * dynamic_index_in_dim(a, j, -2)
        lower = lower + factors[..., :, None] * (columns == j).astype(a.dtype)
        return a, lower, permutation, parity, *(dynamic_update_slice_in_dim(p, pivot_row, j, -1) for p in pivots)

    start = (a, tnp.zeros((*batch, m, k), a.dtype), tnp.broadcast_to(rows, (*batch, m)), tnp.ones(batch, a.dtype),
             *([tnp.zeros((*batch, k), np.int32)] if with_pivots else []))
    a, lower, permutation, parity, *pivots = _steps(k, step, start)
    return _LU(lower + tnp.eye(m, k, dtype=a.dtype), triu(a[..., :k, :]), permutation, parity,
               pivots[0] if pivots else None)


def det(a: ArrayLike) -> Array:
    """The determinant (from an LU factorization with partial pivoting)."""
    lu = _lu(_square(a, "det"))
    return lu.parity * tnp.prod(diagonal(lu.upper), axis=-1)


class SlogdetResult(NamedTuple):
    sign: Array
    logabsdet: Array


def slogdet(a: ArrayLike) -> SlogdetResult:
    """(sign, log |det|) of the determinant, without overflow; (0, -inf) when singular."""
    lu = _lu(_square(a, "slogdet"))
    d = diagonal(lu.upper)
    return SlogdetResult(lu.parity * tnp.prod(tnp.sign(d), axis=-1), tnp.sum(tnp.log(tnp.abs(d)), axis=-1))


def solve(a: ArrayLike, b: ArrayLike) -> Array:
    """x with a x = b; b is [n] (a vector) or [..., n, k] (NumPy 2's rule)."""
    a = _square(a, "solve")
    a, b = promote(a, b)
    vector = b.ndim == 1
    if (b.shape[0] if vector else b.shape[-2]) != a.shape[-1]:
        raise TenzrError(f"solve: a is {list(a.shape)} but b is {list(b.shape)}", user_location())
    lu = _lu(a)
    x = _lu_solve(lu.lower, lu.upper, lu.permutation, b[:, None] if vector else b)
    return x[..., 0] if vector else x


def _lu_solve(lower: Array, upper: Array, permutation: Array, b: Array, transposed: bool = False) -> Array:
    """x with a x = b (aᵀ x = b when `transposed`) from P a = L U, P's row i picking a's row
    permutation[i]; b is [..., n, k]."""
    lower, b = _batched(lower, b)
    upper, _ = _batched(upper, b)
    permutation = tnp.broadcast_to(permutation, b.shape[:-1])
    if transposed:  # aᵀ = Uᵀ Lᵀ P: row i of Lᵀ's solution is row permutation[i] of x
        y = _triangular(tnp.swapaxes(upper, -1, -2), b, True, False)
        solved = _triangular(tnp.swapaxes(lower, -1, -2), y, False, True)
        # (Pᵀ as a product: IREE 3.13 failed to compile the argsort that inverts permutation
        # here, "LLVM Translation failed for operation: builtin.unrealized_conversion_cast")
        picks = (permutation[..., :, None] == np.arange(b.shape[-2])).astype(b.dtype)
        return tnp.swapaxes(picks, -1, -2) @ solved
    rows = tnp.broadcast_to(permutation[..., None], b.shape)
    permuted = tnp.take_along_axis(b, rows, axis=-2, mode="promise_in_bounds")
    return _triangular(upper, _triangular(lower, permuted, True, True), False, False)


def inv(a: ArrayLike) -> Array:
    """The inverse matrix."""
    a = _square(a, "inv")
    return solve(a, tnp.broadcast_to(tnp.eye(a.shape[-1], dtype=a.dtype), a.shape))


class QRResult(NamedTuple):
    Q: Array
    R: Array


_HOUSEHOLDER_UNROLL = 4
"""Columns per loop iteration of `_householder` past _UNROLLED_UP_TO (its body is too large
for scan's automatic unrolling). QR of 100x100 float64, with two busy processes beside it:
one column 41 ms a call, four 25 ms, eight 17 ms; compile 1.4 s of CPU for one or four,
3.7 s for eight."""


def _householder(a: Array) -> tuple[Array, Array, Array]:
    """Householder QR as LAPACK's dgeqr2 and dlarfg compute it, so that R's signs are LAPACK's
    (and NumPy's and JAX's): one reflector H_j = I - tau_j v_j v_jᵀ (v_j[j] = 1, zero above j)
    per column j < k = min(m, n), none (tau = 0) where the column below the diagonal is
    already 0. Returns LAPACK's packed form (R on and above the diagonal, the v_j below it),
    the taus [..., k], and T [..., k, k] with H_0 ... H_{k-1} = I - V T Vᵀ (the compact WY
    form, as LAPACK's dlarft builds it), so that Q needs no second loop."""
    m, n = a.shape[-2:]
    k = min(m, n)
    rows, columns, reflectors = _rows(m), _rows(n), _rows(k)

    def step(j: Array, carry: tuple[Array, Array, Array]) -> tuple[Array, Array, Array]:
        a, taus, t = carry
        column = dynamic_index_in_dim(a, j, -1, False)
        alpha = dynamic_index_in_dim(column, j, -1, False)
        below = rows > j
        rest = tnp.sum(tnp.where(below, column * column, 0.0), axis=-1)
        reflects = rest != 0
        norm = tnp.sqrt(tnp.where(reflects, alpha * alpha + rest, 1.0))
        beta = tnp.where(reflects, tnp.where(alpha >= 0, -norm, norm), alpha)
        tau = tnp.where(reflects, (beta - alpha) / tnp.where(reflects, beta, 1.0), 0.0)[..., None]
        scale = tnp.where(reflects, alpha - beta, 1.0)
        v = tnp.where(rows == j, 1.0, tnp.where(below, column / scale[..., None], 0.0))
        earlier = _unit_lower(a[..., :k]) * (reflectors < j)
        t_column = tnp.where(reflectors == j, tau, -tau * _dot_rows(_dot_rows(v, earlier), tnp.swapaxes(t, -1, -2)))
        a = a - tnp.where(columns > j, (tau * v)[..., :, None] * _dot_rows(v, a)[..., None, :], 0.0)
        reduced = tnp.where(rows == j, beta[..., None], tnp.where(below, v, column))
        a = dynamic_update_slice_in_dim(a, reduced[..., None], j, -1)
        return (a, dynamic_update_slice_in_dim(taus, tau, j, -1),
                dynamic_update_slice_in_dim(t, t_column[..., None], j, -1))

    batch = a.shape[:-2]
    start = (a, tnp.zeros((*batch, k), a.dtype), tnp.zeros((*batch, k, k), a.dtype))
    return fori_loop(0, k, step, start, unroll=True if k <= _UNROLLED_UP_TO else _HOUSEHOLDER_UNROLL)


def _unit_lower(packed: Array) -> Array:
    """The Householder vectors [..., m, k] stored below the diagonal of `packed` (LAPACK's
    form), with their implicit unit diagonal."""
    m, k = packed.shape[-2:]
    return tril(packed, -1) + tnp.eye(m, k, dtype=packed.dtype)


def _qr_factors(a: Array, complete: bool) -> tuple[Array, Array]:
    """(Q, R) from `_householder`: Q = I - V T Vᵀ, its first m (complete) or k columns."""
    m, n = a.shape[-2:]
    k = min(m, n)
    packed, _, t = _householder(a)
    rows = m if complete else k
    v = _unit_lower(packed[..., :k])
    q = tnp.eye(m, rows, dtype=a.dtype) - v @ (t @ tnp.swapaxes(v[..., :rows, :], -1, -2))
    return q, triu(packed[..., :rows, :])


_qr_reduced = custom_jvp(lambda a: _qr_factors(a, False))
_qr_complete = custom_jvp(lambda a: _qr_factors(a, True))


def _thin_qr_jvp(q: Array, r: Array, da: Array) -> tuple[Array, Array]:
    """JAX's JVP of a = Q R for m >= n (Q [..., m, n], R [..., n, n])."""
    rt, da_t = _batched(tnp.swapaxes(r, -1, -2), tnp.swapaxes(da, -1, -2))
    da_rinv = tnp.swapaxes(_triangular(rt, da_t, True, False), -1, -2)  # da R⁻¹
    qt_da_rinv = tnp.swapaxes(q, -1, -2) @ da_rinv
    lower = tril(qt_da_rinv, -1)
    skew = lower - tnp.swapaxes(lower, -1, -2)
    return q @ (skew - qt_da_rinv) + da_rinv, (qt_da_rinv - skew) @ r


def _qr_jvp(complete: bool) -> Any:
    """JAX's rule for QR: the thin rule for m >= n; for wide a = [a1 a2], the thin rule of
    a1 = Q R1 and R2 = Qᵀ a2; for the complete Q of a tall a, the last m - n columns by
    arXiv:2409.13374 (eqs. 32-33)."""
    def rule(primals: tuple, tangents: tuple) -> tuple:
        (a,), (da,) = primals, tangents
        q, r = (_qr_complete if complete else _qr_reduced)(a)
        m, n = a.shape[-2:]
        if m < n:
            dq, dr1 = _thin_qr_jvp(q, r[..., :m], da[..., :m])
            dr2 = tnp.swapaxes(dq, -1, -2) @ a[..., m:] + tnp.swapaxes(q, -1, -2) @ da[..., m:]
            return (q, r), (dq, tnp.concatenate([dr1, dr2], -1))
        q_mn = q[..., :n]
        dq_mn, dr_nn = _thin_qr_jvp(q_mn, r[..., :n, :], da)
        if m == n or not complete:
            return (q, r), (dq_mn, dr_nn)
        q_nn, q_pn, q_mp = q_mn[..., :n, :], q_mn[..., n:, :], q[..., n:]
        dq_nn, dq_pn = dq_mn[..., :n, :], dq_mn[..., n:, :]
        z_pn_t = solve(tnp.swapaxes(q_nn - tnp.eye(n, dtype=a.dtype), -1, -2), tnp.swapaxes(q_pn, -1, -2))
        z_pn = tnp.swapaxes(z_pn_t, -1, -2)
        dq_mp = dq_mn @ z_pn_t - (q_mn + q_mp @ z_pn) @ tnp.swapaxes(dq_pn - z_pn @ dq_nn, -1, -2)
        dr = tnp.concatenate([dr_nn, tnp.zeros((*dr_nn.shape[:-2], m - n, n), a.dtype)], -2)
        return (q, r), (tnp.concatenate([dq_mn, dq_mp], -1), dr)

    return rule


_qr_reduced.defjvp(_qr_jvp(False))
_qr_complete.defjvp(_qr_jvp(True))


def qr(a: ArrayLike, mode: str = "reduced") -> Any:
    """(Q, R) with a = Q R, Q's columns orthonormal and R upper triangular, of a matrix
    [..., m, n] of any shape, with k = min(m, n). `mode`: "reduced" (Q [..., m, k],
    R [..., k, n]), "complete" (Q [..., m, m], R [..., m, n]), "r" (R [..., k, n], as JAX) or
    "raw" (LAPACK's packed form, transposed as NumPy's: the reflectors below R's diagonal
    [..., n, m], and their taus [..., k]). Householder reflections, one column per loop
    iteration, so that R's signs are LAPACK's (NumPy's and JAX's); derivatives by JAX's
    rules (raw mode's as the reflections' own)."""
    if mode not in ("reduced", "complete", "r", "raw"):
        raise TenzrError(f"qr: unsupported mode {mode!r} (use 'reduced', 'complete', 'r' or 'raw')", user_location())
    a = _matrix(a, "qr")
    if mode == "raw":
        packed, taus, _ = _householder(a)
        return QRResult(tnp.swapaxes(packed, -1, -2), taus)
    q, r = (_qr_complete if mode == "complete" else _qr_reduced)(a)
    return r if mode == "r" else QRResult(q, r)


def matrix_power(a: ArrayLike, n: int) -> Array:
    """a @ a @ ... (n factors) by repeated squaring; the identity for n = 0, powers of the
    inverse for n < 0."""
    a = _square(a, "matrix_power")
    if not isinstance(n, (int, np.integer)):
        raise TenzrError(f"matrix_power: n must be an int, got {n!r}", user_location())
    if n < 0:
        a, n = inv(a), -n
    result: Array | None = None
    while n:
        if n & 1:
            result = a if result is None else tnp.matmul(result, a)
        n >>= 1
        if n:
            a = tnp.matmul(a, a)
    return tnp.broadcast_to(tnp.eye(a.shape[-1], dtype=a.dtype), a.shape) if result is None else result


def multi_dot(arrays: Any, *, precision: Any = None) -> Array:
    """The product of a sequence of matrices (the first and last may be vectors), left to right."""
    arrays = list(arrays)
    if len(arrays) < 2:
        raise TenzrError("multi_dot: needs at least two arrays", user_location())
    out = tnp.asarray(arrays[0])
    for b in arrays[1:]:
        out = tnp.matmul(out, b)
    return out


def cond(x: ArrayLike, p: Any = None) -> Array:
    """The condition number: the ratio of the largest to the smallest singular value (p
    None or 2, -2 the inverse), else norm(x, p) * norm(inv(x), p)."""
    x = tnp._float(x)
    if p in (None, 2, -2):
        s = svd(x, compute_uv=False)
        ratio = s[..., 0] / s[..., -1]
        return ratio if p != -2 else 1 / ratio
    return norm(x, p, axis=(-2, -1)) * norm(inv(x), p, axis=(-2, -1))


def _squares(x: Array) -> Array:
    """|x|² elementwise (smooth at 0 for complex x too)."""
    if x.spec.is_complex:
        re, im = real(x), imag(x)
        return re * re + im * im
    return x * x


def norm(x: ArrayLike, ord: Any = None, axis: Any = None, keepdims: bool = False) -> Array:  # noqa: A002
    """NumPy's vector and matrix norms. Vector (`axis` an int, or a 1-D x): ord None or 2,
    1, inf, -inf, 0 (nonzero count) or any p. Matrix (`axis` a pair, or a 2-D x): None or
    "fro", 1, -1, inf, -inf, and from the SVD 2, -2 and "nuc" (real x only). With ord and
    axis None, the 2-norm of x flattened. Complex x is measured by its moduli."""
    x = tnp._float(x)
    if axis is None:
        if ord is None:
            out = tnp.sqrt(tnp.sum(_squares(x)))
            return tnp.reshape(out, (1,) * x.ndim) if keepdims else out
        if x.ndim not in (1, 2):
            raise TenzrError(f"norm: ord {ord!r} needs axis for an array of rank {x.ndim} (rank 1 or 2 without)",
                             user_location())
        axis = tuple(range(x.ndim))
    axes = tnp._axes(axis, x.ndim)
    if len(axes) == 1:
        return _vector_norm(x, ord, axes, keepdims, "norm")
    if len(axes) != 2:
        raise TenzrError(f"norm: axis must be an int or a pair, got {axis!r}", user_location())
    row, col = axes
    if ord is None or ord == "fro":
        return tnp.sqrt(tnp.sum(_squares(x), axes, keepdims=keepdims))
    if ord in (1, -1, np.inf, -np.inf):
        summed, other = (row, col) if ord in (1, -1) else (col, row)
        sums = tnp.sum(tnp.abs(x), summed, keepdims=True)
        pick = tnp.max if ord in (1, np.inf) else tnp.min
        out = pick(sums, other, keepdims=True)
        return out if keepdims else tnp.squeeze(out, axes)
    if ord in (2, -2, "nuc"):
        if x.spec.is_complex:
            raise TenzrError(f"norm: matrix ord {ord!r} of complex input is not supported yet (it needs a complex "
                             "SVD)", user_location())
        x = tnp.moveaxis(x, axes, (-2, -1))
        sv = svd(x, compute_uv=False)
        out = tnp.sum(sv, -1) if ord == "nuc" else (tnp.max if ord == 2 else tnp.min)(sv, -1)
        return tnp.expand_dims(out, axes) if keepdims else out
    raise TenzrError(f"norm: matrix ord {ord!r} is not supported (supported: None, 'fro', 1, -1, 2, -2, inf, -inf, "
                     "'nuc')", user_location())


def _vector_norm(x: Array, ord: Any, axes: tuple[int, ...], keepdims: bool, what: str) -> Array:  # noqa: A002
    if ord is None or ord == 2:
        return tnp.sqrt(tnp.sum(_squares(x), axes, keepdims=keepdims))
    if ord == np.inf:
        return tnp.max(tnp.abs(x), axes, keepdims=keepdims)
    if ord == -np.inf:
        return tnp.min(tnp.abs(x), axes, keepdims=keepdims)
    if ord == 0:
        return tnp.sum((x != 0).astype(tnp.abs(x).dtype), axes, keepdims=keepdims)
    if ord == 1:
        return tnp.sum(tnp.abs(x), axes, keepdims=keepdims)
    if isinstance(ord, str):
        raise TenzrError(f"{what}: ord {ord!r} is a matrix norm; give a vector ord or two axes", user_location())
    return tnp.sum(tnp.abs(x) ** ord, axes, keepdims=keepdims) ** (1.0 / ord)


def vector_norm(x: ArrayLike, /, *, axis: Any = None, keepdims: bool = False, ord: Any = 2) -> Array:  # noqa: A002
    """The vector norm of x over `axis` (an int, a tuple of them, or None: all of x), with
    `norm`'s vector ords."""
    x = tnp._float(x)
    return _vector_norm(x, ord, tnp._axes(tuple(range(x.ndim)) if axis is None else axis, x.ndim), keepdims,
                        "vector_norm")


def matrix_norm(x: ArrayLike, /, *, keepdims: bool = False, ord: Any = "fro") -> Array:  # noqa: A002
    """`norm` of the matrices in x's last two dims."""
    return norm(x, ord, axis=(-2, -1), keepdims=keepdims)


def svdvals(x: ArrayLike, /) -> Array:
    """The singular values, descending."""
    return svd(x, compute_uv=False)


def trace(x: ArrayLike, /, *, offset: int = 0, dtype: Any = None) -> Array:
    """The sums of the diagonals of the matrices in x's last two dims (NumPy's `trace` uses
    the first two)."""
    sums = numpy_lib.trace(x, offset, axis1=-2, axis2=-1)
    return sums if dtype is None else sums.astype(dtype)


def diagonal(x: ArrayLike, /, *, offset: int = 0) -> Array:
    """The diagonals of the matrices in x's last two dims (NumPy's `diagonal` takes the first
    two)."""
    return numpy_lib.diagonal(x, offset, axis1=-2, axis2=-1)


def outer(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """The outer product of two vectors."""
    x1, x2 = tnp.asarray(x1), tnp.asarray(x2)
    if x1.ndim != 1 or x2.ndim != 1:
        raise TenzrError(f"outer: expects two vectors, got shapes {list(x1.shape)} and {list(x2.shape)}",
                         user_location())
    return tnp.outer(x1, x2)


def cross(x1: ArrayLike, x2: ArrayLike, /, *, axis: int = -1) -> Array:
    """The cross product of 3-vectors along `axis`."""
    x1, x2 = tnp.asarray(x1), tnp.asarray(x2)
    if x1.shape[axis] != 3 or x2.shape[axis] != 3:
        raise TenzrError(f"cross: expects 3-vectors along axis {axis}, got shapes {list(x1.shape)} and "
                         f"{list(x2.shape)}", user_location())
    return numpy_lib.cross(x1, x2, axis=axis)


def matmul(x1: ArrayLike, x2: ArrayLike, /, *, precision: Any = None, preferred_element_type: Any = None) -> Array:
    """x1 @ x2."""
    return tnp.matmul(x1, x2, precision=precision, preferred_element_type=preferred_element_type)


def tensordot(x1: ArrayLike, x2: ArrayLike, /, *, axes: Any = 2, precision: Any = None,
              preferred_element_type: Any = None) -> Array:
    """NumPy's tensordot (keyword `axes`, as the array API's)."""
    return numpy_lib.tensordot(x1, x2, axes, precision=precision, preferred_element_type=preferred_element_type)


def tensorinv(a: ArrayLike, ind: int = 2) -> Array:
    """The inverse of `a` as a linear map from its last dims to its first `ind` ones:
    tensordot(tensorinv(a, ind), a, ind) is the identity of a.shape[ind:]."""
    a = tnp._float(a)
    rows, columns = a.shape[:ind], a.shape[ind:]
    if ind <= 0 or math.prod(rows) != math.prod(columns):
        raise TenzrError(f"tensorinv: a of shape {list(a.shape)} with ind={ind} is not square", user_location())
    return tnp.reshape(inv(tnp.reshape(a, (math.prod(rows), -1))), (*columns, *rows))


def tensorsolve(a: ArrayLike, b: ArrayLike, axes: Any = None) -> Array:
    """x with tensordot(a, x, x.ndim) = b, a's `axes` moved to the end first."""
    a, b = promote(tnp._float(a), tnp._float(b))
    if axes is not None:
        a = tnp.moveaxis(a, axes, tuple(range(a.ndim - len(tuple(axes)), a.ndim)))
    unknown = a.shape[b.ndim:]
    if a.shape[:b.ndim] != b.shape or math.prod(unknown) != b.size:
        raise TenzrError(f"tensorsolve: a of shape {list(a.shape)} does not map onto b of shape {list(b.shape)}",
                         user_location())
    return tnp.reshape(solve(tnp.reshape(a, (b.size, -1)), tnp.reshape(b, (b.size,))), unknown)


# --------------------------------------------------------------------------- eigh and svd
#
# Both run cyclic Jacobi sweeps (a fixed number, in a tz.lax.fori_loop): each sweep is n - 1
# steps of n/2 disjoint plane rotations (the round-robin order), each step a few matrix
# products with constant one-hot matrices, so one sweep costs O(n) ops whatever n is.
# Their derivatives are the standard formulas, given as custom JVP rules (reverse mode
# transposes them), not derivatives of the iteration.

_SWEEPS = 12  # Jacobi converges quadratically: 6x6 float64 needs 5-7 sweeps


def _round_robin(n: int) -> list[tuple[list[int], list[int]]]:
    """n - 1 steps (n even) of n/2 disjoint pairs that together cover every pair once."""
    others = list(range(1, n))
    steps = []
    for r in range(n - 1):
        order = [0, *others[r:], *others[:r]]
        pairs = [(order[i], order[n - 1 - i]) for i in range(n // 2)]
        steps.append(([min(pq) for pq in pairs], [max(pq) for pq in pairs]))
    return steps


def _rotation(app: Array, aqq: Array, apq: Array) -> tuple[Array, Array]:
    """(c, s) of the plane rotation that zeroes apq in [[app, apq], [apq, aqq]]
    (Golub and Van Loan's symmetric Schur step); (1, 0) where apq is zero."""
    zero = apq == 0
    tau = (aqq - app) / (2 * tnp.where(zero, 1.0, apq))
    sign = tnp.where(tau >= 0, 1.0, -1.0)
    t = tnp.where(zero, 0.0, sign / (tnp.abs(tau) + tnp.sqrt(1 + tau * tau)))
    c = 1 / tnp.sqrt(1 + t * t)
    return c, t * c


def _jacobi(a: Array, one_sided: bool) -> tuple[Array, Array]:
    """Symmetric Jacobi (a <- J^T a J; returns (diagonalized a, V)) or one-sided Jacobi on
    the columns of a (a <- a J, orthogonalizing them; returns (a V, V))."""
    n = a.shape[-1]
    width = n + n % 2  # an odd n gets a ghost index, which rotates with no one
    if width != n:
        pad = [(0, 0)] * (a.ndim - 1) + [(0, 1)]
        a = tnp.pad(a, pad if one_sided else [*pad[:-2], (0, 1), (0, 1)])
    eye = np.eye(width, dtype=a.dtype)
    steps = [(tnp.asarray(eye[:, p]), tnp.asarray(eye[:, q])) for p, q in _round_robin(width)]

    def sweep(_: Any, state: tuple[Array, Array]) -> tuple[Array, Array]:
        a, v = state
        for ep, eq in steps:
            ap, aq = a @ ep, a @ eq  # the columns p and q of each pair, [..., m, width/2]
            if one_sided:
                app, aqq, apq = (tnp.sum(x * y, -2) for x, y in ((ap, ap), (aq, aq), (ap, aq)))
            else:
                app, aqq, apq = (tnp.sum(x * e, -2) for x, e in ((ap, ep), (aq, eq), (aq, ep)))
            c, s = (x[..., None, :] for x in _rotation(app, aqq, apq))
            # J = Ep diag(c) Ep^T + Eq diag(c) Eq^T + Ep diag(s) Eq^T - Eq diag(s) Ep^T
            j = (ep * c) @ ep.T + (eq * c) @ eq.T + (ep * s) @ eq.T - (eq * s) @ ep.T
            a = a @ j if one_sided else tnp.swapaxes(j, -1, -2) @ a @ j
            v = v @ j
        return a, v

    v = tnp.broadcast_to(tnp.eye(width, dtype=a.dtype), (*a.shape[:-2], width, width))
    a, v = fori_loop(0, _SWEEPS, sweep, (a, v))
    if width != n:
        v = v[..., :n, :n]
        a = a[..., :, :n] if one_sided else a[..., :n, :n]
    return a, v


def _sorted_by(values: Array, vectors: Array, descending: bool) -> tuple[Array, Array]:
    order = tnp.argsort(-values if descending else values, axis=-1)
    return (tnp.take_along_axis(values, order, -1, mode="promise_in_bounds"),
            tnp.take_along_axis(vectors, order[..., None, :], -1, mode="promise_in_bounds"))


def _eigh_of_symmetric(a: Array) -> tuple[Array, Array]:
    d, v = _jacobi(a, one_sided=False)
    return _sorted_by(diagonal(d), v, descending=False)


def _pairwise_inverse(w: Array, square: bool) -> Array:
    """F[..., i, j] = 1 / (w_j - w_i) (or 1 / (w_j^2 - w_i^2)), zero on the diagonal."""
    wi, wj = w[..., :, None], w[..., None, :]
    diff = wj * wj - wi * wi if square else wj - wi
    off = tnp.asarray(1 - np.eye(w.shape[-1], dtype=w.dtype))
    return off / (diff + (1 - off))


_eigh = custom_jvp(_eigh_of_symmetric)


@_eigh.defjvp
def _eigh_jvp(primals: tuple, tangents: tuple) -> tuple:
    (a,), (da,) = primals, tangents
    w, v = _eigh(a)
    vt = tnp.swapaxes(v, -1, -2)
    m = vt @ da @ v
    dw = diagonal(m)
    dv = v @ (_pairwise_inverse(w, square=False) * m)
    return (w, v), (dw, dv)


class EighResult(NamedTuple):
    eigenvalues: Array
    eigenvectors: Array


def eigh(a: ArrayLike, UPLO: str | None = None, symmetrize_input: bool = True) -> EighResult:
    """(eigenvalues ascending, eigenvectors as columns) of a symmetric matrix (or a stack).
    As in JAX, the input is symmetrized first, (a + a^T) / 2; with symmetrize_input=False
    only the triangle UPLO ("L", the default, or "U") is read, as in NumPy. Derivatives
    are the standard ones (they are infinite where two eigenvalues meet)."""
    a = _square(a, "eigh")
    if UPLO not in (None, "L", "U"):
        raise TenzrError(f"eigh: UPLO must be 'L' or 'U', got {UPLO!r}", user_location())
    if symmetrize_input:
        a = (a + tnp.swapaxes(a, -1, -2)) / 2
    else:
        part = tril(a, -1) if UPLO in (None, "L") else triu(a, 1)
        diag = diagonal(a)[..., None] * tnp.eye(a.shape[-1], dtype=a.dtype)
        a = part + tnp.swapaxes(part, -1, -2) + diag
    return EighResult(*_eigh(a))


def eigvalsh(a: ArrayLike, UPLO: str | None = None) -> Array:
    """The eigenvalues (ascending) of a symmetric matrix."""
    return eigh(a, UPLO).eigenvalues


def _svd_of_tall(a: Array) -> tuple[Array, Array, Array]:
    """(U, s, V) of a [..., m, n], m >= n, by one-sided Jacobi: s descending, U [..., m, n]."""
    av, v = _jacobi(a, one_sided=True)
    s, v = _sorted_by(tnp.sqrt(tnp.sum(av * av, -2)), v, descending=True)
    return (a @ v) / tnp.where(s == 0, 1.0, s)[..., None, :], s, v


_svd = custom_jvp(_svd_of_tall)


@_svd.defjvp
def _svd_jvp(primals: tuple, tangents: tuple) -> tuple:
    """JAX's rule for the thin SVD of a tall matrix (m >= n)."""
    (a,), (da,) = primals, tangents
    u, s, v = _svd(a)
    ut = tnp.swapaxes(u, -1, -2)
    ds_full = ut @ da @ v
    ds = diagonal(ds_full)
    f = _pairwise_inverse(s, square=True)
    s_row = s[..., None, :]
    dss, sds = ds_full * s_row, tnp.swapaxes(s_row, -1, -2) * ds_full
    du = u @ (f * (dss + tnp.swapaxes(dss, -1, -2)))
    dv = v @ (f * (sds + tnp.swapaxes(sds, -1, -2)))
    if a.shape[-2] > a.shape[-1]:
        dav = da @ v
        du = du + (dav - u @ (ut @ dav)) / tnp.where(s_row == 0, 1.0, s_row)
    return (u, s, v), (du, ds, dv)


class SVDResult(NamedTuple):
    U: Array
    S: Array
    Vh: Array


def svd(a: ArrayLike, full_matrices: bool = True, compute_uv: bool = True, hermitian: bool = False) -> Any:
    """(U, S, Vh) with a = U diag(S) Vh, S descending, of a matrix [..., m, n] (or S alone
    with compute_uv=False). full_matrices=True completes U or Vh to square orthogonal
    matrices (their extra columns are differentiated as the code that makes them, where
    JAX refuses). `hermitian` is accepted for NumPy's signature and changes nothing."""
    a = _matrix(a, "svd")
    m, n = a.shape[-2:]
    wide = m < n
    u, s, v = _svd(tnp.swapaxes(a, -1, -2) if wide else a)
    if wide:
        u, v = v, u
    if not compute_uv:
        return s
    if full_matrices and m != n:
        k = max(m, n)
        basis = tnp.broadcast_to(tnp.eye(k, dtype=a.dtype), (*a.shape[:-2], k, k))
        short = v if wide else u
        short = _complete(short, basis)
        u, v = (u, short) if wide else (short, v)
    return SVDResult(u, s, tnp.swapaxes(v, -1, -2))


def _complete(q: Array, basis: Array) -> Array:
    """q [..., k, r] with orthonormal columns, extended to k orthonormal columns (Gram-Schmidt
    of the identity's columns against q, keeping the k - r longest remainders in turn)."""
    k, r = q.shape[-2:]
    for _ in range(k - r):
        rest = basis - q @ (tnp.swapaxes(q, -1, -2) @ basis)
        rest = rest - q @ (tnp.swapaxes(q, -1, -2) @ rest)
        lengths = tnp.sqrt(tnp.sum(rest * rest, -2))
        best = tnp.argmax(lengths, axis=-1)[..., None, None]
        column = tnp.take_along_axis(rest, tnp.broadcast_to(best, (*rest.shape[:-1], 1)), -1, mode="promise_in_bounds")
        q = tnp.concatenate([q, column / tnp.sqrt(tnp.sum(column * column, -2, keepdims=True))], -1)
    return q


def pinv(a: ArrayLike, rtol: Any = None, hermitian: bool = False) -> Array:
    """The Moore-Penrose pseudo-inverse, from the SVD: singular values at most
    rtol * max(s) (default 10 max(m, n) eps) count as zero. `hermitian` changes nothing."""
    a = _matrix(a, "pinv")
    u, s, vh = svd(a, full_matrices=False)
    keep = _significant(s, a, rtol)
    s_inv = tnp.where(keep, 1 / tnp.where(keep, s, 1.0), 0.0)
    return tnp.swapaxes(vh, -1, -2) @ (s_inv[..., :, None] * tnp.swapaxes(u, -1, -2))


def lstsq(a: ArrayLike, b: ArrayLike, rcond: Any = None, *,
          numpy_resid: bool = False) -> tuple[Array, Array, Array, Array]:
    """JAX's least squares, from the SVD: (x minimizing |a x - b|, the squared residual of
    each column of b, the rank of a, its singular values). Singular values below
    rcond * max(s) (default eps * max(m, n)) count as zero. The residuals are always
    given, as JAX's (NumPy's numpy_resid=True gives none for some ranks, a shape not known
    while tracing)."""
    if numpy_resid:
        raise TenzrError("lstsq: numpy_resid=True is not supported: NumPy's residuals' shape depends on the rank "
                         "(as JAX's under jit)", user_location())
    a, b = promote(tnp._float(a), tnp._float(b))
    if a.ndim != 2 or b.ndim not in (1, 2) or b.shape[0] != a.shape[0]:
        raise TenzrError(f"lstsq: expects a matrix a [m, n] and b [m] or [m, k], got {list(a.shape)} and "
                         f"{list(b.shape)}", user_location())
    vector = b.ndim == 1
    b2 = b[:, None] if vector else b
    eps = float(np.finfo(real(a).dtype).eps)
    cutoff = eps * max(a.shape) if rcond is None else tnp.where(tnp.asarray(rcond) < 0, eps, rcond)
    u, s, vh = svd(a, full_matrices=False)
    keep = (s > 0) & (s >= cutoff * s[:1])
    s_inv = tnp.where(keep, 1 / tnp.where(keep, s, 1.0), 0.0)
    x = tnp.swapaxes(vh, -1, -2) @ (s_inv[:, None] * (tnp.swapaxes(u, -1, -2) @ b2))
    residuals = tnp.sum((b2 - a @ x) ** 2, axis=0)
    rank = tnp.sum(keep, dtype=default_int())
    return (x[:, 0] if vector else x), residuals, rank, s


def matrix_rank(a: ArrayLike, rtol: Any = None) -> Array:
    """The number of singular values above rtol * max(s) (default 10 max(m, n) eps)."""
    a = tnp._float(a)
    return tnp.sum(_significant(svd(a, compute_uv=False), a, rtol).astype(np.int32), -1)


def _significant(s: Array, a: Array, rtol: Any) -> Array:
    """Which singular values s of a exceed rtol * max(s) (rtol None: 10 max(m, n) eps)."""
    if rtol is None:
        rtol = 10 * max(a.shape[-2:]) * np.finfo(a.dtype).eps
    return s > rtol * tnp.max(s, -1, keepdims=True)


check_arguments(globals(), "tz.linalg.")
