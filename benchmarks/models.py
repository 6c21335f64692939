"""The benchmark models, each written once against a NumPy-like namespace so the same
code runs with `tenzr` (tz) and with `jax.numpy`.

Every model is `Model(name, make_inputs, loss)`: `make_inputs()` gives (params, *data) as
NumPy arrays; `loss(np_like, nn_like, params, *data)` is a scalar.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np


@dataclass
class Model:
    name: str
    make_inputs: Callable[[], tuple]
    loss: Callable  # (xp, ops, params, *data) -> scalar
    step_flops: float | None = None
    """FLOPs of one value_and_grad step's products (matmuls, convolutions): the forward's,
    plus the backward's two per product (operand and weight cotangents) less those the
    parameter gradients do not need (the data's cotangent). None where elementwise work
    dominates and a FLOP rate says little."""
    jvp_flop_ratio: float | None = None
    """A jvp's product FLOPs (tangents of the parameters, none of the data) over the forward's:
    a product whose operands both carry tangents costs three, one with a tangent on one side
    two. The floor of jvp / forward time where the products dominate both (benchmarks/forward.py)."""


def _normal(rng, *shape, scale=None):
    scale = scale if scale is not None else 1 / np.sqrt(shape[0])
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def _cross_entropy(xp, ops, logits, labels):
    return -(ops.log_softmax(logits) * labels).sum() / logits.shape[0]


def _one_hot(rng, n, classes):
    return np.eye(classes, dtype=np.float32)[rng.integers(0, classes, n)]


# --------------------------------------------------------------------------- MLP 784-512-512-10


def mlp_inputs():
    rng = np.random.default_rng(0)
    sizes = [784, 512, 512, 10]
    params = [{"w": _normal(rng, a, b), "b": np.zeros(b, np.float32)} for a, b in itertools.pairwise(sizes)]
    return params, _normal(rng, 128, 784, scale=1.0), _one_hot(rng, 128, 10)


def mlp_loss(xp, ops, params, x, labels):
    for layer in params[:-1]:
        x = xp.tanh(x @ layer["w"] + layer["b"])
    return _cross_entropy(xp, ops, x @ params[-1]["w"] + params[-1]["b"], labels)


# Forward 3 matmuls; backward 3 weight cotangents and 2 activation cotangents (none for
# the images).
MLP = Model("MLP", mlp_inputs, mlp_loss, step_flops=2 * 128 * (784 * 512 * 2 + 512 * 512 * 3 + 512 * 10 * 3),
            jvp_flop_ratio=(784 * 512 * 2 + 512 * 512 * 3 + 512 * 10 * 3) / (784 * 512 + 512 * 512 + 512 * 10))

# --------------------------------------------------------------------------- CNN


def cnn_inputs():
    rng = np.random.default_rng(1)
    params = {"c1": _normal(rng, 8, 1, 3, 3, scale=1 / 3), "c2": _normal(rng, 16, 8, 3, 3, scale=1 / np.sqrt(72)),
              "w": _normal(rng, 16 * 14 * 14, 10), "b": np.zeros(10, np.float32)}
    return params, _normal(rng, 32, 1, 28, 28, scale=1.0), _one_hot(rng, 32, 10)


def cnn_loss(xp, ops, p, images, labels):
    h = ops.relu(ops.conv(images, p["c1"], stride=1, padding=1))
    h = ops.relu(ops.conv(h, p["c2"], stride=2, padding=1))
    logits = h.reshape(h.shape[0], -1) @ p["w"] + p["b"]
    return _cross_entropy(xp, ops, logits, labels)


# The first convolution needs no input cotangent (its input is the images).
CNN = Model("CNN", cnn_inputs, cnn_loss,
            step_flops=2 * 32 * (8 * 9 * 28 * 28 * 2 + 16 * 72 * 14 * 14 * 3 + 3136 * 10 * 3),
            jvp_flop_ratio=(8 * 9 * 28 * 28 * 2 + 16 * 72 * 14 * 14 * 3 + 3136 * 10 * 3)
            / (8 * 9 * 28 * 28 + 16 * 72 * 14 * 14 + 3136 * 10))

# --------------------------------------------------------------------------- elementwise chain


def chain_inputs():
    rng = np.random.default_rng(2)
    return {"x": rng.standard_normal((1024, 1024)).astype(np.float32)},


def chain_loss(xp, ops, p):
    x = p["x"]
    h = x
    for i in range(50):
        step = i % 4
        if step == 0:
            h = xp.sin(h)
        elif step == 1:
            h = h * 0.5
        elif step == 2:
            h = xp.exp(h)
        else:
            h = h + x
    return h.sum()


CHAIN = Model("chain", chain_inputs, chain_loss)

# --------------------------------------------------------------------------- transformer block


def transformer_inputs():
    rng = np.random.default_rng(3)
    d, hidden = 256, 1024
    params = {"wq": _normal(rng, d, d), "wk": _normal(rng, d, d), "wv": _normal(rng, d, d), "wo": _normal(rng, d, d),
              "w1": _normal(rng, d, hidden), "b1": np.zeros(hidden, np.float32), "w2": _normal(rng, hidden, d),
              "b2": np.zeros(d, np.float32), "g1": np.ones(d, np.float32), "g2": np.ones(d, np.float32)}
    return params, rng.standard_normal((8, 128, d)).astype(np.float32)


def _layer_norm(xp, x, gain):
    mean = x.mean(axis=-1, keepdims=True)
    centered = x - mean
    var = (centered * centered).mean(axis=-1, keepdims=True)
    return centered / xp.sqrt(var + 1e-5) * gain


def transformer_loss(xp, ops, p, x):
    heads, d = 4, x.shape[-1]
    b, s = x.shape[0], x.shape[1]
    h = _layer_norm(xp, x, p["g1"])

    def split(t):
        return xp.transpose(t.reshape(b, s, heads, d // heads), (0, 2, 1, 3))

    q, k, v = split(h @ p["wq"]), split(h @ p["wk"]), split(h @ p["wv"])
    scores = q @ xp.swapaxes(k, -1, -2) / np.float32(np.sqrt(d // heads))
    attention = ops.softmax(scores, axis=-1) @ v
    merged = xp.transpose(attention, (0, 2, 1, 3)).reshape(b, s, d)
    x = x + merged @ p["wo"]
    h = _layer_norm(xp, x, p["g2"])
    x = x + ops.relu(h @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"]
    return (x * x).mean()


# Every product's two cotangents are needed: the first layer norm's gain takes the
# cotangent of the q, k, v projections' input (and so every product has two tangents).
TRANSFORMER = Model("transformer", transformer_inputs, transformer_loss,
                    step_flops=3 * (2 * 8 * 128 * (4 * 256 * 256 + 2 * 256 * 1024) + 2 * 2 * 8 * 4 * 128 * 128 * 64),
                    jvp_flop_ratio=3.0)

# --------------------------------------------------------------------------- ADBench GMM


def gmm_inputs(d=10, k=25, n=1000):
    rng = np.random.default_rng(4)
    alphas = rng.standard_normal(k).astype(np.float32)
    means = rng.standard_normal((k, d)).astype(np.float32)
    icf = (rng.standard_normal((k, d * (d + 1) // 2)) * 0.5).astype(np.float32)
    x = rng.standard_normal((n, d)).astype(np.float32)
    return {"alphas": alphas, "means": means, "icf": icf}, x


def _tril_index(d):
    """For each (i, j) of a d×d matrix, the index into [diag (d) | below-diagonal | 0]."""
    index = np.full((d, d), d + d * (d - 1) // 2, np.int32)
    position = d
    for j in range(d):
        for i in range(j + 1, d):
            index[i, j] = position
            position += 1
    index[np.arange(d), np.arange(d)] = np.arange(d)
    return index.reshape(-1)


def gmm_loss(xp, ops, p, x, wishart_gamma=1.0, wishart_m=0):
    alphas, means, icf = p["alphas"], p["means"], p["icf"]
    n, d = x.shape
    k = alphas.shape[0]
    diag_log = icf[:, :d]
    q_diag = xp.exp(diag_log)
    sum_qs = diag_log.sum(axis=1)
    full = xp.concatenate([q_diag, icf[:, d:], xp.zeros((k, 1), dtype=np.float32)], axis=1)
    ls = xp.take(full, _tril_index(d), axis=1).reshape(k, d, d)
    centered = x[:, None, :] - means[None, :, :]
    mahal = xp.einsum("kij,nkj->nki", ls, centered)
    inner = alphas + sum_qs - 0.5 * (mahal * mahal).sum(axis=2)
    constant = -n * d * 0.5 * np.log(2 * np.pi)
    wishart = (0.5 * wishart_gamma * wishart_gamma * ((q_diag * q_diag).sum() + (icf[:, d:] * icf[:, d:]).sum())
               - wishart_m * sum_qs.sum())
    return constant + ops.logsumexp(inner, axis=1).sum() - n * ops.logsumexp(alphas, axis=0) + wishart


GMM = Model("GMM", gmm_inputs, gmm_loss, step_flops=3 * 2 * 1000 * 25 * 10 * 10)

MODELS = [MLP, CNN, CHAIN, TRANSFORMER, GMM]
