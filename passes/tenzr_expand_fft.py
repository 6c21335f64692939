"""`tenzr-expand-fft`: StableHLO's `fft` (as JAX exports `jnp.fft`) as products with DFT
matrices, the form `tz.fft` traces: IREE 3.13 lowers `fft` only for real inputs of
power-of-two lengths, and tenzr-grad, tenzr-jvp and tenzr-batch take the products as any
other (they run this expansion first). A transform of length n costs n² multiply-adds
along its axis: meant for the small and medium sizes of models, not signal processing at
scale.

- FFT and IFFT (complex, over the last len(fft_length) dims): one complex product per
  axis, with exp(∓2πi jk/n); IFFT divides by n, as StableHLO's inverse does.
- RFFT (real): the last axis's n//2 + 1 terms from real cosine and sine products, then FFT
  over the other axes.
- IRFFT (complex to real): IFFT over the leading axes, then the last axis's real result
  from the n//2 + 1 terms, each but the zero and Nyquist terms counted twice (their
  Hermitian partners), whose imaginary parts are not read, as StableHLO's reads them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from tenzr.dialect.context import ops_named, replace_op
from tenzr.dialect.ir_imports import Value, ir
from tenzr.dialect.types import TensorSpec, real_dtype
from tenzr.passes import stablehlo as sh
from tenzr.passes.registry import Pass, register
from tenzr.passes.views import view


def expand_fft(module: ir.Operation) -> None:
    """Rewrites every `stablehlo.fft` in `module` (see the module doc)."""
    for op in ops_named(module, {"stablehlo.fft"}):
        decoded = view(op)
        kind, lengths = decoded["fft_type"], list(decoded["fft_length"])
        x = op.operands[0]
        rank = sh.spec(x).rank
        axes = list(range(rank - len(lengths), rank))
        with op.location, ir.InsertionPoint(op):
            if kind in ("FFT", "IFFT"):
                result = _complex_transform(x, axes, inverse=kind == "IFFT")
            elif kind == "RFFT":
                result = _complex_transform(_real_to_complex(x, lengths[-1]), axes[:-1], inverse=False)
            else:
                result = _complex_to_real(_complex_transform(x, axes[:-1], inverse=True), lengths[-1])
            replace_op(op, [result])


def _along(x: Value, matrix: Value, axis: int) -> Value:
    """x's `axis` (of length k) times `matrix` [k, n]: the result has length n there."""
    rank = sh.spec(x).rank
    product = sh.dot_general(x, matrix, ([], []), ((axis,), (0,)))  # (axis moved last)
    return sh.transpose(product, [*range(axis), rank - 1, *range(axis, rank - 1)])


def _cos_sin(rows: int, columns: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """cos and sin of 2π jk / n for j < rows, k < columns, jk taken mod n (exact for large
    n), and exact zeros where the angle is a multiple of π/2."""
    turns = np.outer(np.arange(rows), np.arange(columns)) % n
    angles = 2 * np.pi * turns / n
    cos, sin = np.cos(angles), np.sin(angles)
    right = (4 * turns) % n == 0
    cos[right], sin[right] = np.round(cos[right]), np.round(sin[right])
    return cos, sin


def _complex_transform(x: Value, axes: list[int], inverse: bool) -> Value:
    s = sh.spec(x)
    for axis in axes:
        n = s.shape[axis]
        cos, sin = _cos_sin(n, n, n)
        matrix = (cos + (1j if inverse else -1j) * sin) / (n if inverse else 1)
        x = _along(x, sh.constant(matrix, TensorSpec((n, n), s.dtype)), axis)
    return x


def _real_to_complex(x: Value, n: int) -> Value:
    s = sh.spec(x)
    cos, sin = _cos_sin(n, n // 2 + 1, n)
    part = TensorSpec(cos.shape, s.dtype)
    re = _along(x, sh.constant(cos, part), s.rank - 1)
    im = _along(x, sh.constant(-sin, part), s.rank - 1)
    return sh.complex_(re, im)


def _complex_to_real(x: Value, n: int) -> Value:
    s = sh.spec(x)
    terms = n // 2 + 1
    weights = np.where((np.arange(terms) == 0) | (2 * np.arange(terms) == n), 1.0, 2.0)[:, None] / n
    cos, sin = _cos_sin(terms, n, n)
    part = TensorSpec(cos.shape, real_dtype(s.dtype))
    re = _along(sh.real(x), sh.constant(weights * cos, part), s.rank - 1)
    im = _along(sh.imag(x), sh.constant(weights * sin, part), s.rank - 1)
    return sh.subtract(re, im)


@register
@dataclass
class TenzrExpandFft(Pass):
    flag: ClassVar[str] = "tenzr-expand-fft"
    summary: ClassVar[str] = ("Rewrite stablehlo.fft (FFT, IFFT, RFFT, IRFFT; JAX's jnp.fft) as products with DFT "
                              "matrices, which IREE compiles for every length and tenzr-grad differentiates.")

    def run(self, module: ir.Operation) -> None:
        expand_fft(module)
