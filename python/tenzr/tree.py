"""`tz.tree`: JAX's `jax.tree` short names for `tz.tree_util`'s functions."""

from tenzr.tree_util import tree_all as all  # noqa: A004 (JAX's names)
from tenzr.tree_util import tree_flatten as flatten
from tenzr.tree_util import tree_leaves as leaves
from tenzr.tree_util import tree_map as map  # noqa: A004
from tenzr.tree_util import tree_reduce as reduce
from tenzr.tree_util import tree_structure as structure
from tenzr.tree_util import tree_unflatten as unflatten

__all__ = ["all", "flatten", "leaves", "map", "reduce", "structure", "unflatten"]
