"""Train a small recurrent network with `tz.lax.scan`: it learns to continue sine waves.

Each sequence is a sine of random frequency and phase; the network reads it one value at
a time and predicts the next. The scan over time is one loop in the compiled program,
whatever the sequence length (it is never unrolled), and its gradient is the adjoint loop
tenzr-grad derives from it. One training step (forward, gradient, SGD with momentum) is
one compiled IREE program.

    python examples/rnn.py [--steps N] [--length T] [--target cpu|vulkan|cuda]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import tenzr as tz

HIDDEN = 32


def waves(batch: int, length: int, rng: np.random.Generator) -> np.ndarray:
    """(length + 1, batch) samples of sines with random frequencies and phases."""
    t = np.arange(length + 1)[:, None]
    frequency = rng.uniform(0.1, 0.3, batch)
    phase = rng.uniform(0, 2 * np.pi, batch)
    return np.sin(frequency * t + phase).astype(np.float32)


def init(seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)

    def dense(a: int, b: int) -> np.ndarray:
        return (rng.standard_normal((a, b)) / np.sqrt(a)).astype(np.float32)

    return {"wx": dense(1, HIDDEN), "wh": dense(HIDDEN, HIDDEN) * 0.5, "b": np.zeros(HIDDEN, np.float32),
            "wo": dense(HIDDEN, 1)}


def loss(params, sequence):
    """Mean squared error of the next-value predictions over the sequence."""
    inputs, targets = sequence[:-1], sequence[1:]

    def step(h, x_and_target):
        x, target = x_and_target
        h = tz.tanh(x[:, None] @ params["wx"] + h @ params["wh"] + params["b"])
        prediction = (h @ params["wo"])[:, 0]
        return h, ((prediction - target) ** 2).mean()

    h0 = np.zeros((inputs.shape[1], HIDDEN), np.float32)
    _, errors = tz.lax.scan(step, h0, (inputs, targets))
    return errors.mean()


def train(steps: int, length: int, target: str, seed: int = 0, log=print) -> list[float]:
    """Trains from scratch; returns the loss of each step."""
    rng = np.random.default_rng(seed)
    params = init(seed)
    velocity = {k: np.zeros_like(v) for k, v in params.items()}

    def step(params, velocity, sequence):
        value, grads = tz.value_and_grad(loss)(params, sequence)
        velocity = {k: 0.9 * velocity[k] + grads[k] for k in params}
        return {k: params[k] - 0.05 * velocity[k] for k in params}, velocity, value

    update = tz.jit(step, target=target)
    losses = []
    start = time.perf_counter()
    for i in range(steps):
        params, velocity, value = update(params, velocity, waves(16, length, rng))
        losses.append(float(value))
        if i % max(steps // 10, 1) == 0 or i == steps - 1:
            log(f"step {i:4d}  loss {losses[-1]:.4f}  ({time.perf_counter() - start:.1f} s)")
    return losses


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--length", type=int, default=50, help="time steps per sequence")
    parser.add_argument("--target", default="cpu")
    args = parser.parse_args()
    losses = train(args.steps, args.length, args.target)
    print(f"loss {losses[0]:.4f} -> {losses[-1]:.4f}")


if __name__ == "__main__":
    main()
