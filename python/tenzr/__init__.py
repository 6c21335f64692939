"""Tenzr: differentiate NumPy-like tensor programs through MLIR and IREE.

    import tenzr as tz
    loss_grad = tz.jit(tz.value_and_grad(loss))
"""

__version__ = "0.1.0"

from tenzr import distributed, lax, nn, tree_util
from tenzr.batching import vmap
from tenzr.core import Array, ShapeDtype, asarray
from tenzr.dialect.diagnostics import TenzrError
from tenzr.forward import custom_jvp, hessian, jacfwd, jacrev, jvp, linearize
from tenzr.numpy_api import (
    abs,
    absolute,
    add,
    amax,
    amin,
    arange,
    argmax,
    argmin,
    argsort,
    around,
    broadcast_to,
    clip,
    concatenate,
    cos,
    divide,
    dot,
    einsum,
    equal,
    exp,
    expand_dims,
    expm1,
    eye,
    flip,
    floor,
    full,
    full_like,
    greater,
    greater_equal,
    less,
    less_equal,
    log,
    log1p,
    logical_not,
    matmul,
    max,
    maximum,
    mean,
    min,
    minimum,
    moveaxis,
    multiply,
    negative,
    not_equal,
    ones,
    ones_like,
    outer,
    pad,
    power,
    prod,
    reshape,
    round,
    sign,
    sin,
    sort,
    sqrt,
    square,
    squeeze,
    stack,
    subtract,
    sum,
    swapaxes,
    take,
    take_along_axis,
    tanh,
    transpose,
    true_divide,
    var,
    where,
    zeros,
    zeros_like,
)
from tenzr.passes.custom_ops import register_custom_op
from tenzr.targets import Target
from tenzr.transforms import checkpoint, clear_caches, custom_vjp, grad, jit, remat, trace, value_and_grad, vjp

newaxis = None
float16, float32, float64 = "float16", "float32", "float64"
bfloat16 = "bfloat16"
int32, int64, bool_ = "int32", "int64", "bool"
