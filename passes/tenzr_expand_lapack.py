"""`tenzr-expand-lapack`: JAX's LAPACK calls on the CPU, as JAX exports them
(`stablehlo.custom_call @lapack_spotrf_ffi`, `@lapack_dgetrf_ffi`, `@lapack_sgeqrf_ffi`,
`@lapack_dsyevd_ffi`, `@lapack_dtrsm_ffi`, ...: Cholesky, LU and QR factorizations,
symmetric eigendecompositions, singular value decompositions and triangular solves, from
`jnp.linalg.cholesky`, `solve`, `inv`, `slogdet`, `qr`, `eigh`, `eigvalsh`, `svd`, `pinv`,
`cho_solve`, `lu_factor`, `solve_triangular` and the like), as StableHLO loops. IREE has
no LAPACK, and tenzr-grad, tenzr-jvp and tenzr-batch differentiate and batch the loops as
any other (they run this expansion first).

- potrf (A = L Lᵀ, real): one column of L per iteration, L[:, j] = (A[:, j] - L L[j, :]ᵀ)
  / sqrt(that at j), below the diagonal. Its `info` is 0, or 1 where a pivot is not
  positive (or NaN), and JAX's code around the call then makes the factor NaN, as with
  LAPACK (which keeps the columns before a NaN; this makes them NaN too). uplo=U factors
  the upper triangle (A = Uᵀ U).
- getrf (real, any shape): Gaussian elimination with partial pivoting, one column per
  iteration, LAPACK's results: L and U packed, the 1-based pivot rows, and `info`, the
  first zero pivot's column (1-based) or 0. The pivot is the first largest |A[i, j]|,
  i >= j, as LAPACK's idamax picks it (a NaN only where the search starts); a NaN then
  spreads through what follows, where LAPACK builds differ.
- geqrf and orgqr (real, any shape): Householder QR as LAPACK's dgeqr2 computes it (so
  R's signs are LAPACK's), then Q from the reflectors, applied to the identity from the
  last, one reflector per iteration.
- syevd (real): cyclic Jacobi, JACOBI_SWEEPS sweeps of n - 1 rounds, each rotating n/2
  disjoint pairs at once; eigenvalues ascending, eigenvectors as columns (their signs may
  differ from LAPACK's); `info` 0. Its derivative is the loop's, which matches the
  textbook one where eigenvalues are distinct (and stays finite where they are not).
- gesdd and gesvd (real, any shape): one-sided Jacobi on the columns of A (of Aᵀ where A
  is wide), the same sweeps and rotations as syevd's, applied to A's columns; singular
  values descending; U completed to an orthonormal basis by Householder QR (zero singular
  values, full U of a tall A); the singular vectors' signs may differ from LAPACK's; `info`
  0. Mode N (values only) leaves U and Vᵀ zeros.
- trsm (op(A) X = B, or X op(A) = B with side=R; real): the equivalent left solve with a
  lower or upper triangular matrix, one row of X per iteration, reading only A's triangle
  (and ones for its diagonal with diag=U).

Leading dimensions are batch dimensions. Complex calls stay as they are (tenzr-grad then
says it has no rule for them).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from tenzr.dialect.context import ops_named, replace_op
from tenzr.dialect.ir_imports import Value, ir
from tenzr.dialect.types import TensorSpec
from tenzr.passes import stablehlo as sh
from tenzr.passes.registry import Pass, register

_TARGET = re.compile(r"lapack_([sd])(potrf|trsm|getrf|geqrf|orgqr|syevd|gesdd|gesvd)_ffi")
_SVD_VECTORS = {ord("A"): "full", ord("S"): "thin", ord("N"): "none"}  # (gesdd's and gesvd's job)
_LOWER, _RIGHT, _NO_TRANSPOSE, _UNIT = ord("L"), ord("R"), ord("N"), ord("U")


def expand_lapack(module: ir.Operation) -> None:
    """Rewrites every real LAPACK call of JAX's in `module` that it knows (see the module doc)."""
    for op in ops_named(module, {"stablehlo.custom_call"}):
        match = _TARGET.fullmatch(ir.StringAttr(op.attributes["call_target_name"]).value)
        if match is None:
            continue
        config = _backend_config(op)
        with op.location, ir.InsertionPoint(op):
            if match.group(2) == "potrf":
                factor = _cholesky(op.operands[0], lower=config.get("uplo", _LOWER) == _LOWER)
                replace_op(op, [factor, _failures(factor, sh.spec(op.results[1]))])
            elif match.group(2) == "syevd":
                vectors, values = _eigh(op.operands[0], lower=config.get("uplo", _LOWER) == _LOWER)
                replace_op(op, [vectors, values, sh.zeros(sh.spec(op.results[2]))])
            elif match.group(2) in ("gesdd", "gesvd"):
                vectors = _SVD_VECTORS[config.get("mode", ord("A"))]
                values, u, vt = _svd(op.operands[0], vectors)
                u_spec, vt_spec = sh.spec(op.results[2]), sh.spec(op.results[3])
                replace_op(op, [op.operands[0], values, sh.zeros(u_spec) if u is None else u,
                                sh.zeros(vt_spec) if vt is None else vt, sh.zeros(sh.spec(op.results[4]))])
            elif match.group(2) == "geqrf":
                replace_op(op, list(_householder(op.operands[0])))
            elif match.group(2) == "orgqr":
                replace_op(op, [_orthogonal(*op.operands)])
            elif match.group(2) == "getrf":
                replace_op(op, list(_lu(op.operands[0])))
            else:
                a, b = op.operands
                replace_op(op, [_triangular_solve(a, b, config)])


