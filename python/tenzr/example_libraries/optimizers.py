"""JAX's `jax.example_libraries.optimizers`: each optimizer is an `(init_fun, update_fun,
get_params)` triple over pytrees of parameters.

    opt_init, opt_update, get_params = optimizers.adam(1e-3)
    state = opt_init(params)
    state = opt_update(step, tz.grad(loss)(get_params(state)), state)

`init_fun(params)` gives an `OptimizerState` (a pytree, so it passes through `tz.jit`),
`update_fun(step, grads, state)` the next one, `get_params(state)` the parameters. A
step size is a number or a schedule `step -> size` (`exponential_decay`, ...).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, NamedTuple

import tenzr.numpy_api as tnp
import tenzr.numpy_lib as tlib
from tenzr.core import array
from tenzr.dialect.diagnostics import TenzrError
from tenzr.pytree import flatten, register_node, unflatten


class OptimizerState(NamedTuple):
    """The state of every parameter leaf, flattened, with the structures to rebuild it."""

    packed_state: list[Any]
    tree_def: Any
    subtree_defs: tuple[Any, ...]


register_node(OptimizerState, lambda s: ((s.packed_state,), (s.tree_def, s.subtree_defs)),
              lambda aux, children: OptimizerState(children[0], aux[0], aux[1]))


class Optimizer(NamedTuple):
    init_fn: Callable[[Any], OptimizerState]
    update_fn: Callable[[Any, Any, OptimizerState], OptimizerState]
    params_fn: Callable[[OptimizerState], Any]


Schedule = Callable[[Any], Any]
Triple = tuple[Callable, Callable, Callable]  # (init_fun, update_fun, get_params) as an optimizer maker returns them


def optimizer(opt_maker: Callable[..., Triple]) -> Callable[..., Optimizer]:
    """Decorator: lifts an optimizer written for one array (`init(x) -> state`,
    `update(i, g, state) -> state`, `get_params(state) -> x`) to pytrees of parameters."""

    @functools.wraps(opt_maker)
    def tree_opt_maker(*args: Any, **kwargs: Any) -> Optimizer:
        init, update, get_params = opt_maker(*args, **kwargs)

        @functools.wraps(init)
        def tree_init(params: Any) -> OptimizerState:
            leaves, tree = flatten(params)
            states = [flatten(init(x)) for x in leaves]
            return OptimizerState([s for s, _ in states], tree, tuple(d for _, d in states))

        @functools.wraps(update)
        def tree_update(i: Any, grads: Any, opt_state: OptimizerState) -> OptimizerState:
            packed, tree, subtrees = opt_state
            grad_leaves, grad_tree = flatten(grads)
            if grad_tree != tree:
                raise TenzrError("optimizer update function was passed a gradient tree that did not match the "
                                 f"parameter tree structure with which it was initialized: parameter tree {tree} "
                                 f"and grad tree {grad_tree}")
            new_packed = []
            for g, state, subtree in zip(grad_leaves, packed, subtrees, strict=True):
                new_leaves, new_subtree = flatten(update(i, g, unflatten(subtree, state)))
                if new_subtree != subtree:
                    raise TenzrError("optimizer update function produced an output structure that did not match "
                                     f"its input structure: input {subtree} and output {new_subtree}")
                new_packed.append(new_leaves)
            return OptimizerState(new_packed, tree, subtrees)

        @functools.wraps(get_params)
        def tree_get_params(opt_state: OptimizerState) -> Any:
            packed, tree, subtrees = opt_state
            return unflatten(tree, [get_params(unflatten(d, s)) for s, d in zip(packed, subtrees, strict=True)])

        return Optimizer(tree_init, tree_update, tree_get_params)

    return tree_opt_maker


def _first(state: tuple) -> Any:
    return state[0]


@optimizer
def sgd(step_size: Any) -> Triple:
    """Stochastic gradient descent: x - step_size(i) * g."""
    size = make_schedule(step_size)
    return (lambda x0: x0), (lambda i, g, x: x - size(i) * g), (lambda x: x)


@optimizer
def momentum(step_size: Any, mass: float) -> Triple:
    """Heavy-ball momentum: v = mass * v + g; x - step_size(i) * v."""
    size = make_schedule(step_size)

    def update(i: Any, g: Any, state: tuple) -> tuple:
        x, velocity = state
        velocity = mass * velocity + g
        return x - size(i) * velocity, velocity

    return (lambda x0: (x0, tnp.zeros_like(x0))), update, _first


@optimizer
def nesterov(step_size: Any, mass: float) -> Triple:
    """Nesterov's accelerated momentum: v = mass * v + g; x - step_size(i) * (mass * v + g)."""
    size = make_schedule(step_size)

    def update(i: Any, g: Any, state: tuple) -> tuple:
        x, velocity = state
        velocity = mass * velocity + g
        return x - size(i) * (mass * velocity + g), velocity

    return (lambda x0: (x0, tnp.zeros_like(x0))), update, _first


