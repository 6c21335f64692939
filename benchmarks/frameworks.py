"""The benchmark models as Tenzr and JAX callables, importing each framework only when
asked (so a process measuring one framework's memory does not load the other)."""

from __future__ import annotations

from models import Model


def tenzr_functions(model: Model):
    import tenzr as tz

    def loss(*args):
        return model.loss(tz, tz.nn, *args)

    return tz.jit(loss), tz.jit(tz.value_and_grad(loss))


class _JaxOps:
    def __init__(self, jax):
        self.jax = jax
        self.log_softmax = jax.nn.log_softmax
        self.softmax = jax.nn.softmax
        self.relu = jax.nn.relu
        self.logsumexp = jax.nn.logsumexp

    def conv(self, x, w, stride=1, padding=0):
        n = x.ndim - 2
        return self.jax.lax.conv_general_dilated(x, w, (stride,) * n, [(padding, padding)] * n)


def jax_functions(model: Model):
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return None
    ops = _JaxOps(jax)

    def loss(*args):
        return model.loss(jnp, ops, *args)

    return jax.jit(loss), jax.jit(jax.value_and_grad(loss))


def block(out):
    """Waits for JAX's asynchronous results (Tenzr returns NumPy arrays, already done)."""
    for leaf in (out if isinstance(out, tuple) else (out,)):
        if hasattr(leaf, "block_until_ready"):
            leaf.block_until_ready()
        elif isinstance(leaf, dict):
            block(tuple(leaf.values()))
        elif isinstance(leaf, list):
            block(tuple(leaf))
