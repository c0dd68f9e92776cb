"""How a model term depends on the axes of an RBM variable: unit by unit, row by row, or coupled.

An RBM variable of shape ``(K, n_visible)`` holds ``K`` rows. The other
model terms that involve it (likelihoods, Potentials) often factorise: a term
``y ~ N(s·v + b, σ)`` is a sum over rows and units of pieces that each
involve one unit of one row; ``y_k ~ N(v_k·a, σ)`` is a sum over rows of
pieces that each involve one row. Knowing that, a step can evaluate the
change of every row (or every unit) at once, instead of re-evaluating the
whole model once per row.

:func:`axis_map` reads it off the PyTensor graph of a term by following the
value variable's axes through the graph, op by op, with rules written for a
short list of ops (elementwise ops, dimension shuffles, reductions,
broadcasts, parameter checks, matrix products, basic indexing, and integer
indexing: a table indexed by the value, ``table[x]``, and the
``take_along_axis`` of PyMC's ``Categorical``). An axis that a reduction or a
product sums over, that two operands carry in different positions, or that
reaches an op the rules do not know, is lost: the term is then not taken to
factorise along it. The analysis can only err towards "coupled", never
towards "factorised": a factorised model read as coupled is sampled by the
general (slower, still exact) path, never the other way round.

Parameter checks (``Check{0 <= p <= 1}``) whose condition involves the value
are conjunctions over positions (``All`` of an elementwise condition); such a
condition is carried as the set of the value's axes its positions keep, and a
check on it keeps those axes of the checked term. The per-unit and per-row
pieces are then exact wherever every check holds, which binary values do for
PyMC's own checks of probabilities; a value that fails a check makes the
model's logp ``-inf`` as a whole.
"""

from __future__ import annotations

from pytensor.graph.basic import Constant
from pytensor.graph.traversal import io_toposort
from pytensor.raise_op import CheckAndRaise
from pytensor.scalar.basic import AND
from pytensor.tensor.basic import (
    Alloc,
    ARange,
    MakeVector,
    ScalarFromTensor,
    TensorFromScalar,
    get_underlying_scalar_constant_value,
)
from pytensor.tensor.blockwise import Blockwise
from pytensor.tensor.elemwise import CAReduce, DimShuffle, Elemwise
from pytensor.tensor.exceptions import NotScalarConstantError
from pytensor.tensor.math import Dot
from pytensor.tensor.shape import Reshape, Shape, Shape_i, SpecifyShape
from pytensor.tensor.subtensor import AdvancedSubtensor, Subtensor

__all__ = ["axis_map", "factorised_axes", "factorises_over_units"]

#: An axis of the value that is lost (summed over, or mixed with other positions of the same axis).
LOST = None


def _elemwise(node, i):
    return lambda a: a


def _dimshuffle(node, i):
    order = list(node.op.new_order)
    return lambda a: order.index(a) if a in order else LOST


def _reduce(node, i):
    axes = node.op.axis
    if axes is None:
        return lambda a: LOST
    axes = sorted(a % node.inputs[0].type.ndim for a in axes)
    return lambda a: LOST if a in axes else a - sum(x < a for x in axes)


def _first_input(node, i):
    return (lambda a: a) if i == 0 else None


def _alloc(node, i):
    if i != 0:  # the value drives the shape: unknown
        return None
    shift = node.outputs[0].type.ndim - node.inputs[0].type.ndim
    return lambda a: a + shift


def _dot(node, i):
    x, y = node.inputs
    if x.type.ndim not in (1, 2) or y.type.ndim not in (1, 2):
        return None
    if i == 0:  # rows of x stay rows of the product; its last axis is summed over
        return lambda a: a if a < x.type.ndim - 1 else LOST
    return lambda a: x.type.ndim - 1 if (a == 1 and y.type.ndim == 2) else LOST


def _matmul(node, i):
    core = getattr(node.op, "core_op", None)
    if not isinstance(core, Dot):
        return None
    d_in = node.inputs[i].type.ndim
    d_out = node.outputs[0].type.ndim
    batch_in, batch_out = d_in - 2, d_out - 2

    def move(a):
        if a < batch_in:  # batch axes are aligned from the right, as in broadcasting
            return a + batch_out - batch_in
        if i == 0:
            return batch_out if a == d_in - 2 else LOST
        return batch_out + 1 if a == d_in - 1 else LOST

    return move


