"""JAX's `jax.example_libraries.stax`: a layer is an `(init_fun, apply_fun)` pair.

    init_fun(rng, input_shape) -> (output_shape, params)
    apply_fun(params, inputs, **kwargs) -> outputs

Layers compose with `serial` and `parallel` (with `FanOut`, `FanInSum`, `FanInConcat`).
Convolutions and pools work on NHWC inputs by default, as JAX's.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from tenzr import lax, random
from tenzr import numpy_api as tnp
from tenzr import numpy_lib as tlib
from tenzr.dialect.diagnostics import TenzrError
from tenzr.neural import elu, gelu, leaky_relu, log_softmax, relu, selu, sigmoid, softmax, softplus, standardize
from tenzr.nn.initializers import glorot_normal, normal, ones, zeros

Layer = tuple[Callable[..., Any], Callable[..., Any]]

glorot = glorot_normal
randn = normal
logsoftmax = log_softmax
_GLOROT, _NORMAL, _TINY = glorot_normal(), normal(), normal(1e-6)  # (the layers' default initializers, stateless)


def Dense(out_dim: int, W_init: Callable = _GLOROT, b_init: Callable = _NORMAL) -> Layer:
    """A fully connected layer: inputs @ W + b."""
    def init_fun(rng: Any, input_shape: Sequence[int]) -> tuple[tuple[int, ...], Any]:
        k1, k2 = random.split(rng)
        return (*input_shape[:-1], out_dim), (W_init(k1, (input_shape[-1], out_dim)), b_init(k2, (out_dim,)))

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        W, b = params
        return tnp.dot(inputs, W) + b

    return init_fun, apply_fun


def _kernel_shape(rhs_spec: str, lhs_spec: str, out_chan: int, filter_shape: Sequence[int],
                  input_shape: Sequence[int]) -> list[int]:
    spatial = iter(filter_shape)
    return [out_chan if c == "O" else input_shape[lhs_spec.index("C")] if c == "I" else next(spatial)
            for c in rhs_spec]


def _biased_conv(dimension_numbers: tuple[str, str, str], out_chan: int, filter_shape: Sequence[int],
                 strides: Sequence[int] | None, W_init: Callable | None, b_init: Callable,
                 output_shape: Callable[..., Any], convolve: Callable[..., Any]) -> Layer:
    """A convolution layer plus a bias per output channel: `output_shape(input_shape, kernel,
    strides)` and `convolve(inputs, W, strides)` are the forward or transposed convolution's."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    strides = tuple(strides or (1,) * len(filter_shape))
    W_init = W_init or glorot_normal(rhs_spec.index("I"), rhs_spec.index("O"))

    def init_fun(rng: Any, input_shape: Sequence[int]) -> tuple[tuple[int, ...], Any]:
        kernel = _kernel_shape(rhs_spec, lhs_spec, out_chan, filter_shape, input_shape)
        k1, k2 = random.split(rng)
        return output_shape(input_shape, kernel, strides), (
            W_init(k1, kernel), b_init(k2, [out_chan if c == "C" else 1 for c in out_spec]))

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        W, b = params
        return convolve(inputs, W, strides) + b

    return init_fun, apply_fun


def GeneralConv(dimension_numbers: tuple[str, str, str], out_chan: int, filter_shape: Sequence[int],
                strides: Sequence[int] | None = None, padding: Any = "VALID", W_init: Callable | None = None,
                b_init: Callable = _TINY) -> Layer:
    """A convolution with the layouts `dimension_numbers` = (input, kernel, output), e.g.
    ("NHWC", "HWIO", "NHWC"), plus a bias per output channel."""
    one = (1,) * len(filter_shape)
    return _biased_conv(
        dimension_numbers, out_chan, filter_shape, strides, W_init, b_init,
        lambda shape, kernel, s: lax.conv_general_shape_tuple(shape, kernel, s, padding, dimension_numbers),
        lambda x, W, s: lax.conv_general_dilated(x, W, s, padding, one, one, dimension_numbers=dimension_numbers))


def Conv(out_chan: int, filter_shape: Sequence[int], strides: Sequence[int] | None = None, padding: Any = "VALID",
         W_init: Callable | None = None, b_init: Callable = _TINY) -> Layer:
    """A 2-D convolution of NHWC inputs with an HWIO kernel."""
    return GeneralConv(("NHWC", "HWIO", "NHWC"), out_chan, filter_shape, strides, padding, W_init, b_init)