def _backend_config(op: ir.Operation) -> dict[str, int]:
    if "mhlo.backend_config" not in op.attributes:
        return {}
    return {named.name: ir.IntegerAttr(named.attr).value for named in ir.DictAttr(op.attributes["mhlo.backend_config"])
            if isinstance(named.attr, ir.IntegerAttr)}


def _swap_last(x: Value) -> Value:
    rank = sh.spec(x).rank
    return sh.transpose(x, [*range(rank - 2), rank - 1, rank - 2])


def _index(spec: TensorSpec, dimension: int) -> Value:
    """The position along `dimension` of each element of a tensor of `spec`, as int32."""
    return sh.iota(spec.with_dtype("i32"), dimension)


def _scalar(value: Value, like: TensorSpec) -> Value:
    """A 0-d int32 loop counter broadcast to `like`'s shape."""
    return sh.broadcast_in_dim(value, like.shape, [])


def _loop(count: int, carried: list[Value], step: Callable[[Value, list[Value]], list[Value]]) -> list[Value]:
    """`for t in range(count): carried = step(t, carried)`, t a 0-d int32; the carried
    values come back."""
    counter = TensorSpec((), "i32")
    start = sh.constant(0, counter)

    def condition(values: list[Value]) -> Value:
        return sh.compare(values[0], sh.constant(count, counter), "LT")

    def body(values: list[Value]) -> list[Value]:
        t = values[0]
        return [sh.add(t, sh.constant(1, counter)), *step(t, values[1:])]

    return sh.while_loop([start, *carried], condition, body)[1:]


def _cholesky(a: Value, lower: bool) -> Value:
    """L with A = L Lᵀ from A's lower triangle (with `lower`; else Lᵀ from its upper)."""
    if not lower:
        return _swap_last(_cholesky(_swap_last(a), True))
    s = sh.spec(a)
    n, batch = s.shape[-1], s.shape[:-2]
    rank = s.rank
    dims = list(range(len(batch)))
    column_spec = s.with_shape((*batch, n, 1))

    def step(j: Value, values: list[Value]) -> list[Value]:
        a, factor = values
        zero = sh.constant(0, TensorSpec((), "i32"))  # (made inside the loop: IREE is surest of loops without captures)
        row = sh.dynamic_slice(factor, [*([zero] * len(batch)), j, zero], (*batch, 1, n))
        done = sh.dot_general(factor, row, (dims, dims), ((rank - 1,), (rank - 1,)))  # L L[j, :]ᵀ: [..., n, 1]
        rest = sh.subtract(sh.dynamic_slice(a, [*([zero] * len(batch)), zero, j], (*batch, n, 1)), done)
        pivot = sh.dynamic_slice(rest, [*([zero] * len(batch)), j, zero], (*batch, 1, 1))
        scaled = sh.divide(rest, sh.broadcast_in_dim(sh.sqrt(pivot), column_spec.shape, range(rank)))
        below = sh.compare(_index(column_spec, rank - 2), _scalar(j, column_spec.with_dtype("i32")), "GE")
        column = sh.select(below, scaled, sh.zeros(column_spec))
        return [a, sh.dynamic_update_slice(factor, column, [*([zero] * len(batch)), zero, j])]

    return _loop(n, [a, sh.zeros(s)], step)[1]