@optimizer
def adagrad(step_size: Any, momentum: float = 0.9) -> Triple:
    """Adagrad (Duchi et al. 2011) with momentum on the scaled gradient."""
    size = make_schedule(step_size)

    def update(i: Any, g: Any, state: tuple) -> tuple:
        x, g_sq, m = state
        g_sq = g_sq + tnp.square(g)
        inv_sqrt = tnp.where(g_sq > 0, 1.0 / tnp.sqrt(g_sq), 0.0)
        m = (1.0 - momentum) * (g * inv_sqrt) + momentum * m
        return x - size(i) * m, g_sq, m

    return (lambda x0: (x0, tnp.zeros_like(x0), tnp.zeros_like(x0))), update, _first


@optimizer
def rmsprop(step_size: Any, gamma: float = 0.9, eps: float = 1e-8) -> Triple:
    """RMSProp: a decaying mean of g**2 (rate `gamma`) scales each step."""
    size = make_schedule(step_size)

    def update(i: Any, g: Any, state: tuple) -> tuple:
        x, avg_sq = state
        avg_sq = avg_sq * gamma + tnp.square(g) * (1.0 - gamma)
        return x - size(i) * g / tnp.sqrt(avg_sq + eps), avg_sq

    return (lambda x0: (x0, tnp.zeros_like(x0))), update, _first


@optimizer
def rmsprop_momentum(step_size: Any, gamma: float = 0.9, eps: float = 1e-8,
                     momentum: float = 0.9) -> Triple:
    """RMSProp with momentum on the scaled step."""
    size = make_schedule(step_size)

    def update(i: Any, g: Any, state: tuple) -> tuple:
        x, avg_sq, mom = state
        avg_sq = avg_sq * gamma + tnp.square(g) * (1.0 - gamma)
        mom = momentum * mom + size(i) * g / tnp.sqrt(avg_sq + eps)
        return x - mom, avg_sq, mom

    return (lambda x0: (x0, tnp.zeros_like(x0), tnp.zeros_like(x0))), update, _first


def _bias_correction(beta: float, like: Any, i: Any) -> Any:
    return 1 - array(beta, like.dtype) ** (i + 1)


@optimizer
def adam(step_size: Any, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8) -> Triple:
    """Adam (Kingma and Ba 2015): bias-corrected first and second moment estimates."""
    size = make_schedule(step_size)

    def update(i: Any, g: Any, state: tuple) -> tuple:
        x, m, v = state
        m = (1 - b1) * g + b1 * m
        v = (1 - b2) * tnp.square(g) + b2 * v
        m_hat, v_hat = m / _bias_correction(b1, m, i), v / _bias_correction(b2, m, i)
        return x - size(i) * m_hat / (tnp.sqrt(v_hat) + eps), m, v

    return (lambda x0: (x0, tnp.zeros_like(x0), tnp.zeros_like(x0))), update, _first


@optimizer
def adamax(step_size: Any, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8) -> Triple:
    """AdaMax: Adam with the infinity norm in place of the second moment."""
    size = make_schedule(step_size)

    def update(i: Any, g: Any, state: tuple) -> tuple:
        x, m, u = state
        m = (1 - b1) * g + b1 * m
        u = tnp.maximum(b2 * u, tnp.abs(g))
        return x - (size(i) / _bias_correction(b1, m, i)) * m / (u + eps), m, u

    return (lambda x0: (x0, tnp.zeros_like(x0), tnp.zeros_like(x0))), update, _first


@optimizer
def sm3(step_size: Any, momentum: float = 0.9) -> Triple:
    """SM3 (Anil et al. 2019): one accumulator per axis instead of one per entry."""
    size = make_schedule(step_size)

    def along(ndim: int, v: Any, axis: int) -> Any:
        return v.reshape(tuple(v.shape[0] if d == axis else 1 for d in range(ndim)))

    def init(x0: Any) -> tuple:
        x1 = tlib.atleast_1d(x0)
        return x0, tnp.zeros_like(x0), [tnp.zeros(n, dtype=x1.dtype) for n in x1.shape]

    def update(i: Any, g: Any, state: tuple) -> tuple:
        x0, m, vs = state
        x, g, m1 = (tlib.atleast_1d(a) for a in (x0, g, m))  # (a scalar as one entry)
        accum = functools.reduce(tnp.minimum, [along(x.ndim, v, d) for d, v in enumerate(vs)]) + tnp.square(g)
        inv_sqrt = tnp.where(accum > 0, 1.0 / tnp.sqrt(accum), 0.0)
        m1 = (1.0 - momentum) * (g * inv_sqrt) + momentum * m1
        vs = [tnp.max(accum, axis=tuple(a for a in range(x.ndim) if a != d)) for d in range(x.ndim)]
        return (x - size(i) * m1).reshape(x0.shape), m1.reshape(x0.shape), vs

    return init, update, _first


