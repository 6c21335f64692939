"""Train a small CNN with plain SGD through Tenzr, on generated images.

Each 12x12 image holds one noisy stroke: horizontal, vertical or diagonal; the network
learns which. Two convolutions (the second strided), ReLU, a dense layer, softmax
cross-entropy: every gradient comes from tenzr-grad.

    python examples/cnn.py [--steps N] [--target cpu|vulkan|cuda]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import tenzr as tz

SIZE = 12


def strokes(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    images = rng.normal(scale=0.3, size=(n, 1, SIZE, SIZE)).astype(np.float32)
    labels = rng.integers(0, 3, n).astype(np.int32)
    for image, label in zip(images, labels, strict=True):
        at = rng.integers(2, SIZE - 2)
        line = np.arange(SIZE)
        if label == 0:
            image[0, at, :] += 1.5
        elif label == 1:
            image[0, :, at] += 1.5
        else:
            image[0, line, (line + at) % SIZE] += 1.5
    return images, labels


def init(seed: int = 1) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)

    def normal(*shape: int, fan_in: int) -> np.ndarray:
        return (rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)).astype(np.float32)

    return {"c1": normal(8, 1, 3, 3, fan_in=9), "c2": normal(16, 8, 3, 3, fan_in=72),
            "w": normal(16 * 6 * 6, 3, fan_in=16 * 36), "b": np.zeros(3, np.float32)}


def predict(p, images):
    h = tz.nn.relu(tz.nn.conv(images, p["c1"], padding=1))
    h = tz.nn.relu(tz.nn.conv(h, p["c2"], stride=2, padding=1))
    return h.reshape(h.shape[0], -1) @ p["w"] + p["b"]


def loss(p, images, labels):
    logits = predict(p, images)
    return -tz.take_along_axis(tz.nn.log_softmax(logits), labels[:, None], axis=1).mean()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=150)
    parser.add_argument("--target", default="cpu")
    args = parser.parse_args()
    images, labels = strokes(256)

    def sgd_step(p, x, y):
        value, g = tz.value_and_grad(loss)(p, x, y)
        return {k: p[k] - 0.05 * g[k] for k in p}, value

    step = tz.jit(sgd_step, target=args.target)
    accuracy = tz.jit(lambda p, x, y: (tz.argmax(predict(p, x), axis=1) == y).astype(np.float32).mean(),
                      target=args.target)
    params = init()
    start = time.perf_counter()
    how = "compiled the training step" if step.compiled(params, images, labels).source == "compiled" else \
        "loaded the training step from the compile cache"
    params, first = step(params, images, labels)
    print(f"{how} in {time.perf_counter() - start:.2f} s; initial loss {float(first):.4f}")
    times = []
    for i in range(1, args.steps + 1):
        t0 = time.perf_counter()
        params, value = step(params, images, labels)
        times.append(time.perf_counter() - t0)
        if i % (args.steps // 6 or 1) == 0:
            print(f"step {i:4d}  loss {float(value):.4f}  step time {np.median(times) * 1e3:.2f} ms (median)")
    test_images, test_labels = strokes(256, seed=7)
    print(f"held-out accuracy {float(accuracy(params, test_images, test_labels)):.3f}")


if __name__ == "__main__":
    main()