def GeneralConvTranspose(dimension_numbers: tuple[str, str, str], out_chan: int, filter_shape: Sequence[int],
                         strides: Sequence[int] | None = None, padding: Any = "VALID",
                         W_init: Callable | None = None, b_init: Callable = _TINY) -> Layer:
    """A transposed convolution (`tz.lax.conv_transpose`) plus a bias per output channel."""
    return _biased_conv(
        dimension_numbers, out_chan, filter_shape, strides, W_init, b_init,
        lambda shape, kernel, s: lax.conv_transpose_shape_tuple(shape, kernel, s, padding, dimension_numbers),
        lambda x, W, s: lax.conv_transpose(x, W, s, padding, dimension_numbers=dimension_numbers))


def Conv1DTranspose(out_chan: int, filter_shape: Sequence[int], strides: Sequence[int] | None = None,
                    padding: Any = "VALID", W_init: Callable | None = None, b_init: Callable = _TINY) -> Layer:
    """A 1-D transposed convolution of NHC inputs."""
    return GeneralConvTranspose(("NHC", "HIO", "NHC"), out_chan, filter_shape, strides, padding, W_init, b_init)


def ConvTranspose(out_chan: int, filter_shape: Sequence[int], strides: Sequence[int] | None = None,
                  padding: Any = "VALID", W_init: Callable | None = None, b_init: Callable = _TINY) -> Layer:
    """A 2-D transposed convolution of NHWC inputs."""
    return GeneralConvTranspose(("NHWC", "HWIO", "NHWC"), out_chan, filter_shape, strides, padding, W_init, b_init)


def BatchNorm(axis: Any = (0, 1, 2), epsilon: float = 1e-5, center: bool = True, scale: bool = True,
              beta_init: Callable = zeros, gamma_init: Callable = ones) -> Layer:
    """Normalizes over `axis` with the batch's own statistics, then scales by gamma and
    shifts by beta (each optional)."""
    axes = (axis,) if isinstance(axis, int) else tuple(axis)

    def init_fun(rng: Any, input_shape: Sequence[int]) -> tuple[tuple[int, ...], Any]:
        shape = tuple(d for i, d in enumerate(input_shape) if i not in axes)
        k1, k2 = random.split(rng)
        return tuple(input_shape), (beta_init(k1, shape) if center else (), gamma_init(k2, shape) if scale else ())

    def apply_fun(params: Any, x: Any, **kwargs: Any) -> Any:
        beta, gamma = params
        kept = tuple(None if i in axes else slice(None) for i in range(tlib.ndim(x)))
        z = standardize(x, axes, epsilon=epsilon)
        if scale:
            z = gamma[kept] * z
        return z + beta[kept] if center else z

    return init_fun, apply_fun


def elementwise(fun: Callable[..., Any], **fun_kwargs: Any) -> Layer:
    """The layer applying `fun(inputs, **fun_kwargs)`, with no parameters."""
    return (lambda rng, input_shape: (input_shape, ())), (lambda params, inputs, **kwargs: fun(inputs, **fun_kwargs))


Tanh = elementwise(tnp.tanh)
Relu = elementwise(relu)
Exp = elementwise(tnp.exp)
LogSoftmax = elementwise(log_softmax, axis=-1)
Softmax = elementwise(softmax, axis=-1)
Softplus = elementwise(softplus)
Sigmoid = elementwise(sigmoid)
Elu = elementwise(elu)
LeakyRelu = elementwise(leaky_relu)
Selu = elementwise(selu)
Gelu = elementwise(gelu)


def _pooling_layer(reducer: Callable, init_val: float, average: bool = False) -> Callable[..., Layer]:
    def PoolingLayer(window_shape: Sequence[int], strides: Sequence[int] | None = None, padding: Any = "VALID",
                     spec: str | None = None) -> Layer:
        window, steps = tuple(window_shape), tuple(strides or (1,) * len(window_shape))
        non_spatial = (0, len(window) + 1) if spec is None else (spec.index("N"), spec.index("C"))
        for i in sorted(non_spatial):
            window, steps = (*window[:i], 1, *window[i:]), (*steps[:i], 1, *steps[i:])

        def init_fun(rng: Any, input_shape: Sequence[int]) -> tuple[tuple[int, ...], Any]:
            pads = lax.padtype_to_pads(input_shape, window, steps, padding) if isinstance(padding, str) else padding
            return lax.reduce_window_shape_tuple(input_shape, window, steps, pads), ()

        def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
            out = lax.reduce_window(inputs, init_val, reducer, window, steps, padding)
            if not average:
                return out
            # divide by the number of inputs each window covered (fewer at padded edges)
            counts = lax.reduce_window(tnp.ones(inputs.shape, inputs.dtype), 0.0, tnp.add, window, steps, padding)
            return out / counts

        return init_fun, apply_fun

    return PoolingLayer


