"""`tz.image`, as JAX's `jax.image`: resizing and resampling images (any dims, any rank).

Each resized dim is a product with a weight matrix computed on the host (the shapes, scales
and translations are known while tracing): output pixel j samples the input at
(j + 0.5) / scale - translation / scale - 0.5, weighted by a kernel of the distance,
widened by 1/scale when downsampling with `antialias`, normalised, and zero where the
sample falls outside the input, as JAX's.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import tenzr as tz  # (its public functions: they run eagerly too)
from tenzr.core import user_location
from tenzr.dialect.diagnostics import TenzrError


class ResizeMethod(enum.Enum):
    """JAX's resize methods; `from_string` takes their names ("bilinear", "lanczos3", ...)."""

    NEAREST = 0
    LINEAR = 1
    LANCZOS3 = 2
    LANCZOS5 = 3
    CUBIC = 4
    CUBIC_PYTORCH = 5
    AREA = 6

    @staticmethod
    def from_string(s: str) -> ResizeMethod:
        named = {"nearest": ResizeMethod.NEAREST, "linear": ResizeMethod.LINEAR, "bilinear": ResizeMethod.LINEAR,
                 "trilinear": ResizeMethod.LINEAR, "triangle": ResizeMethod.LINEAR,
                 "lanczos3": ResizeMethod.LANCZOS3, "lanczos5": ResizeMethod.LANCZOS5, "cubic": ResizeMethod.CUBIC,
                 "bicubic": ResizeMethod.CUBIC, "tricubic": ResizeMethod.CUBIC,
                 "cubic-pytorch": ResizeMethod.CUBIC_PYTORCH, "bicubic-pytorch": ResizeMethod.CUBIC_PYTORCH,
                 "area": ResizeMethod.AREA}
        if s not in named:
            raise TenzrError(f"unknown resize method '{s}' (choose one of: {', '.join(named)})", user_location())
        return named[s]


