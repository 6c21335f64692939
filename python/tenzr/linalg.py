"""`tz.linalg`: NumPy's and JAX's `linalg` for real matrices (and stacks of them, in the last
two dims): `cholesky`, `solve_triangular`, `det`, `slogdet`, `inv`, `solve`, `qr`, `norm`.

IREE 3.13 compiles neither StableHLO's `cholesky` nor its `triangular_solve` ("failed to
legalize"), so each factorization is written out here in tenzr ops, one vectorized step per
row or column (a matrix of size n costs about 10 n ops). Being ordinary traced code, every
function differentiates to any order, forward and reverse, and batches under `vmap`; the
derivatives are those of the factorization itself (for LU, at its pivoting; for Cholesky
and QR, the standard ones, as the factors are unique).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from tenzr import numpy_api as tnp
from tenzr.core import Array, check_arguments, promote, user_location
from tenzr.dialect.diagnostics import TenzrError
from tenzr.numpy_lib import diagonal, tril, triu

ArrayLike = Any


def _square(a: ArrayLike, what: str) -> Array:
    a = tnp._float(a)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise TenzrError(f"{what}: expects a square matrix (or a stack of them) in the last two dims, got shape "
                         f"{list(a.shape)}", user_location())
    return a


def _rows(n: int) -> Array:
    return tnp.arange(n, dtype=np.int32)


def _dot_rows(m: Array, x: Array) -> Array:
    """m [..., r] times x [..., r, k]: [..., k]."""
    return tnp.einsum("...r,...rk->...k", m, x)


def _triangular(a: Array, b: Array, lower: bool, unit_diagonal: bool) -> Array:
    """x with a x = b, for triangular a [..., n, n] and b [..., n, k], by substitution: one
    row of x per step, from the top (lower) or the bottom (upper)."""
    n = a.shape[-1]
    solved: Array | None = None  # the rows of x found so far, in order
    for i in range(n) if lower else range(n - 1, -1, -1):
        row = b[..., i, :]
        if solved is not None:
            known = a[..., i, :i] if lower else a[..., i, i + 1:]
            row = row - _dot_rows(known, solved)
        if not unit_diagonal:
            row = row / a[..., i, i, None]
        row = row[..., None, :]
        solved = row if solved is None else tnp.concatenate([solved, row] if lower else [row, solved], axis=-2)
    assert solved is not None
    return solved


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


def cholesky(a: ArrayLike, upper: bool = False) -> Array:
    """The Cholesky factor L (lower, L L^T = a) of a symmetric positive definite a, reading
    its lower triangle; with upper=True, L^T. Not positive definite gives NaNs (as JAX)."""
    a = _square(a, "cholesky")
    n = a.shape[-1]
    factor: Array | None = None  # the columns of L found so far, [..., n, j]
    for j in range(n):
        column = a[..., j:, j]
        if factor is not None:
            column = column - tnp.einsum("...ij,...j->...i", factor[..., j:, :], factor[..., j, :])
        column = column / tnp.sqrt(column[..., :1])
        column = tnp.concatenate([tnp.zeros((*a.shape[:-2], j), a.dtype), column], axis=-1)[..., None]
        factor = column if factor is None else tnp.concatenate([factor, column], axis=-1)
    assert factor is not None
    return tnp.swapaxes(factor, -1, -2) if upper else factor


class _LU(NamedTuple):
    lower: Array  # unit lower triangular
    upper: Array
    permutation: Array  # row i of the factored matrix is row permutation[i] of a
    parity: Array  # the permutation's sign, +1 or -1


def _lu(a: Array) -> _LU:
    """P a = L U by Gaussian elimination with partial pivoting, one column per step."""
    n = a.shape[-1]
    batch = a.shape[:-2]
    rows = _rows(n)
    lower = tnp.zeros(a.shape, a.dtype)
    permutation = tnp.broadcast_to(rows, (*batch, n))
    parity = tnp.ones(batch, a.dtype)
    for k in range(n):
        candidates = tnp.where(rows >= k, tnp.abs(a[..., :, k]), -1.0)
        pivot_row = tnp.argmax(candidates, axis=-1).astype(np.int32)[..., None]
        swap = tnp.where(rows == k, pivot_row, tnp.where(rows == pivot_row, k, rows))
        a = tnp.take_along_axis(a, tnp.broadcast_to(swap[..., None], a.shape), axis=-2)
        lower = tnp.take_along_axis(lower, tnp.broadcast_to(swap[..., None], a.shape), axis=-2)
        permutation = tnp.take_along_axis(permutation, swap, axis=-1)
        parity = parity * tnp.where(pivot_row[..., 0] == k, 1.0, -1.0)
        pivot = a[..., k, k]
        safe = tnp.where(pivot == 0, 1.0, pivot)  # a singular column: nothing to eliminate
        factors = tnp.where(rows > k, a[..., :, k] / safe[..., None], 0.0)
        a = a - factors[..., :, None] * a[..., k, None, :]
        lower = lower + factors[..., :, None] * (rows == k).astype(a.dtype)
    return _LU(lower + tnp.eye(n, dtype=a.dtype), triu(a), permutation, parity)


def det(a: ArrayLike) -> Array:
    """The determinant (from an LU factorization with partial pivoting)."""
    lu = _lu(_square(a, "det"))
    return lu.parity * tnp.prod(diagonal(lu.upper, axis1=-2, axis2=-1), axis=-1)


class SlogdetResult(NamedTuple):
    sign: Array
    logabsdet: Array


def slogdet(a: ArrayLike) -> SlogdetResult:
    """(sign, log |det|) of the determinant, without overflow; (0, -inf) when singular."""
    lu = _lu(_square(a, "slogdet"))
    d = diagonal(lu.upper, axis1=-2, axis2=-1)
    return SlogdetResult(lu.parity * tnp.prod(tnp.sign(d), axis=-1), tnp.sum(tnp.log(tnp.abs(d)), axis=-1))


def solve(a: ArrayLike, b: ArrayLike) -> Array:
    """x with a x = b; b is [n] (a vector) or [..., n, k] (NumPy 2's rule)."""
    a = _square(a, "solve")
    a, b = promote(a, b)
    vector = b.ndim == 1
    if (b.shape[0] if vector else b.shape[-2]) != a.shape[-1]:
        raise TenzrError(f"solve: a is {list(a.shape)} but b is {list(b.shape)}", user_location())
    lu = _lu(a)
    lower, b2 = _batched(lu.lower, b[:, None] if vector else b)
    upper, _ = _batched(lu.upper, b2)
    permutation = tnp.broadcast_to(lu.permutation, b2.shape[:-1])
    permuted = tnp.take_along_axis(b2, tnp.broadcast_to(permutation[..., None], b2.shape), axis=-2)
    x = _triangular(upper, _triangular(lower, permuted, True, True), False, False)
    return x[..., 0] if vector else x


def inv(a: ArrayLike) -> Array:
    """The inverse matrix."""
    a = _square(a, "inv")
    return solve(a, tnp.broadcast_to(tnp.eye(a.shape[-1], dtype=a.dtype), a.shape))


def qr(a: ArrayLike, mode: str = "reduced") -> Any:
    """(Q, R) with a = Q R, Q's columns orthonormal and R upper triangular with a positive
    diagonal (Gram-Schmidt, orthogonalizing twice); for [..., m, n] with m >= n. `mode`
    "reduced" (Q is [..., m, n]) or "r" (R alone)."""
    a = tnp._float(a)
    if mode not in ("reduced", "r"):
        raise TenzrError(f"qr: mode {mode!r} is not supported (use 'reduced' or 'r')", user_location())
    if a.ndim < 2 or a.shape[-2] < a.shape[-1]:
        raise TenzrError(f"qr: expects a matrix [..., m, n] with m >= n, got shape {list(a.shape)}", user_location())
    n = a.shape[-1]
    q: Array | None = None
    r_columns = []
    for j in range(n):
        v = a[..., :, j]
        coefficients = None
        if q is not None:
            for _ in range(2):
                c = tnp.einsum("...mj,...m->...j", q, v)
                v = v - tnp.einsum("...mj,...j->...m", q, c)
                coefficients = c if coefficients is None else coefficients + c
        length = tnp.sqrt(tnp.sum(v * v, axis=-1))
        column = (v / length[..., None])[..., None]
        q = column if q is None else tnp.concatenate([q, column], axis=-1)
        below = tnp.zeros((*a.shape[:-2], n - j - 1), a.dtype)
        parts = [length[..., None], below] if coefficients is None else [coefficients, length[..., None], below]
        r_columns.append(tnp.concatenate(parts, axis=-1)[..., None])
    r = tnp.concatenate(r_columns, axis=-1)
    return r if mode == "r" else (q, r)


def norm(x: ArrayLike, ord: Any = None, axis: Any = None, keepdims: bool = False) -> Array:  # noqa: A002
    """NumPy's vector and matrix norms of real input. Vector (`axis` an int, or a 1-D x):
    ord None or 2, 1, inf, -inf, 0 (nonzero count) or any p. Matrix (`axis` a pair, or a
    2-D x): None or "fro", 1, -1, inf, -inf. With ord and axis None, the 2-norm of x
    flattened. The spectral norms (2, -2, "nuc") need an SVD, not available yet."""
    x = tnp._float(x)
    if axis is None:
        if ord is None:
            out = tnp.sqrt(tnp.sum(x * x))
            return tnp.reshape(out, (1,) * x.ndim) if keepdims else out
        if x.ndim not in (1, 2):
            raise TenzrError(f"norm: ord {ord!r} needs axis for an array of rank {x.ndim} (rank 1 or 2 without)",
                             user_location())
        axis = tuple(range(x.ndim))
    axes = tnp._axes(axis, x.ndim)
    if len(axes) == 1:
        if ord is None or ord == 2:
            return tnp.sqrt(tnp.sum(x * x, axes, keepdims=keepdims))
        if ord == np.inf:
            return tnp.max(tnp.abs(x), axes, keepdims=keepdims)
        if ord == -np.inf:
            return tnp.min(tnp.abs(x), axes, keepdims=keepdims)
        if ord == 0:
            return tnp.sum((x != 0).astype(x.dtype), axes, keepdims=keepdims)
        if ord == 1:
            return tnp.sum(tnp.abs(x), axes, keepdims=keepdims)
        if isinstance(ord, str):
            raise TenzrError(f"norm: ord {ord!r} is a matrix norm; give a vector ord or two axes", user_location())
        return tnp.sum(tnp.abs(x) ** ord, axes, keepdims=keepdims) ** (1.0 / ord)
    if len(axes) != 2:
        raise TenzrError(f"norm: axis must be an int or a pair, got {axis!r}", user_location())
    row, col = axes
    if ord is None or ord == "fro":
        return tnp.sqrt(tnp.sum(x * x, axes, keepdims=keepdims))
    if ord in (1, -1, np.inf, -np.inf):
        summed, other = (row, col) if ord in (1, -1) else (col, row)
        sums = tnp.sum(tnp.abs(x), summed, keepdims=True)
        pick = tnp.max if ord in (1, np.inf) else tnp.min
        out = pick(sums, other, keepdims=True)
        return out if keepdims else tnp.squeeze(out, axes)
    raise TenzrError(f"norm: matrix ord {ord!r} is not supported (the spectral norms 2, -2 and 'nuc' need an SVD, "
                     "which tz.linalg does not have yet; supported: None, 'fro', 1, -1, inf, -inf)", user_location())


check_arguments(globals(), "tz.linalg.")
