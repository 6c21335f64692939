"""`tz.scipy.linalg`: SciPy's linear algebra names, with `jax.scipy.linalg`'s arguments
(built on tenzr.linalg)."""

from __future__ import annotations

from typing import Any

from tenzr import linalg
from tenzr import numpy_api as tnp
from tenzr.core import Array, check_arguments
from tenzr.linalg import det, inv, solve, solve_triangular

__all__ = ["cho_factor", "cho_solve", "cholesky", "det", "inv", "solve", "solve_triangular"]


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


check_arguments(globals(), "tz.scipy.linalg.")