def _lanczos(radius: float) -> Callable[[np.ndarray], np.ndarray]:
    def kernel(x: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            y = radius * np.sin(np.pi * x) * np.sin(np.pi * x / radius) / (np.pi ** 2 * x ** 2)
        return np.where(x > radius, 0.0, np.where(x > 1e-3, y, 1.0))

    return kernel


def _cubic(a: float) -> Callable[[np.ndarray], np.ndarray]:
    """Keys' cubic convolution kernel with parameter `a` (-0.5: Keys', Pillow's and
    TensorFlow's; -0.75: OpenCV's and PyTorch's without antialiasing)."""
    def kernel(x: np.ndarray) -> np.ndarray:
        near = ((a + 2) * x - (a + 3)) * x * x + 1
        far = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
        return np.where(x >= 2, 0.0, np.where(x >= 1, far, near))

    return kernel


_KERNELS: dict[ResizeMethod, tuple[int, Callable[[np.ndarray], np.ndarray] | None]] = {
    ResizeMethod.LINEAR: (1, lambda x: np.maximum(0.0, 1 - np.abs(x))),
    ResizeMethod.LANCZOS3: (3, _lanczos(3.0)),
    ResizeMethod.LANCZOS5: (5, _lanczos(5.0)),
    ResizeMethod.CUBIC: (2, _cubic(-0.5)),
    ResizeMethod.CUBIC_PYTORCH: (2, _cubic(-0.75)),
    ResizeMethod.AREA: (1, None),  # (the overlap of the pixels' intervals, not a kernel)
}
"""Each method's kernel radius and kernel."""


def _weights(size_in: int, size_out: int, scale: float, translation: float, method: ResizeMethod,
             antialias: bool, edge_padding: bool) -> np.ndarray:
    """[size_in, size_out]: how much each input pixel counts in each output pixel."""
    radius, kernel = _KERNELS[method]
    inverse = 1.0 / scale
    widened = max(inverse, 1.0) if antialias else 1.0
    sample = (np.arange(size_out) + 0.5) * inverse - translation * inverse - 0.5
    k = (int(np.ceil(radius * widened)) if antialias else radius) if edge_padding else 0
    inputs = np.arange(-k, size_in + k, dtype=np.float64)
    if kernel is None:
        left = np.arange(size_out) * inverse - translation * inverse
        weights = np.maximum(0.0, np.minimum(left + inverse, inputs[:, None] + 1.0) - np.maximum(left, inputs[:, None]))
    else:
        weights = kernel(np.abs(sample[None, :] - inputs[:, None]) / widened)
    if edge_padding:  # (the weights past the edges go to the edge pixels)
        folded = np.zeros((size_in, size_out))
        np.add.at(folded, np.clip(inputs.astype(np.int64), 0, size_in - 1), weights)
        weights = folded
    total = weights.sum(axis=0, keepdims=True)
    weights = np.where(np.abs(total) > 1000 * float(np.finfo(np.float32).eps), weights / np.where(total != 0, total, 1),
                       0.0)
    if not edge_padding:
        weights = np.where(((sample >= -0.5) & (sample <= size_in - 0.5))[None, :], weights, 0.0)
    return weights


def _method(method: str | ResizeMethod) -> ResizeMethod:
    if isinstance(method, ResizeMethod):
        return method
    if isinstance(method, str):
        return ResizeMethod.from_string(method)
    raise TenzrError(f"resize method must be a string or a tz.image.ResizeMethod, got {method!r}", user_location())


def _resampled(x: Any, shape: tuple[int, ...], dims: Sequence[int], scales: Sequence[float],
               translations: Sequence[float], method: ResizeMethod, antialias: bool, edge_padding: bool) -> Any:
    for d, scale, translation in zip(dims, scales, translations, strict=True):
        weights = _weights(x.shape[d], shape[d], scale, translation, method, antialias, edge_padding)
        x = tz.moveaxis(tz.tensordot(x, weights.astype(x.dtype), axes=([d], [0])), -1, d)
    return x


def _static(values: Any, what: str, count: int) -> list[float]:
    try:
        floats = [float(v) for v in np.asarray(values, dtype=np.float64).reshape(-1)]
    except (TypeError, tz.TenzrError):
        raise TenzrError(f"scale_and_translate: {what} must be known while tracing (numbers, not traced arrays)",
                         user_location()) from None
    if len(floats) != count:
        raise TenzrError(f"scale_and_translate: {what} has {len(floats)} entries for {count} spatial dims",
                         user_location())
    return floats


def resize(image: Any, shape: Sequence[int], method: str | ResizeMethod, antialias: bool = True,
           precision: Any = None) -> Any:
    """`image` resampled to `shape` (every dim; a batch or channel dim keeps its size), as
    JAX's: "nearest" picks pixels (keeping the type); "linear", "cubic", "lanczos3",
    "lanczos5", "cubic-pytorch" and "area" interpolate in a float type, `antialias` widening
    the kernel when downsampling. `precision` is accepted and changes nothing."""
    x = tz.asarray(image)
    shape = tuple(int(s) for s in shape)
    if len(shape) != x.ndim:
        raise TenzrError(f"resize: shape must have length equal to the number of dimensions of the image; {shape} vs "
                         f"{x.shape}", user_location())
    chosen = _method(method)
    if chosen is ResizeMethod.NEAREST:
        for d, n in enumerate(shape):
            if n != x.shape[d]:
                picks = np.floor(((np.arange(n, dtype=np.float32) + 0.5) * np.float32(x.shape[d]) / np.float32(n))
                                 .astype(np.float32)).astype(np.int32)
                x = tz.take(x, picks, axis=d)
        return x
    if not np.issubdtype(x.dtype, np.inexact):
        x = x.astype(tz.result_type(x.dtype, float))
    dims = [d for d in range(x.ndim) if shape[d] != x.shape[d]]
    if chosen is ResizeMethod.CUBIC_PYTORCH and antialias:
        chosen = ResizeMethod.CUBIC
    scales = [1.0 if shape[d] == 0 else shape[d] / x.shape[d] for d in dims]
    return _resampled(x, shape, dims, scales, [0.0] * len(dims), chosen, antialias,
                      chosen is ResizeMethod.CUBIC_PYTORCH and not antialias)


def scale_and_translate(image: Any, shape: Sequence[int], spatial_dims: Sequence[int], scale: Any, translation: Any,
                        method: str | ResizeMethod, antialias: bool = True, precision: Any = None) -> Any:
    """`image` resampled into `shape` by the map y = x * scale + translation along each of
    `spatial_dims` (half-centered pixels), as JAX's; samples outside the input are 0. The
    scales and translations must be known while tracing."""
    x = tz.asarray(image)
    shape = tuple(int(s) for s in shape)
    dims = [int(d) % x.ndim for d in spatial_dims]
    chosen = _method(method)
    if chosen is ResizeMethod.NEAREST:
        raise TenzrError("scale_and_translate: the nearest method is not supported (as in JAX)", user_location())
    if not np.issubdtype(x.dtype, np.inexact):
        x = x.astype(tz.result_type(x.dtype, float))
    if chosen is ResizeMethod.CUBIC_PYTORCH and antialias:
        chosen = ResizeMethod.CUBIC
    scales, translations = _static(scale, "scale", len(dims)), _static(translation, "translation", len(dims))
    return _resampled(x, shape, dims, scales, translations, chosen, antialias,
                      chosen is ResizeMethod.CUBIC_PYTORCH and not antialias)