def _lu(a: Value) -> tuple[Value, Value, Value]:
    """getrf of A [..., m, n]: (L and U packed in one matrix, L's unit diagonal left out;
    the row swapped with each of the first min(m, n) rows, counted from 1; info, the first
    column whose pivot is 0, counted from 1, or 0), by Gaussian elimination with partial
    pivoting (the first of the largest |A[i, j]|, i >= j), one column per iteration. Each
    batch element picks its own pivot rows, so rows move by selects, not slices."""
    s = sh.spec(a)
    m, n, batch, rank = s.shape[-2], s.shape[-1], s.shape[:-2], s.rank
    k = min(m, n)
    pivots_spec, rows_spec = TensorSpec((*batch, k), "i32"), TensorSpec((*batch, m), "i32")

    def step(j: Value, values: list[Value]) -> list[Value]:
        a, pivots = values
        rows, columns = _index(s, rank - 2), _index(s, rank - 1)
        here = _scalar(j, s.with_dtype("i32"))
        in_column = sh.compare(columns, here, "EQ")
        column = sh.reduce(sh.select(in_column, a, sh.zeros(s)), 0, [rank - 1], "add")  # A[:, j]: [..., m]
        row_index = _index(rows_spec, rank - 2)
        at_j = sh.compare(row_index, _scalar(j, rows_spec), "EQ")
        magnitude = sh.abs_(column)
        # LAPACK's idamax: the first largest |A[i, j]|, i >= j, NaNs never larger (but a NaN
        # at i = j, where the search starts, is kept)
        searched = sh.compare(row_index, _scalar(j, rows_spec), "GE")
        candidates = sh.select(sh.and_(searched, sh.compare(magnitude, magnitude, "EQ")), magnitude,
                               sh.full(sh.spec(column), -1))
        largest = sh.broadcast_in_dim(sh.reduce(candidates, float("-inf"), [rank - 2], "max"), rows_spec.shape,
                                      range(rank - 2))
        first = sh.select(sh.and_(searched, sh.compare(candidates, largest, "EQ")), row_index,
                          sh.full(rows_spec, m))
        nan_first = sh.and_(at_j, sh.compare(magnitude, magnitude, "NE"))
        first = sh.select(nan_first, row_index, first)
        p = sh.reduce(first, m, [rank - 2], "min")  # the pivot row: [...]
        is_j, is_p = sh.compare(rows, here, "EQ"), sh.compare(rows, sh.broadcast_in_dim(p, s.shape, range(rank - 2)),
                                                              "EQ")
        across = [*range(rank - 2), rank - 1]  # (a row [..., n] spread over the rows)
        row_j = sh.broadcast_in_dim(sh.reduce(sh.select(is_j, a, sh.zeros(s)), 0, [rank - 2], "add"), s.shape, across)
        row_p = sh.broadcast_in_dim(sh.reduce(sh.select(is_p, a, sh.zeros(s)), 0, [rank - 2], "add"), s.shape, across)
        a = sh.select(is_j, row_p, sh.select(is_p, row_j, a))  # (rows j and p swapped)
        down = list(range(rank - 1))  # (a column [..., m] spread over the columns)
        column = sh.broadcast_in_dim(sh.reduce(sh.select(in_column, a, sh.zeros(s)), 0, [rank - 1], "add"), s.shape,
                                     down)
        pivot = _spread(sh.select(sh.and_(is_j, in_column), a, sh.zeros(s)), s)  # A[j, j] after the swap
        zero_pivot = sh.compare(pivot, sh.zeros(s), "EQ")
        below = sh.compare(rows, here, "GT")
        multipliers = sh.select(sh.and_(below, sh.not_(zero_pivot)),
                                sh.divide(column, sh.select(zero_pivot, sh.full(s, 1), pivot)), sh.zeros(s))
        update = sh.multiply(multipliers, row_p)  # l[i] U[j, k]
        a = sh.subtract(a, sh.select(sh.compare(columns, here, "GT"), update, sh.zeros(s)))
        a = sh.select(sh.and_(below, in_column), multipliers, a)
        pivot_j = sh.compare(_index(pivots_spec, rank - 2), _scalar(j, pivots_spec), "EQ")
        pivots = sh.select(pivot_j, sh.broadcast_in_dim(sh.add(p, sh.full(sh.spec(p), 1)), pivots_spec.shape,
                                                        range(rank - 2)), pivots)
        return [a, pivots]

    packed, pivots = _loop(k, [a, sh.zeros(pivots_spec)], step)
    diagonal = sh.compare(_index(s, rank - 2), _index(s, rank - 1), "EQ")
    zeros = sh.and_(diagonal, sh.compare(packed, sh.zeros(s), "EQ"))
    first = sh.reduce(sh.select(zeros, sh.add(_index(s, rank - 1), sh.full(s.with_dtype("i32"), 1)),
                                sh.full(s.with_dtype("i32"), k + 1)), k + 1, [rank - 2, rank - 1], "min")
    info = sh.select(sh.compare(first, sh.full(sh.spec(first), k + 1), "EQ"), sh.zeros(sh.spec(first)), first)
    return packed, pivots, info


