"""`tz.fft`: NumPy's and JAX's discrete Fourier transforms: `fft`, `ifft`, `rfft`, `irfft`,
`hfft`, `ihfft`, their 2-d and n-d forms, `fftshift`, `ifftshift`, `fftfreq`, `rfftfreq`.

IREE 3.13 lowers StableHLO's `fft` only for real inputs of power-of-two lengths, so each
transform along an axis is a product with its DFT matrix (n² multiply-adds for a length
n: meant for the small and medium sizes of models and tests, not for signal processing
at scale). Being ordinary traced code, every transform differentiates (its derivative is
the transform's own linear map), forward and reverse, and batches under `vmap`. A complex
transform is one complex matmul; the real-to-complex and complex-to-real ones multiply the
real and imaginary parts by real cosine and sine matrices, so that `irfft` reads exactly
what NumPy's reads (the imaginary parts of the zero and Nyquist terms are ignored).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from tenzr import numpy_api as tnp
from tenzr.core import Array, asarray, check_arguments, emit, user_location
from tenzr.dialect import ops as T
from tenzr.dialect.diagnostics import TenzrError
from tenzr.flags import default_float, requested_dtype
from tenzr.numpy_lib import conj, imag, real, roll

ArrayLike = Any
_NORMS = ("backward", "ortho", "forward")


def _scale(norm: str | None, n: int, inverse: bool) -> float:
    """The factor NumPy's `norm` puts on a transform of length n."""
    norm = norm or "backward"
    if norm not in _NORMS:
        raise TenzrError(f"norm must be one of {', '.join(_NORMS)} or None, got {norm!r}", user_location())
    if norm == "ortho":
        return 1 / np.sqrt(n)
    return 1 / n if (norm == "backward") == inverse else 1.0


def _resized(x: Array, n: int, axis: int) -> Array:
    """x cropped or zero-padded to length n along axis (NumPy's `n`)."""
    size = x.shape[axis]
    if n < 1:
        raise TenzrError(f"invalid number of data points ({n}) specified", user_location())
    if n < size:
        return tnp.take(x, np.arange(n), axis=axis)
    if n > size:
        widths = [(0, 0)] * x.ndim
        widths[axis] = (0, n - size)
        return tnp.pad(x, widths)
    return x


def _along(x: Array, axis: int, matrix: np.ndarray) -> Array:
    """x's axis `axis` (length n) mapped by `matrix` [m, n] (a NumPy constant)."""
    moved = tnp.moveaxis(x, axis, -1)
    out = tnp.matmul(moved, asarray(matrix.T.astype(_constant_dtype(x, matrix))))
    return tnp.moveaxis(out, -1, axis)


def _constant_dtype(x: Array, matrix: np.ndarray) -> np.dtype:
    """The matrix's dtype at x's precision."""
    single = x.dtype in (np.float32, np.complex64, np.float16)
    if np.iscomplexobj(matrix):
        return np.dtype(np.complex64 if single else np.complex128)
    return np.dtype(np.float32 if single else np.float64)


def _check_axis(x: Array, axis: int) -> int:
    if not -x.ndim <= axis < x.ndim:
        raise TenzrError(f"axis {axis} is out of bounds for an array of dimension {x.ndim}", user_location())
    return axis % x.ndim


def _complex(x: ArrayLike) -> Array:
    x = tnp._float(x)
    return x if x.spec.is_complex else x.astype(np.complex64 if x.dtype != np.float64 else np.complex128)


def _real(x: ArrayLike, what: str) -> Array:
    x = tnp._float(x)
    if x.spec.is_complex:
        raise TenzrError(f"{what} takes real input, got {x.dtype}", user_location())
    return x


def _dft(n_out: int, n_in: int, inverse: bool) -> np.ndarray:
    """The [n_out, n_in] matrix exp(∓2πi·k·j/n_in) (its rows are frequencies k)."""
    k, j = np.arange(n_out)[:, None], np.arange(n_in)[None, :]
    return np.exp((2j if inverse else -2j) * np.pi * ((k * j) % n_in) / n_in)


def fft(a: ArrayLike, n: int | None = None, axis: int = -1, norm: str | None = None) -> Array:
    """The 1-d discrete Fourier transform along `axis`, cropped or zero-padded to n."""
    x = _complex(a)
    axis = _check_axis(x, axis)
    n = x.shape[axis] if n is None else n
    x = _resized(x, n, axis)
    return _along(x, axis, _dft(n, n, inverse=False) * _scale(norm, n, inverse=False))


