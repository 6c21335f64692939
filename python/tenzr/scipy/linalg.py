"""`tz.scipy.linalg`: SciPy's linear algebra names, with `jax.scipy.linalg`'s arguments
(built on tenzr.linalg)."""

from __future__ import annotations

from typing import Any

import numpy as np

from tenzr import linalg
from tenzr import numpy_api as tnp
from tenzr.batching import vmap
from tenzr.control import cond, scan, switch
from tenzr.core import Array, check_arguments, promote, user_location
from tenzr.dialect.diagnostics import TenzrError
from tenzr.linalg import det, inv, solve, solve_triangular
from tenzr.numpy_lib import atleast_2d, conj, ravel
from tenzr.numpy_routines import digitize

__all__ = ["block_diag", "cho_factor", "cho_solve", "cholesky", "det", "expm", "inv", "solve", "solve_triangular",
           "toeplitz"]


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
        r = solve_triangular(q, p) if upper_triangular else solve(q, p)
        return scan(lambda c, i: (cond(i < squarings, lambda x: x @ x, lambda x: x, c), None), r,
                    tnp.arange(max_squarings, dtype=squarings.dtype))[0]

    return cond(squarings > max_squarings, lambda operands: tnp.full_like(operands[0], np.nan), compute, (p, q))


check_arguments(globals(), "tz.scipy.linalg.")
