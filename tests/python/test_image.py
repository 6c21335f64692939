"""tz.image against jax.image (the test extra's reference): every resize method, up and
down, with and without antialiasing, values, types and gradients."""

from __future__ import annotations

import numpy as np
import pytest

import tenzr as tz

jax = pytest.importorskip("jax")
ji = pytest.importorskip("jax.image")

METHODS = ["nearest", "linear", "cubic", "lanczos3", "lanczos5", "cubic-pytorch", "area"]
IMAGE = np.random.default_rng(3).random((2, 9, 7, 3)).astype(np.float32)


@pytest.mark.parametrize("antialias", [True, False])
def test_resize_matches_jax_for_every_method(jax_without_x64, antialias):
    """Up, down, and up along one dim while down along another, in one jitted call per
    method (each a product with a weight matrix per resized dim)."""
    shapes = [(2, 18, 14, 3), (2, 4, 3, 3), (2, 20, 5, 3), (2, 9, 7, 1 + 2)]
    for method in METHODS:
        got = tz.jit(lambda x, m=method: [tz.image.resize(x, s, m, antialias=antialias) for s in shapes])(IMAGE)
        for shape, ours in zip(shapes, got, strict=True):
            theirs = np.asarray(ji.resize(IMAGE, shape, method, antialias=antialias))
            assert ours.dtype == theirs.dtype
            np.testing.assert_allclose(ours, theirs, atol=2e-6, err_msg=f"{method} to {shape}")


def test_resize_types_gradients_and_errors(jax_without_x64):
    pixels = (IMAGE * 255).astype(np.uint8)
    nearest = tz.image.resize(pixels, (2, 4, 3, 3), "nearest")
    assert nearest.dtype == np.uint8
    np.testing.assert_array_equal(nearest, ji.resize(pixels, (2, 4, 3, 3), "nearest"))
    assert tz.image.resize(pixels, (2, 4, 3, 3), tz.image.ResizeMethod.LINEAR).dtype == \
        ji.resize(pixels, (2, 4, 3, 3), "linear").dtype
    ours = tz.grad(lambda x: (tz.image.resize(x, (2, 5, 12, 3), "bicubic") ** 2).sum())(IMAGE)
    theirs = jax.grad(lambda x: (ji.resize(x, (2, 5, 12, 3), "bicubic") ** 2).sum())(IMAGE)
    np.testing.assert_allclose(ours, theirs, atol=2e-5)
    with pytest.raises(tz.TenzrError, match="unknown resize method 'box'"):
        tz.image.resize(IMAGE, (2, 4, 3, 3), "box")
    with pytest.raises(tz.TenzrError, match="shape must have length equal to the number of dimensions"):
        tz.image.resize(IMAGE, (4, 3), "linear")


def test_scale_and_translate_matches_jax(jax_without_x64):
    for method in METHODS[1:]:
        for antialias in (True, False):
            ours = tz.image.scale_and_translate(IMAGE, (2, 12, 5, 3), (1, 2), np.array([1.3, 0.6]),
                                                np.array([0.4, -0.2]), method, antialias=antialias)
            theirs = ji.scale_and_translate(IMAGE, (2, 12, 5, 3), (1, 2), np.array([1.3, 0.6], np.float32),
                                            np.array([0.4, -0.2], np.float32), method, antialias=antialias)
            np.testing.assert_allclose(ours, theirs, atol=2e-6, err_msg=f"{method}, antialias={antialias}")
    with pytest.raises(tz.TenzrError, match="scale must be known while tracing"):
        tz.jit(lambda x, s: tz.image.scale_and_translate(x, (2, 12, 7, 3), (1,), s, np.zeros(1), "linear"))(
            IMAGE, np.ones(1))