def _householder(a: Value) -> tuple[Value, Value]:
    """geqrf: (R above the diagonal and the Householder vectors below it, LAPACK's taus),
    one reflector H = I - tau v vᵀ (v[j] = 1) per column j < min(m, n), as LAPACK's dgeqr2
    and dlarfg make them (tau = 0 where the column below the diagonal is already 0)."""
    s = sh.spec(a)
    m, n, batch, rank = s.shape[-2], s.shape[-1], s.shape[:-2], s.rank
    k = min(m, n)
    taus_spec = TensorSpec((*batch, k), s.dtype)
    lead = range(rank - 2)

    def step(j: Value, values: list[Value]) -> list[Value]:
        a, taus = values
        rows, columns = _index(s, rank - 2), _index(s, rank - 1)
        here = _scalar(j, s.with_dtype("i32"))
        in_column, at_row, below = (sh.compare(columns, here, "EQ"), sh.compare(rows, here, "EQ"),
                                    sh.compare(rows, here, "GT"))
        column = sh.broadcast_in_dim(sh.reduce(sh.select(in_column, a, sh.zeros(s)), 0, [rank - 1], "add"), s.shape,
                                     range(rank - 1))  # A[:, j] along every column
        alpha = _spread(sh.select(sh.and_(at_row, in_column), a, sh.zeros(s)), s)
        rest = _spread(sh.select(sh.and_(below, in_column), sh.multiply(a, a), sh.zeros(s)), s)  # |A[j+1:, j]|²
        norm = sh.sqrt(sh.add(sh.multiply(alpha, alpha), rest))
        beta = sh.select(sh.compare(alpha, sh.zeros(s), "GE"), sh.negate(norm), norm)
        reflects = sh.compare(rest, sh.zeros(s), "NE")
        beta = sh.select(reflects, beta, alpha)
        safe_beta = sh.select(reflects, beta, sh.full(s, 1))
        tau = sh.select(reflects, sh.divide(sh.subtract(beta, alpha), safe_beta), sh.zeros(s))
        scale = sh.select(reflects, sh.subtract(alpha, beta), sh.full(s, 1))
        v = sh.select(at_row, sh.full(s, 1), sh.select(below, sh.divide(column, scale), sh.zeros(s)))  # [..., m, n]
        w = sh.reduce(sh.multiply(v, a), 0, [rank - 2], "add")  # vᵀ A: [..., n]
        w = sh.broadcast_in_dim(w, s.shape, [*lead, rank - 1])
        a = sh.subtract(a, sh.select(sh.compare(columns, here, "GT"), sh.multiply(tau, sh.multiply(v, w)), sh.zeros(s)))
        a = sh.select(in_column, sh.select(at_row, beta, sh.select(below, v, a)), a)
        tau_now = sh.reduce(sh.select(sh.and_(at_row, in_column), tau, sh.zeros(s)), 0, [rank - 2, rank - 1], "add")
        at_j = sh.compare(_index(taus_spec, rank - 2), _scalar(j, taus_spec.with_dtype("i32")), "EQ")
        taus = sh.select(at_j, sh.broadcast_in_dim(tau_now, taus_spec.shape, lead), taus)
        return [a, taus]

    packed, taus = _loop(k, [a, sh.zeros(taus_spec)], step)
    return packed, taus


def _orthogonal(a: Value, taus: Value) -> Value:
    """orgqr: the first columns of Q = H_0 ... H_{k-1} (geqrf's reflectors, v below the
    diagonal of `a` and tau in `taus`), as many as `a` has: the reflectors applied to the
    identity from the last."""
    s = sh.spec(a)
    rank = s.rank
    k = sh.spec(taus).shape[-1]
    lead = range(rank - 2)
    identity = sh.convert(sh.compare(_index(s, rank - 2), _index(s, rank - 1), "EQ"), s.dtype)

    def step(t: Value, values: list[Value]) -> list[Value]:
        a, taus, q = values
        j = sh.subtract(sh.constant(k - 1, TensorSpec((), "i32")), t)
        rows, columns = _index(s, rank - 2), _index(s, rank - 1)
        here = _scalar(j, s.with_dtype("i32"))
        in_column, at_row, below = (sh.compare(columns, here, "EQ"), sh.compare(rows, here, "EQ"),
                                    sh.compare(rows, here, "GT"))
        column = sh.broadcast_in_dim(sh.reduce(sh.select(in_column, a, sh.zeros(s)), 0, [rank - 1], "add"), s.shape,
                                     range(rank - 1))
        v = sh.select(at_row, sh.full(s, 1), sh.select(below, column, sh.zeros(s)))
        tau_spec = sh.spec(taus)
        at_j = sh.compare(_index(tau_spec, rank - 2), _scalar(j, tau_spec.with_dtype("i32")), "EQ")
        tau = sh.broadcast_in_dim(sh.reduce(sh.select(at_j, taus, sh.zeros(tau_spec)), 0, [rank - 2], "add"), s.shape,
                                  lead)
        w = sh.broadcast_in_dim(sh.reduce(sh.multiply(v, q), 0, [rank - 2], "add"), s.shape, [*lead, rank - 1])
        return [a, taus, sh.subtract(q, sh.multiply(tau, sh.multiply(v, w)))]

    return _loop(k, [a, taus, identity], step)[2]