def constant(step_size: Any) -> Schedule:
    """The schedule that is always `step_size`."""
    return lambda i: step_size


def exponential_decay(step_size: Any, decay_steps: Any, decay_rate: Any) -> Schedule:
    """step_size * decay_rate ** (i / decay_steps)."""
    return lambda i: step_size * decay_rate ** (i / decay_steps)


def inverse_time_decay(step_size: Any, decay_steps: Any, decay_rate: Any, staircase: bool = False) -> Schedule:
    """step_size / (1 + decay_rate * i / decay_steps), the quotient floored if `staircase`."""
    if staircase:
        return lambda i: step_size / (1 + decay_rate * tnp.floor(i / decay_steps))
    return lambda i: step_size / (1 + decay_rate * i / decay_steps)


def polynomial_decay(step_size: Any, decay_steps: Any, final_step_size: Any, power: float = 1.0) -> Schedule:
    """From step_size to final_step_size over decay_steps as (1 - i / decay_steps) ** power, then constant."""
    def schedule(i: Any) -> Any:
        fraction = (1 - tnp.minimum(i, decay_steps) / decay_steps) ** power
        return fraction * (step_size - final_step_size) + final_step_size

    return schedule


def piecewise_constant(boundaries: Any, values: Any) -> Schedule:
    """values[k] for steps i with boundaries[k-1] < i <= boundaries[k]."""
    bounds, levels = array(boundaries), array(values)
    if not (bounds.ndim == 1 and levels.ndim == 1):
        raise TenzrError("piecewise_constant: boundaries and values must be sequences")
    if bounds.shape[0] != levels.shape[0] - 1:
        raise TenzrError("piecewise_constant: boundaries must be one shorter than values, got "
                         f"{bounds.shape[0]} boundaries and {levels.shape[0]} values")
    return lambda i: levels[tnp.sum(i > bounds)]


def make_schedule(scalar_or_schedule: Any) -> Schedule:
    """A schedule as given, or the constant schedule of a number."""
    if callable(scalar_or_schedule):
        return scalar_or_schedule
    if tlib.ndim(scalar_or_schedule) == 0:
        return constant(scalar_or_schedule)
    raise TenzrError(f"a step size is a number or a schedule (step -> size), got {type(scalar_or_schedule).__name__}")


def l2_norm(tree: Any) -> Any:
    """The Euclidean norm of all the leaves of `tree` together."""
    leaves, _ = flatten(tree)
    return tnp.sqrt(sum(tnp.sum(tnp.square(x)) for x in leaves))


def clip_grads(grad_tree: Any, max_norm: Any) -> Any:
    """`grad_tree` scaled down to the l2 norm `max_norm` where its norm is larger."""
    norm = l2_norm(grad_tree)
    leaves, tree = flatten(grad_tree)
    return unflatten(tree, [tnp.where(norm < max_norm, g, g * (max_norm / norm)) for g in leaves])


class JoinPoint:
    """A leaf of `unpack_optimizer_state`'s outer tree holding one parameter's state."""

    def __init__(self, subtree: Any):
        self.subtree = subtree

    def __iter__(self):
        yield self.subtree


def unpack_optimizer_state(opt_state: OptimizerState) -> Any:
    """The parameters' tree with a `JoinPoint` of each one's state at its place (for saving)."""
    packed, tree, subtrees = opt_state
    return unflatten(tree, [JoinPoint(unflatten(d, s)) for s, d in zip(packed, subtrees, strict=True)])


def pack_optimizer_state(marked_pytree: Any) -> OptimizerState:
    """The inverse of `unpack_optimizer_state`."""
    points, tree = flatten(marked_pytree)
    if not all(isinstance(p, JoinPoint) for p in points):
        raise TenzrError("pack_optimizer_state: every leaf must be a JoinPoint (from unpack_optimizer_state)")
    states = [flatten(p.subtree) for p in points]
    return OptimizerState([s for s, _ in states], tree, tuple(d for _, d in states))