MaxPool = _pooling_layer(tnp.maximum, -math.inf)
SumPool = _pooling_layer(tnp.add, 0.0)
AvgPool = _pooling_layer(tnp.add, 0.0, average=True)


def _flatten() -> Layer:
    def init_fun(rng: Any, input_shape: Sequence[int]) -> tuple[tuple[int, ...], Any]:
        return (input_shape[0], math.prod(input_shape[1:])), ()

    return init_fun, lambda params, inputs, **kwargs: tnp.reshape(inputs, (inputs.shape[0], -1))


Flatten = _flatten()
Identity: Layer = ((lambda rng, input_shape: (input_shape, ())), (lambda params, inputs, **kwargs: inputs))
FanInSum: Layer = ((lambda rng, input_shape: (input_shape[0], ())), (lambda params, inputs, **kwargs: sum(inputs)))


def FanOut(num: int) -> Layer:
    """`num` copies of the input."""
    return (lambda rng, input_shape: ([input_shape] * num, ())), (lambda params, inputs, **kwargs: [inputs] * num)


def FanInConcat(axis: int = -1) -> Layer:
    """The inputs concatenated along `axis`."""
    def init_fun(rng: Any, input_shape: Sequence[Sequence[int]]) -> tuple[tuple[int, ...], Any]:
        ax = axis % len(input_shape[0])
        size = sum(shape[ax] for shape in input_shape)
        return (*input_shape[0][:ax], size, *input_shape[0][ax + 1:]), ()

    return init_fun, lambda params, inputs, **kwargs: tnp.concatenate(inputs, axis)


def Dropout(rate: float, mode: str = "train") -> Layer:
    """In "train" mode keeps each input with probability `rate` (JAX's meaning) and scales
    the kept ones by 1 / rate; needs `rng=` in apply_fun. Any other mode is the identity."""
    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        rng = kwargs.get("rng")
        if rng is None:
            raise TenzrError("Dropout layer requires apply_fun to be called with a PRNG key argument: "
                             "apply_fun(params, inputs, rng=key), the key from tz.random.key")
        if mode != "train":
            return inputs
        keep = random.bernoulli(rng, rate, inputs.shape)
        return tnp.where(keep, inputs / rate, 0)

    return (lambda rng, input_shape: (input_shape, ())), apply_fun


def _layer_keys(rng: Any, n: int) -> Any:
    return random.split(rng, n) if rng is not None else (None,) * n


def serial(*layers: Layer) -> Layer:
    """The layers applied one after another; params is a list, one entry per layer."""
    init_funs, apply_funs = zip(*layers, strict=True)

    def init_fun(rng: Any, input_shape: Any) -> tuple[Any, list[Any]]:
        params = []
        for init in init_funs:
            rng, layer_rng = random.split(rng)
            input_shape, param = init(layer_rng, input_shape)
            params.append(param)
        return input_shape, params

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        keys = _layer_keys(kwargs.pop("rng", None), len(apply_funs))
        for fun, param, key in zip(apply_funs, params, keys, strict=True):
            inputs = fun(param, inputs, rng=key, **kwargs)
        return inputs

    return init_fun, apply_fun


def parallel(*layers: Layer) -> Layer:
    """Layer k applied to input k of a sequence of inputs (often between FanOut and FanInSum)."""
    init_funs, apply_funs = zip(*layers, strict=True)

    def init_fun(rng: Any, input_shape: Sequence[Any]) -> tuple[Any, Any]:
        keys = random.split(rng, len(init_funs))
        shapes, params = zip(*[init(k, shape) for init, k, shape in zip(init_funs, keys, input_shape, strict=True)],
                             strict=True)
        return list(shapes), list(params)

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        keys = _layer_keys(kwargs.pop("rng", None), len(apply_funs))
        return [f(p, x, rng=k, **kwargs) for f, p, x, k in zip(apply_funs, params, inputs, keys, strict=True)]

    return init_fun, apply_fun


def shape_dependent(make_layer: Callable[[Any], Layer]) -> Layer:
    """A layer built by `make_layer(input_shape)` once the input shape is known."""
    def init_fun(rng: Any, input_shape: Any) -> Any:
        return make_layer(input_shape)[0](rng, input_shape)

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        return make_layer(inputs.shape)[1](params, inputs, **kwargs)

    return init_fun, apply_fun