def _eigh(a: Value, lower: bool) -> tuple[Value, Value]:
    """syevd: (eigenvectors as columns, eigenvalues ascending) of the symmetric matrix in
    A's lower (or upper) triangle, by cyclic Jacobi: each round rotates n/2 disjoint pairs
    of rows and columns at once (`_rotation`), A <- Jᵀ A J and V <- V J. The eigenvectors'
    signs may differ from LAPACK's."""
    s = sh.spec(a)
    n, batch, rank = s.shape[-1], s.shape[:-2], s.rank
    if n == 1:  # (nothing to rotate)
        return sh.full(s, 1), sh.reshape(a, (*batch, 1))
    rows, columns = _index(s, rank - 2), _index(s, rank - 1)
    kept = sh.compare(rows, columns, "GE" if lower else "LE")
    triangle = sh.select(kept, a, sh.zeros(s))
    strict = sh.select(sh.compare(rows, columns, "EQ"), sh.zeros(s), triangle)
    symmetric = sh.add(triangle, _swap_last(strict))
    dims = (list(range(rank - 2)), list(range(rank - 2)))

    def step(pairing: Value, values: list[Value]) -> list[Value]:
        matrix, vectors = values
        across = sh.reduce(sh.multiply(matrix, pairing), 0, [rank - 1], "add")  # A[i, π(i)]
        rotation = _rotation(_diagonal(matrix), across, pairing)
        rotated = sh.dot_general(matrix, rotation, dims, ((rank - 1,), (rank - 2,)))  # A J
        matrix = sh.dot_general(rotation, rotated, dims, ((rank - 2,), (rank - 2,)))  # Jᵀ (A J)
        return [matrix, sh.dot_general(vectors, rotation, dims, ((rank - 1,), (rank - 2,)))]

    matrix, vectors = _sweeps(n, [symmetric, _identity(s)], step)
    moves = _ordering(_diagonal(matrix), descending=False)
    return sh.dot_general(vectors, moves, dims, ((rank - 1,), (rank - 2,))), _moved(_diagonal(matrix), moves)


def _svd(a: Value, vectors: str) -> tuple[Value, Value | None, Value | None]:
    """gesdd and gesvd: (singular values descending, U, Vᵀ), U and Vᵀ square
    (`vectors="full"`), as wide as there are singular values ("thin"), or None ("none"),
    from `_tall_svd` of A, or of Aᵀ where A is wide (then U and V trade places)."""
    s = sh.spec(a)
    if s.shape[-2] >= s.shape[-1]:
        values, u, v = _tall_svd(a, vectors)
        return values, u, None if v is None else _swap_last(v)
    values, u, v = _tall_svd(_swap_last(a), vectors)
    return values, v, None if u is None else _swap_last(u)


