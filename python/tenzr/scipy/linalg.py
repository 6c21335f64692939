"""`tz.scipy.linalg`: SciPy's linear algebra names, with `jax.scipy.linalg`'s arguments
(built on tenzr.linalg)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from tenzr import linalg
from tenzr import numpy_api as tnp
from tenzr.batching import vmap
from tenzr.control import cond, scan, switch
from tenzr.core import Array, check_arguments, promote, user_location
from tenzr.dialect.diagnostics import TenzrError
from tenzr.flags import default_complex, default_float, requested_dtype
from tenzr.forward import custom_jvp
from tenzr.linalg import det, inv, solve_triangular
from tenzr.numpy_lib import atleast_1d, atleast_2d, conj, ravel, tril, triu
from tenzr.numpy_routines import digitize

__all__ = ["block_diag", "cho_factor", "cho_solve", "cholesky", "circulant", "companion", "convolution_matrix", "det",
           "dft", "eigh", "expm", "fiedler", "fiedler_companion", "hadamard", "hankel", "helmert", "hilbert", "inv",
           "invhilbert", "invpascal", "leslie", "lu", "lu_factor", "lu_solve", "pascal", "polar", "qr", "solve",
           "solve_triangular", "svd", "toeplitz"]


def cholesky(a: Any, lower: bool = False) -> Array:
    """The Cholesky factor: upper (U^T U = a, from a's upper triangle) unless lower=True
    (from its lower one); SciPy's default differs from NumPy's."""
    if lower:
        return linalg.cholesky(a, symmetrize_input=False)
    return linalg.cholesky(tnp.swapaxes(tnp.asarray(a), -1, -2), upper=True, symmetrize_input=False)


def cho_factor(a: Any, lower: bool = False) -> tuple[Array, bool]:
    """(the Cholesky factor, lower), for cho_solve."""
    return cholesky(a, lower), lower


def cho_solve(c_and_lower: tuple[Any, bool], b: Any) -> Array:
    """x with a x = b, from cho_factor(a)."""
    c, lower = c_and_lower
    c = tnp._float(c)
    first = solve_triangular(c, b, trans=0 if lower else 1, lower=lower)
    return solve_triangular(c, first, trans=1 if lower else 0, lower=lower)


_ASSUME_A = ("gen", "sym", "her", "pos")


def solve(a: Any, b: Any, lower: bool = False, overwrite_a: bool = False, overwrite_b: bool = False,
          debug: bool = False, check_finite: bool = True, assume_a: str = "gen") -> Array:
    """x with a x = b, as JAX's: by LU of the whole of a for `assume_a` "gen", "sym" and "her"
    (JAX reads both triangles for those, and ignores `lower`); for "pos", by the Cholesky
    factor of a's lower (lower=True) or upper triangle, the other one unread, with JAX's
    derivative (that of a linear solve: a's cotangent is -λ xᵀ over the whole of a, λ the
    solve of x's cotangent). b is [..., n] where a [..., n, n] has one dim more (for "pos";
    [n] otherwise), else [..., n, k]."""
    del overwrite_a, overwrite_b, debug, check_finite
    if assume_a not in _ASSUME_A:
        raise TenzrError(f"solve: assume_a must be one of {', '.join(map(repr, _ASSUME_A))}, got {assume_a!r}",
                         user_location())
    if assume_a != "pos":
        return linalg.solve(a, b)
    a, b = promote(linalg._square(a, "solve"), tnp._float(b))
    if a.spec.is_complex:
        raise TenzrError("solve: assume_a='pos' takes real matrices here (tz's Cholesky factor is real)",
                         user_location())
    vector = a.ndim == b.ndim + 1
    b = b[..., None] if vector else b
    if b.ndim < 2 or b.shape[-2] != a.shape[-1]:
        raise TenzrError(f"solve: a is {list(a.shape)} but b is {list(b.shape[:-1] if vector else b.shape)}",
                         user_location())
    batch = tuple(np.broadcast_shapes(a.shape[:-2], b.shape[:-2]))
    a, b = tnp.broadcast_to(a, batch + a.shape[-2:]), tnp.broadcast_to(b, batch + b.shape[-2:])
    x = _POSITIVE_SOLVES[bool(lower)](a, b)
    return x[..., 0] if vector else x


def _positive_solve(lower: bool, depth: int = 2) -> Any:
    """x with a x = b, a [..., n, n] symmetric positive definite and read from one triangle,
    b [..., n, k]. Its JVP is JAX's `custom_linear_solve`'s: the same solve of db - da x, so
    a's tangent enters through the product with the whole of a, not through the factor. That
    solve is this function one `depth` lower (a custom rule cannot call its own function
    under `grad`), so forward derivatives up to order `depth` are JAX's. `grad` transposes
    the rule's solve into plain triangular solves, so a second derivative taken through
    `grad` goes through the factor (one triangle), unlike JAX's."""
    def by_cholesky(a: Array, b: Array) -> Array:
        return cho_solve(cho_factor(a, lower), b)

    if depth == 0:
        return by_cholesky
    by_cholesky.__name__ = by_cholesky.__qualname__ = f"positive_solve_{'lower' if lower else 'upper'}_{depth}"
    positive_solve = custom_jvp(by_cholesky)
    tangent_solve = _positive_solve(lower, depth - 1)

    @positive_solve.defjvp
    def jvp(primals: tuple, tangents: tuple) -> tuple:
        (a, b), (da, db) = primals, tangents
        x = tangent_solve(a, b)
        return x, tangent_solve(a, db - da @ x)

    return positive_solve


_POSITIVE_SOLVES = {lower: _positive_solve(lower) for lower in (False, True)}


def lu(a: Any, permute_l: bool = False, overwrite_a: bool = False, check_finite: bool = True) -> tuple[Array, ...]:
    """(P, L, U) with a = P L U, of a [..., m, n] (partial pivoting, LAPACK's pivots): P a
    permutation matrix [..., m, m], L unit lower triangular [..., m, k], U upper triangular
    [..., k, n], k = min(m, n); (P L, U) with permute_l=True. Derivatives are those of the
    elimination at its pivoting."""
    del overwrite_a, check_finite  # (SciPy's; nothing to do here, as in JAX)
    factors = linalg._lu(linalg._matrix(a, "lu"))
    m = factors.lower.shape[-2]
    p = (factors.permutation[..., None, :] == np.arange(m)[:, None]).astype(factors.lower.dtype)
    return (p @ factors.lower, factors.upper) if permute_l else (p, factors.lower, factors.upper)


def lu_factor(a: Any, overwrite_a: bool = False, check_finite: bool = True) -> tuple[Array, Array]:
    """(lu, piv) for lu_solve, as LAPACK's getrf: L below the diagonal of lu [..., m, n]
    (its unit diagonal implied) and U on and above it; piv [..., k] (int32, from 0): step j
    swapped rows j and piv[j]."""
    del overwrite_a, check_finite
    factors = linalg._lu(linalg._matrix(a, "lu_factor"), with_pivots=True)
    (m, k), n = factors.lower.shape[-2:], factors.upper.shape[-1]
    lower = tnp.pad(tril(factors.lower, -1), [(0, 0)] * (factors.lower.ndim - 1) + [(0, n - k)])
    upper = tnp.pad(factors.upper, [(0, 0)] * (factors.upper.ndim - 2) + [(0, m - k), (0, 0)])
    assert factors.pivots is not None
    return lower + upper, factors.pivots


def lu_solve(lu_and_piv: tuple[Any, Any], b: Any, trans: int = 0, overwrite_b: bool = False,
             check_finite: bool = True) -> Array:
    """x with a x = b (trans 0) or aᵀ x = b (1 or 2), from lu_factor(a) of a square a; b is
    [n] or [..., n, k]."""
    del overwrite_b, check_finite
    packed, pivots = lu_and_piv
    packed, b = promote(tnp._float(packed), tnp._float(b))
    pivots = tnp.asarray(pivots)
    if packed.ndim < 2 or packed.shape[-1] != packed.shape[-2] or pivots.shape != packed.shape[:-1]:
        raise TenzrError(f"lu_solve: expects lu [..., n, n] and piv [..., n] from lu_factor, got "
                         f"{list(packed.shape)} and {list(pivots.shape)}", user_location())
    if trans not in (0, 1, 2):
        raise TenzrError(f"lu_solve: trans must be 0, 1 or 2, got {trans!r}", user_location())
    n = packed.shape[-1]
    vector = b.ndim == 1
    if (b.shape[0] if vector else b.shape[-2]) != n:
        raise TenzrError(f"lu_solve: lu is {list(packed.shape)} but b is {list(b.shape)}", user_location())
    lower = tril(packed, -1) + tnp.eye(n, dtype=packed.dtype)
    x = linalg._lu_solve(lower, triu(packed), _pivots_to_permutation(pivots, n), b[:, None] if vector else b,
                         transposed=trans != 0)
    return x[..., 0] if vector else x


def _pivots_to_permutation(pivots: Array, m: int) -> Array:
    """The rows [..., m] that LAPACK's row swaps `pivots` [..., k] (step j: rows j and
    pivots[j]) bring to each position."""
    rows = np.arange(m, dtype=np.int32)
    k = pivots.shape[-1]
    pivots = pivots.astype(np.int32)

    def step(j: Array, permutation: Array) -> Array:
        at_j = tnp.broadcast_to(j, (*pivots.shape[:-1], 1))
        other = tnp.take_along_axis(pivots, at_j, -1, mode="clip")
        here, there = (tnp.take_along_axis(permutation, i, -1, mode="clip") for i in (at_j, other))
        return tnp.where(rows == j, there, tnp.where(rows == other, here, permutation))

    return linalg._steps(k, step, tnp.broadcast_to(rows, (*pivots.shape[:-1], m)))


def qr(a: Any, overwrite_a: bool = False, lwork: Any = None, mode: str = "full", pivoting: bool = False,
       check_finite: bool = True) -> tuple[Array, ...]:
    """SciPy's QR (tz.linalg.qr's Householder reflections, LAPACK's signs): `mode` "full"
    (Q [..., m, m], R [..., m, n]), "economic" (Q [..., m, k], R [..., k, n]) or "r" (a
    tuple holding the full R, as SciPy's). Column pivoting is not supported."""
    del overwrite_a, lwork, check_finite
    if pivoting:
        raise TenzrError("qr: pivoting=True is not supported", user_location())
    if mode not in ("full", "economic", "r"):
        raise TenzrError(f"qr: unsupported mode {mode!r} (use 'full', 'economic' or 'r')", user_location())
    q, r = linalg.qr(a, "reduced" if mode == "economic" else "complete")
    return (r,) if mode == "r" else (q, r)


def svd(a: Any, full_matrices: bool = True, compute_uv: bool = True, overwrite_a: bool = False,
        check_finite: bool = True, lapack_driver: str = "gesdd") -> Any:
    """SciPy's SVD (tz.linalg.svd): (U, s, Vh), or s alone with compute_uv=False. Both of
    LAPACK's drivers name the same factorization here."""
    del overwrite_a, check_finite
    if lapack_driver not in ("gesdd", "gesvd"):
        raise TenzrError(f"svd: lapack_driver must be 'gesdd' or 'gesvd', got {lapack_driver!r}", user_location())
    return linalg.svd(a, full_matrices=full_matrices, compute_uv=compute_uv)


def eigh(a: Any, b: Any = None, lower: bool = True, eigvals_only: bool = False, overwrite_a: bool = False,
         overwrite_b: bool = False, turbo: bool = True, eigvals: Any = None, type: int = 1,  # noqa: A002
         check_finite: bool = True) -> Any:
    """SciPy's symmetric eigendecomposition (tz.linalg.eigh): (w ascending, v), or w alone
    with eigvals_only=True. As JAX's, the generalized problem (b) and subsets (eigvals)
    are not supported."""
    del overwrite_a, overwrite_b, turbo, check_finite
    if b is not None or type != 1 or eigvals is not None:
        raise TenzrError("eigh: only the standard problem is supported (b=None, type=1, eigvals=None), as in JAX",
                         user_location())
    w, v = linalg.eigh(a, UPLO="L" if lower else "U")
    return w if eigvals_only else (w, v)


def polar(a: Any, side: str = "right", *, method: str = "qdwh", eps: Any = None,
          max_iterations: Any = None) -> tuple[Array, Array]:
    """(u, p) with a = u p (side "right", p [..., n, n]) or a = p u ("left", p [..., m, m]):
    u with orthonormal columns (or rows) and p symmetric positive semidefinite, from the
    SVD. JAX's iterations (`method="qdwh"`, `eps`, `max_iterations`) converge to the same
    factors, so each method gives them from the SVD."""
    del eps, max_iterations
    if side not in ("right", "left"):
        raise TenzrError(f"polar: side must be 'right' or 'left', got {side!r}", user_location())
    if method not in ("qdwh", "svd"):
        raise TenzrError(f"polar: method must be 'qdwh' or 'svd', got {method!r}", user_location())
    u, s, vh = linalg.svd(linalg._matrix(a, "polar"), full_matrices=False)
    if side == "right":
        return u @ vh, tnp.swapaxes(vh, -1, -2) @ (s[..., :, None] * vh)
    return u @ vh, (u * s[..., None, :]) @ tnp.swapaxes(u, -1, -2)


# -------------------------------------------------------------------------- special matrices
# Those of a size alone are computed here in float64 by their closed forms (SciPy's) and given
# in JAX's dtypes; those of arrays are traced, batched over leading dims as JAX's.


def _of_size(values: np.ndarray, dtype: Any = None) -> Array:
    return tnp.asarray(values.astype(default_float() if dtype is None else requested_dtype(dtype)))


def _size(n: Any, what: str, least: int = 0) -> int:
    if not isinstance(n, (int, np.integer)) or n < least:
        raise TenzrError(f"{what}: n must be an int of at least {least}, got {n!r}", user_location())
    return int(n)


def hilbert(n: int) -> Array:
    """The Hilbert matrix, 1 / (i + j + 1)."""
    i = np.arange(_size(n, "hilbert"), dtype=np.float64)
    return _of_size(1 / (i[:, None] + i + 1))


def invhilbert(n: int) -> Array:
    """The inverse of `hilbert(n)`, by its closed form (floats, as JAX's: its entries
    outgrow float32's integers past n = 6)."""
    n = _size(n, "invhilbert")
    exact = [[(-1) ** (i + j) * (i + j + 1) * math.comb(n + i, n - j - 1) * math.comb(n + j, n - i - 1)
              * math.comb(i + j, i) ** 2 for j in range(n)] for i in range(n)]
    return _of_size(np.array(exact, dtype=np.float64).reshape(n, n))


def _binomials(n: int) -> np.ndarray:
    return np.array([[math.comb(i, j) for j in range(n)] for i in range(n)], dtype=np.float64).reshape(n, n)


def _kind(kind: str | None, what: str) -> str:
    kind = "symmetric" if kind is None else kind
    if kind not in ("symmetric", "lower", "upper"):
        raise TenzrError(f"{what}: kind must be 'symmetric', 'lower' or 'upper', got {kind!r}", user_location())
    return kind


def pascal(n: int, kind: str | None = None) -> Array:
    """The Pascal matrix (binomials; `kind` "symmetric", "lower" or "upper"), in float32 as JAX's."""
    lower = _binomials(_size(n, "pascal"))
    kind = _kind(kind, "pascal")
    return _of_size(lower if kind == "lower" else lower.T if kind == "upper" else lower @ lower.T, np.float32)


def invpascal(n: int, kind: str | None = None) -> Array:
    """The inverse of `pascal(n, kind)`: (-1)^(i - j) binom(i, j) below the diagonal."""
    n = _size(n, "invpascal")
    signs = (-1.0) ** (np.arange(n)[:, None] - np.arange(n))
    lower = _binomials(n) * signs
    kind = _kind(kind, "invpascal")
    return _of_size(lower if kind == "lower" else lower.T if kind == "upper" else lower.T @ lower)


def helmert(n: int, full: bool = False) -> Array:
    """The Helmert matrix: rows k = 1..n-1 are (1, ..., 1, -k, 0, ...) / sqrt(k (k + 1)) (k
    ones), after a row of 1 / sqrt(n) with full=True."""
    n = _size(n, "helmert", 1)
    k = np.arange(1, n, dtype=np.float64)[:, None]
    j = np.arange(n)
    rows = np.where(j < k, 1.0, np.where(j == k, -k, 0.0)) / np.sqrt(k * (k + 1))
    return _of_size(np.concatenate([np.full((1, n), 1 / np.sqrt(n)), rows]) if full else rows)


def hadamard(n: int, dtype: Any = int) -> Array:
    """The Sylvester Hadamard matrix of order n, a power of 2."""
    n = _size(n, "hadamard", 1)
    if n & (n - 1):
        raise TenzrError(f"hadamard: n must be a power of 2, got {n}", user_location())
    h = np.ones((1, 1))
    while h.shape[0] < n:
        h = np.block([[h, h], [h, -h]])
    return tnp.asarray(h.astype(requested_dtype(dtype)))


def dft(n: int, scale: str | None = None, *, dtype: Any = None) -> Array:
    """The DFT matrix exp(-2 pi i j k / n), unscaled, or scaled by 1 / sqrt(n) ("sqrtn") or
    1 / n ("n")."""
    n = _size(n, "dft")
    if scale not in (None, "sqrtn", "n"):
        raise TenzrError(f"dft: scale must be None, 'sqrtn' or 'n', got {scale!r}", user_location())
    dtype = default_complex() if dtype is None else requested_dtype(dtype)
    if not np.issubdtype(dtype, np.complexfloating):
        raise TenzrError(f"dft: dtype must be complex, got {dtype}", user_location())
    j = np.arange(n)
    omegas = np.exp(-2j * np.pi * (j[:, None] * j % max(n, 1)) / max(n, 1))
    return _of_size(omegas / {None: 1, "sqrtn": np.sqrt(n), "n": n}[scale], dtype)


def circulant(c: Any) -> Array:
    """The circulant matrices [..., n, n] with first columns c [..., n]: entry (i, j) is
    c[(i - j) mod n]."""
    c = atleast_1d(tnp.asarray(c))
    n = c.shape[-1]
    return tnp.take(c, (np.arange(n)[:, None] - np.arange(n)) % max(n, 1), axis=-1, mode="promise_in_bounds")


def hankel(c: Any, r: Any = None) -> Array:
    """The Hankel matrices [..., n, m] with first columns c [..., n] and last rows r [..., m]
    (zeros when None; r[0] is not read): entry (i, j) is (c, r[1:])[i + j]."""
    c = atleast_1d(tnp.asarray(c))
    c, r = promote(c, tnp.zeros_like(c) if r is None else atleast_1d(tnp.asarray(r)))
    batch = np.broadcast_shapes(c.shape[:-1], r.shape[:-1])
    values = tnp.concatenate([tnp.broadcast_to(c, (*batch, c.shape[-1])),
                              tnp.broadcast_to(r, (*batch, r.shape[-1]))[..., 1:]], -1)
    return tnp.take(values, np.arange(c.shape[-1])[:, None] + np.arange(r.shape[-1]), axis=-1, mode="promise_in_bounds")


def fiedler(a: Any) -> Array:
    """The symmetric Fiedler matrices |a_i - a_j| of a [..., n]."""
    a = atleast_1d(tnp.asarray(a))
    return tnp.abs(a[..., :, None] - a[..., None, :])


def _polynomial(a: Any, what: str, least: int) -> Array:
    a = atleast_1d(tnp._float(a))
    if a.shape[-1] < least:
        raise TenzrError(f"{what}: expects at least {least} coefficients, got {a.shape[-1]}", user_location())
    return a


def companion(a: Any) -> Array:
    """The companion matrices [..., n - 1, n - 1] of the polynomials a [..., n] (first
    coefficient first): first row -a[1:] / a[0], ones below the diagonal."""
    a = _polynomial(a, "companion", 2)
    m = a.shape[-1] - 1
    first = -a[..., 1:] / a[..., :1]
    below = tnp.broadcast_to(tnp.eye(m - 1, m, dtype=a.dtype), (*a.shape[:-1], m - 1, m))
    return tnp.concatenate([first[..., None, :], below], -2)


def fiedler_companion(a: Any) -> Array:
    """Fiedler's pentadiagonal companion matrices [..., n - 1, n - 1] of the polynomials
    a [..., n] (first coefficient first), with the polynomial's roots as eigenvalues."""
    a = _polynomial(a, "fiedler_companion", 1)
    n = a.shape[-1] - 1
    a = a / a[..., :1]
    if n <= 1:
        return -a[..., 1:, None]
    i, j = np.arange(n)[:, None], np.arange(n)
    even, odd = i % 2 == 0, i % 2 == 1
    above = tnp.take(-a, np.minimum(i + 2, n) + 0 * j, axis=-1)  # -a[i + 2]
    beside = tnp.take(-a, np.minimum(i + 1, n) + 0 * j, axis=-1)  # -a[i + 1]
    out = tnp.where((i == 0) & (j == 0), -a[..., 1:2, None], 0.0)
    out = tnp.where((i == 1) & (j == 0), 1.0, out)
    out = tnp.where(even & (j == i + 1), above, out)
    out = tnp.where(even & (j == i + 2), 1.0, out)
    out = tnp.where(even & (i >= 2) & (j == i - 1), beside, out)
    return tnp.where(odd & (i >= 3) & (j == i - 2), 1.0, out)


def leslie(f: Any, s: Any) -> Array:
    """The Leslie matrices [..., n, n]: fecundities f [..., n] as the first row, survivals
    s [..., n - 1] below the diagonal."""
    f, s = promote(atleast_1d(tnp.asarray(f)), atleast_1d(tnp.asarray(s)))
    n = f.shape[-1]
    if n < 2 or s.shape[-1] != n - 1:
        raise TenzrError(f"leslie: expects f [..., n] (n >= 2) and s [..., n - 1], got {list(f.shape)} and "
                         f"{list(s.shape)}", user_location())
    batch = np.broadcast_shapes(f.shape[:-1], s.shape[:-1])
    below = tnp.broadcast_to(s, (*batch, n - 1))[..., :, None] * np.eye(n - 1, n)
    return tnp.concatenate([tnp.broadcast_to(f, (*batch, n))[..., None, :], below], -2)


def convolution_matrix(a: Any, n: int, mode: str = "full") -> Array:
    """The Toeplitz matrices [..., k, n] whose product with v [n] is convolve(a, v, mode)
    for a [..., m]: k = m + n - 1 ("full"), max(m, n) ("same") or max(m, n) - min(m, n) + 1
    ("valid")."""
    n = _size(n, "convolution_matrix", 1)
    a = tnp.asarray(a)
    if a.ndim == 0 or a.shape[-1] < 1:
        raise TenzrError("convolution_matrix: a must have at least one element along its last axis", user_location())
    if mode not in ("full", "same", "valid"):
        raise TenzrError(f"convolution_matrix: mode must be 'full', 'same' or 'valid', got {mode!r}", user_location())
    m = a.shape[-1]
    trim = min(m, n) - 1
    first = {"full": 0, "same": trim // 2, "valid": trim}[mode]
    rows = {"full": m + n - 1, "same": max(m, n), "valid": max(m, n) - trim}[mode]
    index = np.arange(first, first + rows)[:, None] - np.arange(n)
    inside = (index >= 0) & (index < m)
    entries = tnp.take(a, np.clip(index, 0, m - 1), axis=-1, mode="promise_in_bounds")
    return tnp.where(inside, entries, tnp.zeros((), a.dtype))


def block_diag(*arrs: Any) -> Array:
    """The block-diagonal matrix of `arrs` (each 0-, 1- or 2-d; a 1-d one is a row)."""
    if not arrs:
        return tnp.zeros((1, 0))
    blocks = [atleast_2d(b) for b in promote(*arrs)]
    if any(b.ndim > 2 for b in blocks):
        raise TenzrError("block_diag: each input must have at most 2 dims", user_location())
    width = sum(b.shape[1] for b in blocks)
    rows, before = [], 0
    for b in blocks:
        rows.append(tnp.pad(b, ((0, 0), (before, width - before - b.shape[1]))))
        before += b.shape[1]
    return tnp.concatenate(rows, 0)


def toeplitz(c: Any, r: Any = None) -> Array:
    """The Toeplitz matrix with first column c and first row r (c's conjugate when None; r[0]
    is not read); both are flattened, as SciPy's."""
    c = ravel(c)
    c, r = promote(c, conj(c) if r is None else ravel(r))
    values = tnp.concatenate([r[1:][::-1], c])  # (r reversed, then c: entry (i, j) is values[i - j + len(r) - 1])
    i, j = np.arange(c.shape[0])[:, None], np.arange(r.shape[0])[None, :]
    return tnp.take(values, i - j + r.shape[0] - 1, mode="promise_in_bounds")


_PADE = {3: (120., 60., 12., 1.),
         5: (30240., 15120., 3360., 420., 30., 1.),
         7: (17297280., 8648640., 1995840., 277200., 25200., 1512., 56., 1.),
         9: (17643225600., 8821612800., 2075673600., 302702400., 30270240., 2162160., 110880., 3960., 90., 1.),
         13: (64764752532480000., 32382376266240000., 7771770303897600., 1187353796428800., 129060195264000.,
              10559470521600., 670442572800., 33522128640., 1323241920., 40840800., 960960., 16380., 182., 1.)}
"""Padé coefficients b_0..b_m of each order m (Higham 2005)."""


def _pade(order: int) -> Any:
    """(U, V) of `order`'s Padé approximant of exp(A) = (V - U)^-1 (V + U), as JAX computes
    them (U from A times the odd terms, V the even ones; order 13 nested as Higham's)."""
    b = _PADE[order]

    def uv(a: Array) -> tuple[Array, Array]:
        identity = tnp.eye(a.shape[-1], dtype=a.dtype)
        a2 = a @ a
        if order == 13:
            a4 = a2 @ a2
            a6 = a4 @ a2
            u = a @ (a6 @ (b[13] * a6 + b[11] * a4 + b[9] * a2) + b[7] * a6 + b[5] * a4 + b[3] * a2 + b[1] * identity)
            v = a6 @ (b[12] * a6 + b[10] * a4 + b[8] * a2) + b[6] * a6 + b[4] * a4 + b[2] * a2 + b[0] * identity
            return u, v
        powers = [identity, a2]
        while len(powers) <= order // 2:
            powers.append(powers[-1] @ a2)
        odd, even = b[1] * identity, b[0] * identity
        for k, p in enumerate(powers[1:], 1):
            odd, even = odd + b[2 * k + 1] * p, even + b[2 * k] * p
        return a @ odd, even

    return uv


def expm(A: Any, *, upper_triangular: bool = False, max_squarings: int = 16) -> Array:
    """exp(A), as JAX's `jax.scipy.linalg.expm`: scaling and squaring with a Padé approximant
    (orders 3, 5, 7, 9 or 13 in float64, 3, 5 or 7 in float32, chosen by A's 1-norm); NaN
    where more than `max_squarings` squarings would be needed. Leading dims are a stack."""
    a = tnp._float(A)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise TenzrError(f"expm: A must be a square matrix (or a stack of them), got shape {list(a.shape)}",
                         user_location())
    if a.ndim > 2:
        return vmap(lambda m: expm(m, upper_triangular=upper_triangular, max_squarings=max_squarings))(a)
    norm = linalg.norm(a, 1)
    double = a.dtype in (np.float64, np.complex128)
    largest, orders, bounds = ((5.371920351148152, (3, 5, 7, 9, 13),
                                [1.495585217958292e-002, 2.539398330063230e-001, 9.504178996162932e-001,
                                 2.097847961257068e+000]) if double else
                               (3.925724783138660, (3, 5, 7), [4.258730016922831e-001, 1.880152677804762e+000]))
    squarings = tnp.maximum(0, tnp.floor(tnp.log2(norm / largest)))
    scaled = a / (2 ** squarings).astype(a.dtype)
    u, v = switch(digitize(norm, np.asarray(bounds, norm.dtype)), [_pade(m) for m in orders], scaled)
    p, q = u + v, v - u

    def compute(operands: tuple[Array, Array]) -> Array:
        p, q = operands
        r = solve_triangular(q, p) if upper_triangular else linalg.solve(q, p)
        return scan(lambda c, i: (cond(i < squarings, lambda x: x @ x, lambda x: x, c), None), r,
                    tnp.arange(max_squarings, dtype=squarings.dtype))[0]

    return cond(squarings > max_squarings, lambda operands: tnp.full_like(operands[0], np.nan), compute, (p, q))


check_arguments(globals(), "tz.scipy.linalg.")
