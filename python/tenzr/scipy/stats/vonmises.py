"""`tz.scipy.stats.vonmises`: the von Mises distribution on the circle, concentration `kappa`
about 0."""

from __future__ import annotations

from typing import Any

import numpy as np

from tenzr import lax
from tenzr import numpy_api as tnp
from tenzr.core import Array, check_arguments, promote

__all__ = ["logpdf", "pdf"]


def logpdf(x: Any, kappa: Any) -> Array:
    """kappa (cos x - 1) - log(2 pi i0e(kappa)): exp(kappa cos x) / (2 pi I0(kappa)) without
    overflow; NaN for kappa <= 0."""
    x, kappa = promote(tnp._float(x), kappa)
    out = kappa * (tnp.cos(x) - 1) - tnp.log(2 * np.pi * lax.bessel_i0e(kappa))
    return tnp.where(kappa > 0, out, np.nan)


def pdf(x: Any, kappa: Any) -> Array:
    """The density at x."""
    return tnp.exp(logpdf(x, kappa))


check_arguments(globals(), "tz.scipy.stats.vonmises.")