def ifft(a: ArrayLike, n: int | None = None, axis: int = -1, norm: str | None = None) -> Array:
    """The inverse of fft along `axis`."""
    x = _complex(a)
    axis = _check_axis(x, axis)
    n = x.shape[axis] if n is None else n
    x = _resized(x, n, axis)
    return _along(x, axis, _dft(n, n, inverse=True) * _scale(norm, n, inverse=True))


def rfft(a: ArrayLike, n: int | None = None, axis: int = -1, norm: str | None = None) -> Array:
    """The fft of real input: the n//2 + 1 non-negative frequencies."""
    x = _real(a, "rfft")
    axis = _check_axis(x, axis)
    n = x.shape[axis] if n is None else n
    x = _resized(x, n, axis)
    w = _dft(n // 2 + 1, n, inverse=False) * _scale(norm, n, inverse=False)
    return emit(T.complex_, _along(x, axis, w.real), _along(x, axis, w.imag))


def irfft(a: ArrayLike, n: int | None = None, axis: int = -1, norm: str | None = None) -> Array:
    """The real inverse of rfft: n real points (2·(m - 1) from m frequencies by default)."""
    x = _complex(a)
    axis = _check_axis(x, axis)
    n = 2 * (x.shape[axis] - 1) if n is None else n
    m = n // 2 + 1
    x = _resized(x, m, axis)
    # x_t = Σ_k c_k Re(X_k e^{2πikt/n}) with c_k = 2 for the frequencies that stand for two
    weights = np.full(m, 2.0)
    weights[0] = 1.0
    if n % 2 == 0:
        weights[-1] = 1.0
    angle = 2 * np.pi * np.outer(np.arange(n), np.arange(m)) / n
    scale = _scale(norm, n, inverse=True)
    cosines, sines = np.cos(angle) * weights * scale, np.sin(angle) * weights * scale
    return _along(real(x), axis, cosines) - _along(imag(x), axis, sines)


def hfft(a: ArrayLike, n: int | None = None, axis: int = -1, norm: str | None = None) -> Array:
    """The fft of a Hermitian-symmetric signal given by its first half: real output."""
    return irfft(conj(_complex(a)), n, axis, _swapped(norm))


def ihfft(a: ArrayLike, n: int | None = None, axis: int = -1, norm: str | None = None) -> Array:
    """The inverse of hfft: the first half of the spectrum of real input."""
    return conj(rfft(_real(a, "ihfft"), n, axis, _swapped(norm)))


def _swapped(norm: str | None) -> str:
    """The normalization of the opposite direction (hfft is an irfft, as in NumPy)."""
    return {"backward": "forward", "forward": "backward"}.get(norm or "backward", norm or "backward")


def _plan(x: Array, s: Sequence[int] | None, axes: Sequence[int] | None, default_axes: Sequence[int] | None,
          last_is_half: bool = False) -> tuple[list[int], list[int | None]]:
    """The axes and lengths of an n-d transform, as NumPy reads `s` and `axes`."""
    if axes is None:
        axes = list(range(x.ndim - len(s), x.ndim)) if s is not None else \
            (list(default_axes) if default_axes is not None else list(range(x.ndim)))
    axes = [_check_axis(x, a) for a in axes]
    if len(set(axes)) != len(axes):
        raise TenzrError(f"repeated axes {list(axes)} are not supported", user_location())
    if s is None:
        lengths: list[int | None] = [None] * len(axes)
    else:
        if len(s) != len(axes):
            raise TenzrError(f"s has {len(s)} entries but axes has {len(axes)}", user_location())
        lengths = list(s)
    return axes, lengths


def _nd(one: Any, a: ArrayLike, s: Sequence[int] | None, axes: Sequence[int] | None, norm: str | None,
        default_axes: Sequence[int] | None = None) -> Array:
    x = asarray(a)
    axes, lengths = _plan(x, s, axes, default_axes)
    for axis, n in zip(axes, lengths, strict=True):
        x = one(x, n, axis, norm)
    return x


def fftn(a: ArrayLike, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
         norm: str | None = None) -> Array:
    """The n-d fft over `axes` (all by default), cropped or padded to `s`."""
    return _nd(fft, a, s, axes, norm)


def ifftn(a: ArrayLike, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
          norm: str | None = None) -> Array:
    """The inverse of fftn."""
    return _nd(ifft, a, s, axes, norm)


def fft2(a: ArrayLike, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
         norm: str | None = None) -> Array:
    """The 2-d fft over the last two axes."""
    return _nd(fft, a, s, axes, norm)


def ifft2(a: ArrayLike, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
          norm: str | None = None) -> Array:
    """The inverse of fft2."""
    return _nd(ifft, a, s, axes, norm)


def rfftn(a: ArrayLike, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
          norm: str | None = None) -> Array:
    """The n-d fft of real input: rfft over the last of `axes`, fft over the others."""
    x = _real(a, "rfftn")
    axes, lengths = _plan(x, s, axes, None)
    x = rfft(x, lengths[-1], axes[-1], norm)
    for axis, n in zip(axes[:-1], lengths[:-1], strict=True):
        x = fft(x, n, axis, norm)
    return x


def irfftn(a: ArrayLike, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
           norm: str | None = None) -> Array:
    """The inverse of rfftn: ifft over all but the last of `axes`, irfft over the last."""
    x = _complex(a)
    axes, lengths = _plan(x, s, axes, None)
    for axis, n in zip(axes[:-1], lengths[:-1], strict=True):
        x = ifft(x, n, axis, norm)
    return irfft(x, lengths[-1], axes[-1], norm)


def rfft2(a: ArrayLike, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
          norm: str | None = None) -> Array:
    """The 2-d rfftn over the last two axes."""
    return rfftn(a, s, axes, norm)


def irfft2(a: ArrayLike, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
           norm: str | None = None) -> Array:
    """The inverse of rfft2."""
    return irfftn(a, s, axes, norm)


def _shift(x: ArrayLike, axes: int | Sequence[int] | None, inverse: bool) -> Array:
    x = asarray(x)
    axes = list(range(x.ndim)) if axes is None else [axes] if isinstance(axes, int) else list(axes)
    shifts = [(-(x.shape[a] // 2) if inverse else x.shape[a] // 2) for a in axes]
    return roll(x, shifts, axes)


def fftshift(x: ArrayLike, axes: int | Sequence[int] | None = None) -> Array:
    """The zero frequency moved to the center of `axes` (all by default)."""
    return _shift(x, axes, inverse=False)


def ifftshift(x: ArrayLike, axes: int | Sequence[int] | None = None) -> Array:
    """The inverse of fftshift."""
    return _shift(x, axes, inverse=True)


check_arguments(globals(), "tz.fft.")


def fftfreq(n: int, d: Any = 1.0, *, dtype: Any = None) -> Any:
    """The sample frequencies of an fft of length n with spacing d, JAX's: computed in
    `dtype` (the default float; a complex dtype's real part, an integer dtype's default
    float) and given as `dtype`. A constant unless d is a traced array."""
    out = _frequency_dtype(n, d, dtype, "fftfreq")
    kind = out if out.kind in "fV" else np.finfo(out).dtype if out.kind == "c" else default_float()
    i = np.arange(n).astype(kind)
    k = (i + kind.type(n // 2)) % kind.type(n) - kind.type(n // 2)
    return _divided(k, d, n).astype(out)


def rfftfreq(n: int, d: Any = 1.0, *, dtype: Any = None) -> Any:
    """The sample frequencies of an rfft of length n with spacing d, JAX's: 0 .. n // 2 in
    `dtype` (the default float) over d·n in it; integers give the default float, as JAX's
    true division. A constant unless d is a traced array."""
    kind = _frequency_dtype(n, d, dtype, "rfftfreq")
    return _divided(np.arange(n // 2 + 1).astype(kind), d, n)


def _frequency_dtype(n: Any, d: Any, dtype: Any, what: str) -> np.dtype:
    """`dtype` as fftfreq and rfftfreq read it (None: the default float), once n is an int
    and d one value, as JAX checks."""
    if not isinstance(n, (int, np.integer)):
        raise TenzrError(f"{what}: n must be an int, got {n!r}", user_location())
    if isinstance(d, (list, tuple)):
        raise TenzrError(f"{what}: d must be a single value, got {list(d)}", user_location())
    return default_float() if dtype is None else requested_dtype(dtype)


def _divided(k: np.ndarray, d: Any, n: int) -> Any:
    """k / (d·n), d·n in k's dtype (JAX's true division: integers give the default float)."""
    if isinstance(d, Array):
        return tnp.true_divide(asarray(k), (d * n).astype(k.dtype))
    with np.errstate(divide="ignore", invalid="ignore"):  # (rfftfreq(0) is [nan], as JAX's)
        quotient = k / np.array(d * n).astype(k.dtype)
    return quotient.astype(default_float()) if k.dtype.kind in "iub" else quotient
