"""`tz.tree`: JAX's `jax.tree` short names for `tz.tree_util`'s functions."""

from tenzr.tree_util import tree_all as all  # noqa: A004 (JAX's names)
from tenzr.tree_util import tree_flatten as flatten
from tenzr.tree_util import tree_flatten_with_path as flatten_with_path
from tenzr.tree_util import tree_leaves as leaves
from tenzr.tree_util import tree_leaves_with_path as leaves_with_path
from tenzr.tree_util import tree_map as map  # noqa: A004
from tenzr.tree_util import tree_map_with_path as map_with_path
from tenzr.tree_util import tree_reduce as reduce
from tenzr.tree_util import tree_structure as structure
from tenzr.tree_util import tree_transpose as transpose
from tenzr.tree_util import tree_unflatten as unflatten

__all__ = ["all", "flatten", "flatten_with_path", "leaves", "leaves_with_path", "map", "map_with_path", "reduce",
           "structure", "transpose", "unflatten"]