def _subtensor(node, i):
    if i != 0:  # an index that depends on the value
        return None
    out, moves = 0, {}
    for a, entry in enumerate(node.op.idx_list):
        if isinstance(entry, slice):
            whole = entry.start is None and entry.stop is None and entry.step is None
            moves[a] = out if whole else LOST  # a part of an axis: its positions move
            out += 1
        else:
            moves[a] = LOST  # one position taken: the axis is gone
    rest = len(node.op.idx_list)
    return lambda a: moves[a] if a < rest else a - rest + out


def _constant(x):
    """The value of a scalar constant graph, or None where ``x`` is not one."""
    try:
        return int(get_underlying_scalar_constant_value(x))
    except (NotScalarConstantError, TypeError, ValueError):
        return None


def _is_axis_length(n, array, axis) -> bool:
    """Whether ``n`` is ``array.shape[axis]`` (read off the graph, or a constant equal to a static length)."""
    value = _constant(n)
    if value is not None:
        return array.type.shape[axis] == value
    node = n.owner
    if node is None:
        return False
    if isinstance(node.op, Shape_i):
        return node.op.i == axis and node.inputs[0] is array
    if isinstance(node.op, Subtensor) and len(node.inputs) == 2:  # shape(array)[axis]
        shape = node.inputs[0].owner
        return (shape is not None and isinstance(shape.op, Shape) and shape.inputs[0] is array
                and _constant(node.inputs[1]) == axis)
    return False


def _identity_position(index, array, axis):
    """Where ``index`` enumerates ``axis`` of ``array`` in order, ``arange(array.shape[axis])`` reshaped to one
    non-unit axis (as ``take_along_axis`` builds it): that axis of ``index``; else None."""
    node = index.owner
    shape = [-1]
    if node is not None and isinstance(node.op, Reshape):
        if not isinstance(node.inputs[1], Constant):
            return None
        shape = [int(d) for d in node.inputs[1].data.reshape(-1)]
        index = node.inputs[0]
        node = index.owner
    if shape.count(-1) != 1 or any(d not in (-1, 1) for d in shape):
        return None
    if node is None or not isinstance(node.op, ARange):
        return None
    start, stop, step = node.inputs
    if _constant(start) != 0 or _constant(step) != 1 or not _is_axis_length(stop, array, axis):
        return None
    return shape.index(-1)


def _advanced_subtensor(node, i):
    """Integer-array indexing ``array[i_0, …, i_{m-1}]`` (no slices, no boolean masks).

    The output is the broadcast block of the indices (``B`` axes, aligned from
    the right) followed by the axes of ``array`` beyond ``m``. An index that
    holds the value (``table[x]``) keeps its axes in the block. For the indexed
    array, axis ``d`` is kept where its index is the identity along that axis
    (``take_along_axis``: output position ``j`` reads ``array`` at position ``j``
    of axis ``d`` only); any other index mixes the positions of the axis. An
    axis that another index broadcasts (static length 1 against a longer one,
    or lengths not known) is lost: its one position would feed many.
    """
    array, indices = node.inputs[0], node.inputs[1:]
    entries = node.op.idx_list
    if len(entries) != len(indices) or any(isinstance(e, slice) for e in entries):
        return None
    if any(ix.type.dtype == "bool" for ix in indices):
        return None
    block, m = max(ix.type.ndim for ix in indices), len(indices)
    # each index's position in the block where it is the identity along its axis of the array, else LOST
    identity = [_identity_position(ix, array, d) for d, ix in enumerate(indices)]
    identity = [LOST if p is None else block - ix.type.ndim + p for p, ix in zip(identity, indices)]
    # static length of every index at every position of the block (1 where an index does not reach it)
    lengths = []
    for d, ix in enumerate(indices):
        ls = [1] * (block - ix.type.ndim) + list(ix.type.shape)
        if identity[d] is not LOST:
            ls[identity[d]] = array.type.shape[d]
        lengths.append(ls)

    def unbroadcast(q, length):
        return length is not None and all(ls[q] in (1, length) for ls in lengths)

    if i > 0:
        index = node.inputs[i]
        shift = block - index.type.ndim
        return lambda a: a + shift if unbroadcast(a + shift, index.type.shape[a]) else LOST
    moves = {d: q if q is not LOST and unbroadcast(q, array.type.shape[d]) else LOST for d, q in enumerate(identity)}
    kept = [q for q in moves.values() if q is not LOST]
    for d, q in moves.items():
        if q is not LOST and kept.count(q) > 1:  # two axes read along one output axis (a diagonal): mixed
            moves[d] = LOST
    return lambda a: moves[a] if a < m else block + a - m


