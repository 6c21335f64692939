"""`tenzr.numpy`, for code written against `jax.numpy` (`import tenzr.numpy as jnp`, or
`jax.numpy.sum` after `import tenzr as jax`): the NumPy names live in `tenzr` itself, and
this module hands out the same objects."""

from __future__ import annotations

from typing import Any

import tenzr


def __getattr__(name: str) -> Any:
    try:
        return getattr(tenzr, name)
    except AttributeError:
        raise AttributeError(f"module 'tenzr.numpy' has no attribute {name!r}") from None


def __dir__() -> list[str]:
    return dir(tenzr)