def _tall_svd(a: Value, vectors: str) -> tuple[Value, Value | None, Value | None]:
    """(s, U, V) of A [..., m, n], m >= n, by one-sided Jacobi on A's columns: rounds of
    `_rotation` make them orthogonal, G <- G J and V <- V J, so A = G Vᵀ; the singular values
    are G's column norms and U's columns G's, normalized. U then goes through Householder
    QR, whose Q (its signs set by R's diagonal) is U where U's columns are orthonormal and
    completes them to an orthonormal basis where they are not (zero singular values, or
    `vectors="full"` with m > n). The singular vectors' signs may differ from LAPACK's."""
    s = sh.spec(a)
    m, n, batch, rank = s.shape[-2], s.shape[-1], s.shape[:-2], s.rank
    square = TensorSpec((*batch, n, n), s.dtype)
    dims = (list(range(rank - 2)), list(range(rank - 2)))

    def step(pairing: Value, values: list[Value]) -> list[Value]:
        g, v = values
        paired = sh.dot_general(g, pairing, dims, ((rank - 1,), (rank - 2,)))  # G[:, π(i)]
        across = sh.reduce(sh.multiply(g, paired), 0, [rank - 2], "add")  # G[:, i] · G[:, π(i)]
        rotation = _rotation(sh.reduce(sh.multiply(g, g), 0, [rank - 2], "add"), across, pairing)
        return [sh.dot_general(g, rotation, dims, ((rank - 1,), (rank - 2,))),
                sh.dot_general(v, rotation, dims, ((rank - 1,), (rank - 2,)))]

    g, v = _sweeps(n, [a, _identity(square)], step) if n > 1 else [a, _identity(square)]
    squares = sh.reduce(sh.multiply(g, g), 0, [rank - 2], "add")
    positive = sh.compare(squares, sh.zeros(sh.spec(squares)), "GT")
    norms = sh.select(positive, sh.sqrt(sh.select(positive, squares, sh.full(sh.spec(squares), 1))),
                      sh.zeros(sh.spec(squares)))  # (a finite derivative at 0)
    moves = _ordering(norms, descending=True)
    values = _moved(norms, moves)
    if vectors == "none":
        return values, None, None
    g = sh.dot_general(g, moves, dims, ((rank - 1,), (rank - 2,)))
    v = sh.dot_general(v, moves, dims, ((rank - 1,), (rank - 2,)))
    nonzero = sh.broadcast_in_dim(sh.compare(values, sh.zeros(sh.spec(values)), "GT"), s.shape, [*dims[0], rank - 1])
    spread = sh.broadcast_in_dim(values, s.shape, [*dims[0], rank - 1])
    columns = sh.select(nonzero, sh.divide(g, sh.select(nonzero, spread, sh.full(s, 1))), sh.zeros(s))
    packed, taus = _householder(columns)
    signs = _diagonal(packed)
    signs = sh.select(sh.compare(signs, sh.zeros(sh.spec(signs)), "LT"), sh.full(sh.spec(signs), -1),
                      sh.full(sh.spec(signs), 1))
    if vectors == "full" and m > n:
        packed = sh.concatenate([packed, sh.zeros(TensorSpec((*batch, m, m - n), s.dtype))], rank - 1)
        signs = sh.concatenate([signs, sh.full(TensorSpec((*batch, m - n), s.dtype), 1)], rank - 2)
    q = _orthogonal(packed, taus)
    u = sh.multiply(q, sh.broadcast_in_dim(signs, sh.spec(q).shape, [*dims[0], rank - 1]))
    return values, u, v


JACOBI_SWEEPS = 12
"""Sweeps of `_eigh` and `_svd` (each n - 1 rounds of n/2 rotations): off-diagonal mass
shrinks quadratically, so 12 leave float64 matrices of a few hundred rows diagonal to
rounding."""


def _sweeps(n: int, carried: list[Value], round_: Callable[[Value, list[Value]], list[Value]]) -> list[Value]:
    """JACOBI_SWEEPS sweeps over all pairs of 0..n-1, n > 1, in the round-robin order
    (`_round_robin`): each round calls `round_(P, carried)`, P[..., i, j] = 1 where j is i's
    partner π(i) in the round (a permutation matrix of the carried values' dtype, batched as
    the first; P[i, i] = 1 for the one left out when n is odd)."""
    first = sh.spec(carried[0])
    batch, dtype = first.shape[:-2], first.dtype
    schedule = _round_robin(n)
    rounds = schedule.shape[0]
    counter = TensorSpec((), "i32")

    def step(t: Value, values: list[Value]) -> list[Value]:
        table, *values = values
        r = sh.remainder(t, sh.constant(rounds, counter))
        partner = sh.reshape(sh.dynamic_slice(table, [r, sh.constant(0, counter)], (1, n)), (n,))
        pairing = sh.convert(sh.compare(sh.iota(TensorSpec((n, n), "i32"), 1),
                                        sh.broadcast_in_dim(partner, (n, n), [0]), "EQ"), dtype)
        pairing = sh.broadcast_in_dim(pairing, (*batch, n, n), [len(batch), len(batch) + 1])
        return [table, *round_(pairing, values)]

    table = sh.constant(schedule, TensorSpec(schedule.shape, "i32"))
    return _loop(JACOBI_SWEEPS * rounds, [table, *carried], step)[1:]