#: The op types whose effect on the axes is known, and the rule of each (first match wins).
_RULES = (
    (Elemwise, _elemwise),
    (DimShuffle, _dimshuffle),
    (CAReduce, _reduce),
    ((CheckAndRaise, SpecifyShape), _first_input),
    (Alloc, _alloc),
    (Dot, _dot),
    (Blockwise, _matmul),
    (Subtensor, _subtensor),
    (AdvancedSubtensor, _advanced_subtensor),
)


def _rule(node, i):
    """How input ``i`` of ``node`` maps its axes to the output's, or None where no rule is known."""
    if len(node.outputs) != 1:
        return None
    for types, rule in _RULES:
        if isinstance(node.op, types):
            return rule(node, i)
    return None


class _Conjunction(frozenset):
    """A boolean that is the conjunction of conditions over positions: the value's axes those positions keep."""


def _carry(node, carried):
    """The output's map from the inputs' (``carried``: pairs of input index and map), or None where unknown."""
    op = node.op
    conjunctions = [(i, m) for i, m in carried if isinstance(m, _Conjunction)]
    if conjunctions:
        if isinstance(op, CheckAndRaise) and all(i > 0 for i, _ in conjunctions):
            kept = frozenset.intersection(*(m for _, m in conjunctions))
            value = [m for i, m in carried if i == 0]
            if not value:  # only the check involves the value: not attributable to positions
                return None
            return tuple(a if j in kept else LOST for j, a in enumerate(value[0]))
        if len(conjunctions) == len(carried) and isinstance(op, (MakeVector, ScalarFromTensor, TensorFromScalar)):
            return _Conjunction(frozenset.intersection(*(m for _, m in conjunctions)))
        if len(carried) == 1 and isinstance(op, CAReduce) and isinstance(op.scalar_op, AND):
            return conjunctions[0][1]
        return None
    if isinstance(op, CAReduce) and isinstance(op.scalar_op, AND) and op.axis is None:
        ((_, m),) = carried
        return _Conjunction(j for j, a in enumerate(m) if a is not LOST)
    out = None
    for i, m in carried:
        rule = _rule(node, i)
        if rule is None:
            return None
        moved = tuple(LOST if a is LOST else rule(a) for a in m)
        out = moved if out is None else tuple(p if p == q else LOST for p, q in zip(out, moved))
    return out


def axis_map(term, value_var) -> tuple | None:
    """Where each axis of ``value_var`` lives in ``term``.

    Parameters
    ----------
    term : TensorVariable
        A model term (an elementwise log-probability) that involves ``value_var``.
    value_var : TensorVariable
        The RBM variable's value, of shape ``(..., n_visible)``.

    Returns
    -------
    tuple of (int or None), one per axis of ``value_var``, or None
        Entry ``j`` is the axis of ``term`` whose position ``i`` depends on
        ``value_var`` only through its slice ``i`` along axis ``j``; ``None``
        where no such axis exists (the term mixes positions of axis ``j``).
        ``None`` for the whole result when the graph holds an op whose
        effect on the axes is unknown.
    """
    maps = {value_var: tuple(range(value_var.type.ndim))}
    for node in io_toposort([value_var], [term]):
        carried = [(i, maps[x]) for i, x in enumerate(node.inputs) if x in maps]
        if not carried or isinstance(node.op, (Shape, Shape_i)):  # a shape does not depend on the values
            continue
        if len(node.outputs) != 1:
            return None
        out = _carry(node, carried)
        if out is None:
            return None
        maps[node.outputs[0]] = out
    out = maps.get(term)
    return None if isinstance(out, _Conjunction) else out


def factorised_axes(terms, value_var) -> tuple | None:
    """The axis maps of several terms (:func:`axis_map`), or None when any is unknown."""
    maps = [axis_map(t, value_var) for t in terms]
    return None if any(m is None for m in maps) else tuple(maps)


def factorises_over_units(terms, value_var) -> bool:
    """Whether every term keeps every axis of ``value_var`` (:func:`axis_map`): ``log L`` is a sum of pieces
    that each involve one unit of one row."""
    maps = factorised_axes(terms, value_var)
    return maps is not None and all(None not in m for m in maps)
