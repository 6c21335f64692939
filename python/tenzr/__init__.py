"""Tenzr: differentiate NumPy-like tensor programs through MLIR and IREE.

    import tenzr as tz
    loss_grad = tz.jit(tz.value_and_grad(loss))
"""

__version__ = "0.1.0"

import math
from typing import Any

import numpy as np

from tenzr import distributed, fft, lax, linalg, nn, random, scipy, tree_util
from tenzr.batching import vmap
from tenzr.core import Array, ShapeDtype, ShapeDtypeStruct, array
from tenzr.dialect.diagnostics import TenzrError
from tenzr.flags import config
from tenzr.forward import custom_jvp, hessian, jacfwd, jacrev, jvp, linearize
from tenzr.numpy_api import (
    abs,
    absolute,
    add,
    amax,
    amin,
    arange,
    arccos,
    arccosh,
    arcsin,
    arcsinh,
    arctan,
    arctan2,
    arctanh,
    argmax,
    argmin,
    argsort,
    around,
    bitwise_and,
    bitwise_not,
    bitwise_or,
    bitwise_xor,
    broadcast_to,
    ceil,
    clip,
    concatenate,
    cos,
    cosh,
    deg2rad,
    degrees,
    divide,
    dot,
    einsum,
    equal,
    exp,
    exp2,
    expand_dims,
    expm1,
    eye,
    fabs,
    flip,
    floor,
    floor_divide,
    fmax,
    fmin,
    full,
    full_like,
    greater,
    greater_equal,
    hypot,
    invert,
    isfinite,
    isinf,
    isnan,
    left_shift,
    less,
    less_equal,
    log,
    log1p,
    log2,
    log10,
    logaddexp,
    logaddexp2,
    logical_and,
    logical_not,
    logical_or,
    logical_xor,
    matmul,
    max,
    maximum,
    mean,
    min,
    minimum,
    mod,
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
    rad2deg,
    radians,
    reciprocal,
    remainder,
    reshape,
    right_shift,
    round,
    sign,
    sin,
    sinh,
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
    tan,
    tanh,
    transpose,
    true_divide,
    where,
    zeros,
    zeros_like,
)
from tenzr.numpy_lib import (
    all,
    allclose,
    angle,
    any,
    append,
    array_equal,
    array_split,
    atleast_1d,
    atleast_2d,
    atleast_3d,
    broadcast_arrays,
    broadcast_shapes,
    c_,
    column_stack,
    conj,
    conjugate,
    cross,
    cumprod,
    cumsum,
    diag,
    diagonal,
    diff,
    dsplit,
    dstack,
    fliplr,
    flipud,
    gradient,
    hsplit,
    hstack,
    imag,
    inner,
    isclose,
    iscomplex,
    iscomplexobj,
    isreal,
    isrealobj,
    kron,
    linspace,
    meshgrid,
    nan_to_num,
    ndim,
    r_,
    ravel,
    real,
    repeat,
    roll,
    rollaxis,
    rot90,
    select,
    shape,
    sinc,
    size,
    split,
    std,
    tensordot,
    tile,
    trapezoid,
    tri,
    tril,
    triu,
    var,
    vsplit,
    vstack,
)
from tenzr.passes.custom_ops import register_custom_op
from tenzr.targets import Target
from tenzr.transforms import (
    checkpoint,
    clear_caches,
    custom_vjp,
    eval_shape,
    grad,
    jit,
    remat,
    trace,
    value_and_grad,
    vjp,
)

asarray = array
newaxis = None
pi, e, inf, nan, euler_gamma = math.pi, math.e, math.inf, math.nan, float(np.euler_gamma)
# dtypes, as NumPy's (they compare equal to them and name them to np.dtype)
float16, float32, float64 = np.float16, np.float32, np.float64
int32, int64, bool_ = np.int32, np.int64, np.bool_
dtype, finfo, iinfo = np.dtype, np.finfo, np.iinfo
row_stack = vstack


def __getattr__(name: str) -> Any:
    """`tz.bfloat16` is ml_dtypes' (imported on first use: it takes 0.2 s)."""
    if name == "bfloat16":
        import ml_dtypes

        return ml_dtypes.bfloat16
    raise AttributeError(f"module 'tenzr' has no attribute {name!r}")
