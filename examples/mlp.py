"""Train a small MLP classifier with plain SGD, entirely through Tenzr.

The data is generated here (three interleaved spirals), so nothing is downloaded. One
training step (forward, reverse-mode gradient, SGD update) is one compiled IREE program.

    python examples/mlp.py [--steps N] [--target cpu|vulkan|cuda]
"""

from __future__ import annotations

import argparse
import itertools
import time

import numpy as np

import tenzr as tz


def spirals(n_per_class: int, classes: int = 3, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    xs, ys = [], []
    for c in range(classes):
        r = np.linspace(0.05, 1.0, n_per_class)
        t = np.linspace(c * 2 * np.pi / classes, c * 2 * np.pi / classes + 3.5, n_per_class)
        t = t + rng.normal(scale=0.15, size=n_per_class)
        xs.append(np.stack([r * np.sin(t), r * np.cos(t)], axis=1))
        ys.append(np.full(n_per_class, c))
    return np.concatenate(xs).astype(np.float32), np.concatenate(ys).astype(np.int32)


def init(sizes: list[int], seed: int = 1) -> list[dict[str, np.ndarray]]:
    rng = np.random.default_rng(seed)
    return [{"w": (rng.standard_normal((a, b)) / np.sqrt(a)).astype(np.float32), "b": np.zeros(b, np.float32)}
            for a, b in itertools.pairwise(sizes)]


def predict(params, x):
    for layer in params[:-1]:
        x = tz.tanh(x @ layer["w"] + layer["b"])
    return x @ params[-1]["w"] + params[-1]["b"]


def loss(params, x, labels):
    logits = predict(params, x)
    return -(tz.nn.log_softmax(logits) * tz.nn.one_hot(labels, logits.shape[-1])).sum(axis=-1).mean()


def make_step(learning_rate: float, target: str):
    def step(params, x, labels):
        value, grads = tz.value_and_grad(loss)(params, x, labels)
        new = [{k: layer[k] - learning_rate * g[k] for k in layer} for layer, g in zip(params, grads, strict=True)]
        return new, value

    return tz.jit(step, target=target)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=400)
    parser.add_argument("--target", default="cpu")
    args = parser.parse_args()
    x, labels = spirals(200)
    params = init([2, 64, 64, 3])
    step = make_step(0.5, args.target)
    accuracy = tz.jit(lambda p, x, y: (tz.argmax(predict(p, x), axis=1) == y).astype(np.float32).mean(),
                      target=args.target)
    start = time.perf_counter()
    how = "compiled the training step" if step.compiled(params, x, labels).source == "compiled" else \
        "loaded the training step from the compile cache"
    params, first = step(params, x, labels)
    print(f"{how} in {time.perf_counter() - start:.2f} s; initial loss {float(first):.4f}")
    times = []
    for i in range(1, args.steps + 1):
        t0 = time.perf_counter()
        params, value = step(params, x, labels)
        times.append(time.perf_counter() - t0)
        if i % (args.steps // 8 or 1) == 0:
            print(f"step {i:4d}  loss {float(value):.4f}  step time {np.median(times) * 1e3:.2f} ms (median)")
    print(f"training accuracy {float(accuracy(params, x, labels)):.3f} on {len(x)} points")


if __name__ == "__main__":
    main()