def _rotation(diagonal: Value, across: Value, pairing: Value) -> Value:
    """The round's Jacobi rotation J = diag(c) + diag(±s) P that zeroes A[p, q] for each
    pair p < q of `pairing` P in Jᵀ A J, for a symmetric A given by its `diagonal` and
    `across`, A[i, π(i)] (no rotation where that is 0, or i has no partner)."""
    vector, s = sh.spec(diagonal), sh.spec(pairing)
    rank = s.rank
    lead = list(range(rank - 2))
    later = sh.convert(sh.compare(_index(s, rank - 1), _index(s, rank - 2), "GT"), s.dtype)
    first = sh.compare(sh.reduce(sh.multiply(pairing, later), 0, [rank - 1], "add"), sh.zeros(vector),
                       "GT")  # π(i) > i: i is its pair's p
    mirrored = sh.reduce(sh.multiply(pairing, sh.broadcast_in_dim(diagonal, s.shape, [*lead, rank - 1])), 0,
                         [rank - 1], "add")  # A[π(i), π(i)]
    low, high = sh.select(first, diagonal, mirrored), sh.select(first, mirrored, diagonal)
    paired = sh.compare(_diagonal(pairing), sh.zeros(vector), "EQ")
    rotates = sh.and_(paired, sh.compare(across, sh.zeros(vector), "NE"))
    safe = sh.select(rotates, across, sh.full(vector, 1))
    tau = sh.divide(sh.subtract(high, low), sh.multiply(sh.full(vector, 2), safe))
    root = sh.sqrt(sh.add(sh.full(vector, 1), sh.multiply(tau, tau)))
    sign = sh.select(sh.compare(tau, sh.zeros(vector), "GE"), sh.full(vector, 1), sh.full(vector, -1))
    tangent = sh.select(rotates, sh.divide(sign, sh.add(sh.abs_(tau), root)), sh.zeros(vector))
    cosine = sh.rsqrt(sh.add(sh.full(vector, 1), sh.multiply(tangent, tangent)))
    sine = sh.multiply(tangent, cosine)
    signed = sh.select(first, sine, sh.negate(sine))
    return sh.add(sh.multiply(_identity(s), sh.broadcast_in_dim(cosine, s.shape, [*lead, rank - 2])),
                  sh.multiply(pairing, sh.broadcast_in_dim(signed, s.shape, [*lead, rank - 2])))


def _identity(s: TensorSpec) -> Value:
    return sh.convert(sh.compare(_index(s, s.rank - 2), _index(s, s.rank - 1), "EQ"), s.dtype)


def _diagonal(a: Value) -> Value:
    """A[..., i, i] for each i < min(m, n), as [..., min(m, n)] (summed over rows when m > n:
    only the diagonal is nonzero in the selection)."""
    s = sh.spec(a)
    on = sh.compare(_index(s, s.rank - 2), _index(s, s.rank - 1), "EQ")
    m, n = s.shape[-2:]
    return sh.reduce(sh.select(on, a, sh.zeros(s)), 0, [s.rank - 2 if m >= n else s.rank - 1], "add")


def _ordering(values: Value, descending: bool) -> Value:
    """M[..., i, k] = 1 where value i goes to place k of the ascending (or descending) order,
    ties kept in place order, by counting, not sorting (IREE 3.13 fails to compile the
    gradient's three-operand sort): place_i = #{j: w_j before w_i, or w_j = w_i and j < i}."""
    vector = sh.spec(values)
    n, rank = vector.shape[-1], vector.rank + 1
    s = TensorSpec((*vector.shape, n), vector.dtype)
    lead = list(range(rank - 2))
    rows, columns = _index(s, rank - 2), _index(s, rank - 1)
    mine = sh.broadcast_in_dim(values, s.shape, [*lead, rank - 2])  # w_i along row i
    theirs = sh.broadcast_in_dim(values, s.shape, [*lead, rank - 1])  # w_j along column j
    before = sh.or_(sh.compare(theirs, mine, "GT" if descending else "LT"),
                    sh.and_(sh.compare(theirs, mine, "EQ"), sh.compare(columns, rows, "LT")))
    place = sh.reduce(sh.convert(before, "i32"), 0, [rank - 1], "add")  # [..., n]
    return sh.convert(sh.compare(sh.broadcast_in_dim(place, s.shape, [*lead, rank - 2]), columns, "EQ"), s.dtype)


def _moved(values: Value, moves: Value) -> Value:
    """w[k] = Σ_i w_i M[i, k]: `values` in the places `_ordering` gave them."""
    vector = sh.spec(values)
    batch, n = vector.shape[:-1], vector.shape[-1]
    lead = list(range(len(batch)))
    row = sh.reshape(values, (*batch, 1, n))
    return sh.reshape(sh.dot_general(row, moves, (lead, lead), ((len(batch) + 1,), (len(batch),))), vector.shape)


