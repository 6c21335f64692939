"""`tz.scipy.signal`: SciPy's convolutions, with `jax.scipy.signal`'s arguments.

Each is a direct convolution (`tz.lax.conv_general_dilated` with one batch and one
channel), so it differentiates in both operands. `method` is accepted as JAX accepts it;
every method computes the same direct sum.
"""

from __future__ import annotations

import math
from typing import Any

from tenzr import lax
from tenzr import numpy_api as tnp
from tenzr.core import Array, check_arguments, emit, promote, user_location
from tenzr.dialect import ops as T
from tenzr.dialect.diagnostics import TenzrError
from tenzr.numpy_lib import conj, imag, real, tensordot

__all__ = ["convolve", "convolve2d", "correlate", "correlate2d"]

_MODES = ("full", "same", "valid")


def _real_conv(x: Array, k: Array, padding: list[tuple[int, int]]) -> Array:
    return lax.conv_general_dilated(x[None, None], k[None, None], (1,) * x.ndim, padding)[0, 0]


def _convolve_nd(in1: Any, in2: Any, mode: str, name: str) -> Array:
    """JAX's `_convolve_nd`: the operand that is smaller in every dim slides over the other."""
    if mode not in _MODES:
        raise TenzrError(f"{name}: mode must be one of 'full', 'same', 'valid', got {mode!r}", user_location())
    in1, in2 = promote(in1, in2)
    if in1.ndim != in2.ndim or in1.ndim == 0:
        raise TenzrError(f"{name}: in1 and in2 must have the same number of dimensions, at least 1, got shapes "
                         f"{in1.shape} and {in2.shape}", user_location())
    if in1.size == 0 or in2.size == 0:
        raise TenzrError(f"{name}: zero-size arrays are not supported, got shapes {in1.shape} and {in2.shape}",
                         user_location())
    if not in1.is_float:
        in1, in2 = tnp._float(in1), tnp._float(in2)
    larger = all(a >= b for a, b in zip(in1.shape, in2.shape, strict=True))
    smaller = all(a <= b for a, b in zip(in1.shape, in2.shape, strict=True))
    if not (larger or smaller):
        raise TenzrError(f"{name}: one input must be smaller than the other in every dimension, got shapes "
                         f"{in1.shape} and {in2.shape}", user_location())
    shape_o = in2.shape
    if smaller:
        in1, in2 = in2, in1
    shape = in2.shape
    kernel = tnp.flip(in2)
    if mode == "valid":
        padding = [(0, 0) for _ in shape]
    elif mode == "same":
        padding = [(s - 1 - (s_o - 1) // 2, s - s_o + (s_o - 1) // 2) for s, s_o in zip(shape, shape_o, strict=True)]
    else:
        padding = [(s - 1, s - 1) for s in shape]
    if not in1.spec.is_complex:
        return _real_conv(in1, kernel, padding)
    a, b, c, d = real(in1), imag(in1), real(kernel), imag(kernel)
    return emit(T.complex_, _real_conv(a, c, padding) - _real_conv(b, d, padding),
                _real_conv(a, d, padding) + _real_conv(b, c, padding))


def _check_method(method: str, name: str) -> None:
    if method not in ("auto", "direct", "fft"):
        raise TenzrError(f"{name}: method must be 'auto', 'direct' or 'fft', got {method!r}", user_location())


def _check_2d(in1: Any, in2: Any, boundary: str, fillvalue: Any, name: str) -> tuple[Array, Array]:
    if boundary != "fill" or fillvalue != 0:
        raise TenzrError(f"{name}: only boundary='fill' with fillvalue=0 is supported", user_location())
    in1, in2 = tnp.asarray(in1), tnp.asarray(in2)
    if in1.ndim != 2 or in2.ndim != 2:
        raise TenzrError(f"{name}: inputs must be 2-dimensional, got shapes {in1.shape} and {in2.shape}",
                         user_location())
    return in1, in2


def convolve(in1: Any, in2: Any, mode: str = "full", method: str = "auto", precision: Any = None, *,
             axes: Any = None, dot_axes: Any = ((), ())) -> Array:
    """The N-d convolution of in1 and in2 (equal ranks): 'full' (every overlap), 'valid'
    (full overlaps only) or 'same' (in1's shape, centred).

    `axes=(axes1, axes2)` and `dot_axes=(dots1, dots2)` are autograd's generalization (not
    SciPy's or JAX's): in1's `axes1` are convolved with in2's `axes2` ('full' or 'valid'),
    `dots1` contracted with `dots2`, and every other axis kept, the result holding in1's
    kept axes, then in2's, then the convolved ones (a layer of a convolutional network is
    `convolve(images, filters, axes=([2, 3], [2, 3]), dot_axes=([1], [0]), mode='valid')`).
    """
    _check_method(method, "convolve")
    if axes is None and not any(dot_axes):
        return _convolve_nd(in1, in2, mode, "convolve")
    return _convolve_axes(tnp.asarray(in1), tnp.asarray(in2), axes, dot_axes, mode)


def _convolve_axes(a: Array, b: Array, axes: Any, dot_axes: Any, mode: str) -> Array:
    a, b = promote(a, b)
    if a.spec.is_complex:
        raise TenzrError("convolve: axes= and dot_axes= take real inputs", user_location())
    if not a.is_float:
        a, b = tnp._float(a), tnp._float(b)
    conv_a, conv_b = ([*range(a.ndim)], [*range(b.ndim)]) if axes is None else (list(axes[0]), list(axes[1]))
    dot_a, dot_b = list(dot_axes[0]), list(dot_axes[1])
    if mode not in ("full", "valid") or len(conv_a) != len(conv_b) or len(dot_a) != len(dot_b) or \
            [a.shape[i] for i in dot_a] != [b.shape[i] for i in dot_b]:
        raise TenzrError(f"convolve: axes {axes} and dot_axes {dot_axes} (mode {mode!r}) do not pair axes of "
                         f"shapes {a.shape} and {b.shape} ('full' or 'valid', axes of equal sizes contracted)",
                         user_location())
    kept_a = [i for i in range(a.ndim) if i not in conv_a + dot_a]
    kept_b = [i for i in range(b.ndim) if i not in conv_b + dot_b]
    if not conv_a:
        return tensordot(a, b, (dot_a, dot_b))
    sizes_a, sizes_b = [a.shape[i] for i in conv_a], [b.shape[i] for i in conv_b]
    swap = mode == "valid" and not all(m >= n for m, n in zip(sizes_a, sizes_b, strict=True))
    if swap and not all(m <= n for m, n in zip(sizes_a, sizes_b, strict=True)):
        raise TenzrError(f"convolve: in 'valid' mode one input must be larger along every convolved axis, got sizes "
                         f"{sizes_a} and {sizes_b}", user_location())

    def as_conv_operand(x: Array, kept: list[int], dots: list[int], conv: list[int]) -> Array:
        """x as [kept, contracted, convolved...] (NCHW and OIHW alike)."""
        moved = tnp.transpose(x, kept + dots + conv)
        return tnp.reshape(moved, (math.prod(x.shape[i] for i in kept), math.prod(x.shape[i] for i in dots),
                                   *(x.shape[i] for i in conv)))

    image, kernel = as_conv_operand(a, kept_a, dot_a, conv_a), as_conv_operand(b, kept_b, dot_b, conv_b)
    if swap:
        image, kernel = kernel, image
    spatial = range(2, image.ndim)
    padding = [(0, 0) if mode == "valid" else (kernel.shape[d] - 1, kernel.shape[d] - 1) for d in spatial]
    out = lax.conv_general_dilated(image, tnp.flip(kernel, tuple(spatial)), (1,) * len(padding), padding)
    if swap:
        out = tnp.swapaxes(out, 0, 1)
    return tnp.reshape(out, (*(a.shape[i] for i in kept_a), *(b.shape[i] for i in kept_b), *out.shape[2:]))


def correlate(in1: Any, in2: Any, mode: str = "full", method: str = "auto", precision: Any = None) -> Array:
    """The N-d cross-correlation: the convolution of in1 with in2 flipped and conjugated."""
    _check_method(method, "correlate")
    return _convolve_nd(in1, tnp.flip(conj(tnp.asarray(in2))), mode, "correlate")


def convolve2d(in1: Any, in2: Any, mode: str = "full", boundary: str = "fill", fillvalue: Any = 0,
               precision: Any = None) -> Array:
    """`convolve` of two 2-d arrays (zero fill at the boundary only)."""
    in1, in2 = _check_2d(in1, in2, boundary, fillvalue, "convolve2d")
    return _convolve_nd(in1, in2, mode, "convolve2d")


def correlate2d(in1: Any, in2: Any, mode: str = "full", boundary: str = "fill", fillvalue: Any = 0,
                precision: Any = None) -> Array:
    """The 2-d cross-correlation, with SciPy's (and JAX's) order of the output when in2 is
    the larger operand."""
    in1, in2 = _check_2d(in1, in2, boundary, fillvalue, "correlate2d")
    swap = all(a <= b for a, b in zip(in1.shape, in2.shape, strict=True))
    same_shape = in1.shape == in2.shape
    if mode == "full" and swap:
        return conj(_convolve_nd(tnp.flip(in2), conj(in1), mode, "correlate2d"))
    if mode == "valid" and swap and not same_shape:
        return _convolve_nd(tnp.flip(in2), conj(in1), mode, "correlate2d")
    return tnp.flip(_convolve_nd(tnp.flip(in1), conj(in2), mode, "correlate2d"))


check_arguments(globals(), "tz.scipy.signal.")