def _round_robin(n: int) -> np.ndarray:
    """The partner of each of 0..n-1 in each round of a round-robin tournament (the circle
    method, with a bye for odd n: a player without a partner is its own)."""
    m = n + n % 2
    players = list(range(m))
    table = np.empty((max(m - 1, 1), n), np.int32)
    for r in range(max(m - 1, 1)):
        partner = list(range(n))
        for i in range(m // 2):
            p, q = players[i], players[m - 1 - i]
            if p < n and q < n:
                partner[p], partner[q] = q, p
        table[r] = partner
        players = [players[0], players[-1], *players[1:-1]]
    return table


def _spread(masked: Value, s: TensorSpec) -> Value:
    """The sum of each batch element's matrix, spread over the matrix (one picked entry,
    or a sum over some)."""
    return sh.broadcast_in_dim(sh.reduce(masked, 0, [s.rank - 2, s.rank - 1], "add"), s.shape, range(s.rank - 2))


def _failures(factor: Value, info: TensorSpec) -> Value:
    """potrf's info: 1 where a diagonal entry of the factor is not positive (NaN included)."""
    s = sh.spec(factor)
    on_diagonal = sh.compare(_index(s, s.rank - 2), _index(s, s.rank - 1), "EQ")
    good = sh.or_(sh.compare(factor, sh.zeros(s), "GT"), sh.not_(on_diagonal))
    all_good = sh.reduce(sh.convert(good, "i32"), 1, [s.rank - 2, s.rank - 1], "min")
    return sh.convert(sh.subtract(sh.constant(1, sh.spec(all_good)), all_good), info.dtype)


def _triangular_solve(a: Value, b: Value, config: dict[str, int]) -> Value:
    """trsm: X with op(A) X = B (side L) or X op(A) = B (side R), A triangular."""
    right = config.get("side", _LOWER) == _RIGHT
    transposed = (config.get("trans_x", _NO_TRANSPOSE) != _NO_TRANSPOSE) != right
    lower = (config.get("uplo", _LOWER) == _LOWER) != transposed
    m = a if not transposed else _swap_last(a)
    rhs = _swap_last(b) if right else b
    x = _solve_left(m, rhs, lower, unit=config.get("diag", ord("N")) == _UNIT)
    return _swap_last(x) if right else x


def _solve_left(a: Value, b: Value, lower: bool, unit: bool) -> Value:
    """X with A X = B, A [..., n, n] lower (or upper) triangular: only that triangle is
    read, and ones for its diagonal when `unit`."""
    sa, sb = sh.spec(a), sh.spec(b)
    n, k, batch = sa.shape[-1], sb.shape[-1], sb.shape[:-2]
    rank = sa.rank
    if k == 1:  # (IREE 3.13 fails to compile the loop for one column: "'llvm.fsub' op requires the same type")
        twice = _solve_left(a, sh.concatenate([b, b], rank - 1), lower, unit)
        return sh.slice_(twice, [0] * rank, [*sb.shape], [1] * rank)
    dims = list(range(len(batch)))
    strict = sh.select(sh.compare(_index(sa, rank - 2), _index(sa, rank - 1), "GT" if lower else "LT"), a,
                       sh.zeros(sa))

    def step(t: Value, values: list[Value]) -> list[Value]:
        strict, full, rhs, x = values
        zero = sh.constant(0, TensorSpec((), "i32"))
        i = t if lower else sh.subtract(sh.constant(n - 1, TensorSpec((), "i32")), t)
        row = sh.dynamic_slice(strict, [*([zero] * len(batch)), i, zero], (*batch, 1, n))
        known = sh.dot_general(row, x, (dims, dims), ((rank - 1,), (rank - 2,)))  # [..., 1, k]
        target = sh.dynamic_slice(rhs, [*([zero] * len(batch)), i, zero], (*batch, 1, k))
        solved = sh.subtract(target, known)
        if not unit:
            pivot = sh.dynamic_slice(full, [*([zero] * len(batch)), i, i], (*batch, 1, 1))
            solved = sh.divide(solved, sh.broadcast_in_dim(pivot, (*batch, 1, k), range(rank)))
        return [strict, full, rhs, sh.dynamic_update_slice(x, solved, [*([zero] * len(batch)), i, zero])]

    return _loop(n, [strict, a, b, sh.zeros(sb)], step)[3]


@register
@dataclass
class TenzrExpandLapack(Pass):
    flag: ClassVar[str] = "tenzr-expand-lapack"
    summary: ClassVar[str] = ("Rewrite JAX's LAPACK calls (stablehlo.custom_call @lapack_?potrf_ffi, "
                              "@lapack_?getrf_ffi, @lapack_?geqrf_ffi, @lapack_?orgqr_ffi, @lapack_?syevd_ffi, "
                              "@lapack_?gesdd_ffi, @lapack_?gesvd_ffi, @lapack_?trsm_ffi: Cholesky, LU, QR, symmetric "
                              "eigen and singular value decompositions and triangular solves, real) as StableHLO "
                              "loops, which IREE compiles and tenzr-grad differentiates.")

    def run(self, module: ir.Operation) -> None:
        expand_lapack(module)
