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

from typing import NamedTuple

import numpy as np
import pytensor.tensor as pt
from pytensor.graph.basic import Constant
from pytensor.graph.traversal import io_toposort
from pytensor.raise_op import CheckAndRaise
from pytensor.scalar.basic import AND, Add, Cast, Mul, Neg, Sub
from pytensor.tensor.basic import (
    Alloc,
    ARange,
    Join,
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

__all__ = ["Factorisation", "axis_map", "factorisation", "factorised_axes", "factorises_over_units",
           "linear_predictors", "summands", "unit_labels"]

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
    """Whether ``log L`` is a sum of pieces that each involve one unit of one row (:func:`factorisation`)."""
    return factorisation(terms, value_var).structure == "units"


# ----------------------------------------------------------------------------- sums of pieces
def _involves(graph, value_var) -> bool:
    """Whether ``graph`` depends on the values of ``value_var`` (not only on its shape)."""
    seen, stack = set(), [graph]
    while stack:
        x = stack.pop()
        if x is value_var:
            return True
        if x in seen or x.owner is None or isinstance(x.owner.op, (Shape, Shape_i)):
            continue
        seen.add(x)
        stack.extend(x.owner.inputs)
    return False


def _static(x) -> bool:
    return None not in x.type.shape


def summands(term, value_var) -> list:
    """Graphs whose elements, all added up, give the elements of ``term`` added up: ``term`` split at its sums.

    ``x.sum(axis)`` gives the pieces of ``x``; ``a + b`` and ``a - b`` (operands of the sum's own static
    shape, no broadcasting) give those of ``a`` and of ``b`` (negated); ``-a``, ``c * a`` and ``a / c`` for
    a ``c`` of one element that does not involve ``value_var`` give those of ``a``, scaled; a reshape,
    transpose or change of dimensions of ``x`` gives those of ``x``. Anything else is one piece.

    Parameters
    ----------
    term : TensorVariable
        A model term (its elements add up to its log-probability).
    value_var : TensorVariable
        The RBM variable's value.

    Returns
    -------
    list of TensorVariable
        The pieces; their totals add up to ``term``'s total (exactly, up to the order of the additions).
    """
    node = term.owner
    if node is None:
        return [term]
    op = node.op
    if (isinstance(op, CAReduce) and isinstance(op.scalar_op, Add)) or isinstance(op, (DimShuffle, Reshape,
                                                                                       SpecifyShape)):
        return summands(node.inputs[0], value_var)
    if not isinstance(op, Elemwise) or not _static(term):
        return [term]
    inputs, scalar = node.inputs, op.scalar_op
    same_shape = all(x.type.shape == term.type.shape for x in inputs)
    if isinstance(scalar, Add) and same_shape:
        return [p for x in inputs for p in summands(x, value_var)]
    if isinstance(scalar, Sub) and same_shape:
        return summands(inputs[0], value_var) + [-p for p in summands(inputs[1], value_var)]
    if isinstance(scalar, Neg):
        return [-p for p in summands(inputs[0], value_var)]
    involved = [i for i, x in enumerate(inputs) if _involves(x, value_var)]
    if len(involved) != 1 or inputs[involved[0]].type.shape != term.type.shape:
        return [term]
    (i,) = involved
    others = [pt.squeeze(x) for j, x in enumerate(inputs) if j != i and all(d == 1 for d in x.type.shape)]
    if len(others) != len(inputs) - 1:  # a factor of several elements weights the pieces unequally
        return [term]
    if isinstance(scalar, Mul):
        factor = others[0]
        for x in others[1:]:
            factor = factor * x
        return [factor * p for p in summands(inputs[i], value_var)]
    if type(scalar).__name__ == "TrueDiv" and i == 0:
        return [p / others[0] for p in summands(inputs[0], value_var)]
    return [term]


# ----------------------------------------------------------------------------- which unit each element reads
#: The label of an element that does not depend on the value, and of one that depends on several labels.
NO_LABEL, MIXED = -1, -2
#: The most pairs of elements a matrix product's labels are formed from (beyond: not read).
MAX_PRODUCT_PAIRS = 10**7


class _Unreadable(Exception):
    """The labels cannot be followed through a node of the graph (the message says why)."""


class _Conditions:
    """A check's condition that is a conjunction of conditions on single positions: ``ok`` where each of those
    involves one label (a unit, or a row), so that the check holds exactly where each label's conditions hold."""

    def __init__(self, ok: bool):
        self.ok = ok


def _merge(*labels):
    """The label of an element computed from elements with the given labels (broadcast together)."""
    out = labels[0]
    for b in labels[1:]:
        out = np.where(out == b, out, np.where(out == NO_LABEL, b, np.where(b == NO_LABEL, out, MIXED)))
    return out


def _reduce(labels, axes):
    """:func:`_merge` along ``axes``: the label of a sum (or maximum, or product) over them."""
    has = labels >= 0
    found = has.any(axis=axes)
    low = np.where(has, labels, np.iinfo(np.int64).max).min(axis=axes, initial=np.iinfo(np.int64).max)
    high = np.where(has, labels, NO_LABEL).max(axis=axes, initial=NO_LABEL)
    mixed = (labels == MIXED).any(axis=axes) | (found & (low != high))
    return np.where(mixed, MIXED, np.where(found, high, NO_LABEL))


def _constant_value(x):
    """The value of a graph of constants and static shapes (an index, such as the ``arange`` of PyMC's
    ``take_along_axis``), computed op by op; :class:`_Unreadable` where it depends on anything else."""
    if isinstance(x, Constant):
        return np.asarray(x.data)
    node = x.owner
    if node is not None and isinstance(node.op, (Shape, Shape_i)) and _static(node.inputs[0]):
        shape = np.array(node.inputs[0].type.shape, dtype=np.int64)
        return shape if isinstance(node.op, Shape) else shape[node.op.i]
    if node is None or len(node.outputs) != 1:
        raise _Unreadable(f"the index {x} is not a constant")
    storage = [[None]]
    inputs = [_constant_value(i) for i in node.inputs]
    try:
        node.op.perform(node, inputs, storage)
    except Exception as error:  # noqa: BLE001 - an op without a Python implementation: not folded
        raise _Unreadable(f"the index {x} could not be computed ({type(error).__name__})") from error
    return np.asarray(storage[0][0])


def _no_labels(x):
    if not _static(x):
        raise _Unreadable(f"the shape of {x} is not known before sampling")
    return np.full(x.type.shape, NO_LABEL, dtype=np.int64)


def _indexed(node, carried, shape):
    """The labels of ``array[i_0, …]`` where only the indices involve the value (``table[x]``)."""
    op = node.op
    if not isinstance(op, AdvancedSubtensor) or any(isinstance(e, slice) for e in op.idx_list):
        raise _Unreadable(f"{op} reads at positions computed from the value")
    block = len(shape) - (node.inputs[0].type.ndim - len(node.inputs) + 1)
    labels = _merge(*(np.broadcast_to(m, shape[:block]) for m in carried.values()))
    return np.broadcast_to(labels.reshape(labels.shape + (1,) * (len(shape) - block)), shape)


def _product(node, carried, shape):
    """The labels of a matrix product: each element merges a row of the first operand and a column of the
    second."""
    x, y = (carried[i] if i in carried else _no_labels(node.inputs[i]) for i in (0, 1))
    x = x[None, :, None] if x.ndim == 1 else x[..., :, :, None]
    y = y[None, :, None] if y.ndim == 1 else y[..., None, :, :]
    if np.prod(np.broadcast_shapes(x.shape, y.shape)) > MAX_PRODUCT_PAIRS:
        raise _Unreadable(f"the product {node.op} is too large to read")
    return _reduce(_merge(x, y), -2).reshape(shape)


def _labels_out(node, carried):
    """The labels of ``node``'s output, from those of its inputs that involve the value (``carried``)."""
    op, out = node.op, node.outputs[0]
    conditions = [m for m in carried.values() if isinstance(m, _Conditions)]
    if isinstance(op, CheckAndRaise):
        if 0 not in carried or isinstance(carried[0], _Conditions):
            raise _Unreadable(f"the check {op} on the value guards a term that does not involve it")
        for i, m in carried.items():
            if i > 0 and not (m.ok if isinstance(m, _Conditions) else bool((m != MIXED).all())):
                raise _Unreadable(f"the check {op} has a condition that couples several positions")
        return carried[0]
    is_and = isinstance(op, CAReduce) and isinstance(op.scalar_op, AND)
    if conditions:
        if len(conditions) == len(carried) and (is_and or isinstance(op, (MakeVector, ScalarFromTensor,
                                                                          TensorFromScalar))):
            return _Conditions(all(m.ok for m in conditions))
        raise _Unreadable(f"{op} computes with the conditions of a check")
    if is_and and op.axis is None:
        return _Conditions(bool((carried[0] != MIXED).all()))
    if not _static(out):
        raise _Unreadable(f"the shape of the output of {op} is not known before sampling")
    shape = out.type.shape
    if isinstance(op, Elemwise):
        return _merge(*(np.broadcast_to(m, shape) for m in carried.values()))
    if isinstance(op, Dot) or (isinstance(op, Blockwise) and isinstance(getattr(op, "core_op", None), Dot)):
        return _product(node, carried, shape)
    if isinstance(op, Join):
        return np.concatenate([carried[i] if i in carried else _no_labels(x) for i, x in enumerate(node.inputs)],
                              axis=op.axis)
    if isinstance(op, (Subtensor, AdvancedSubtensor)) and 0 not in carried:
        return _indexed(node, carried, shape)
    if set(carried) != {0}:
        raise _Unreadable(f"{op} reads at positions computed from the value")
    labels = carried[0]
    if isinstance(op, CAReduce):
        return _reduce(labels, tuple(range(labels.ndim)) if op.axis is None else tuple(op.axis))
    if isinstance(op, SpecifyShape):
        return labels
    if isinstance(op, Reshape):
        return labels.reshape(shape)
    if isinstance(op, Alloc):
        return np.broadcast_to(labels, shape)
    if isinstance(op, (DimShuffle, Subtensor, AdvancedSubtensor)):  # move the labels as the op moves values
        storage = [[None]]
        op.perform(node, [labels, *(_constant_value(x) for x in node.inputs[1:])], storage)
        return np.asarray(storage[0][0], dtype=np.int64)
    raise _Unreadable(f"{op} is not known to the analysis")


def unit_labels(term, value_var, labels, what: str = "units") -> tuple:
    """Which label (unit, or row) of ``value_var`` each element of ``term`` depends on.

    The labels are followed through the graph as the values would be, by
    position: every op moves, copies or combines them (an elementwise op
    merges the labels of the elements it combines, a reduction merges them
    along its axes, indexing with constant indices, slices, transposes,
    reshapes and broadcasts move them, a matrix product merges a row of
    one operand with a column of the other). Parameter checks whose
    conditions are conjunctions of conditions on single labels keep the
    labels of the term they check (see the module docstring). Needs the
    static shapes of the graph.

    Parameters
    ----------
    term : TensorVariable
        A model term, of a static shape.
    value_var : TensorVariable
        The RBM variable's value.
    labels : ndarray of int of the shape of ``value_var``
        The label of every position: ``arange(size).reshape(shape)`` for units, the row index for rows.
    what : str
        What the labels stand for, in the reason given.

    Returns
    -------
    found : ndarray of int of the shape of ``term``, or None
        The label of every element; :data:`NO_LABEL` where an element does not
        depend on the value, :data:`MIXED` where it depends on several labels.
        None where the graph cannot be read.
    reason : str
        Where ``found`` is None or holds :data:`MIXED`: the op that could not be read, or that first
        combined several labels; else ``""``.
    """
    maps = {value_var: np.asarray(labels, dtype=np.int64)}
    first_mixed = ""
    try:
        for node in io_toposort([value_var], [term]):
            carried = {i: maps[x] for i, x in enumerate(node.inputs) if x in maps}
            if not carried or isinstance(node.op, (Shape, Shape_i)):  # a shape does not depend on the values
                continue
            if len(node.outputs) != 1:
                raise _Unreadable(f"{node.op} has several outputs")
            out = maps[node.outputs[0]] = _labels_out(node, carried)
            if (not first_mixed and isinstance(out, np.ndarray) and (out == MIXED).any()
                    and not any(isinstance(m, np.ndarray) and (m == MIXED).any() for m in carried.values())):
                first_mixed = f"{node.op} combines several {what}"
        found = maps[term] if term in maps else _no_labels(term)
        if isinstance(found, _Conditions):
            raise _Unreadable("only a check involves the value")
    except _Unreadable as error:  # where labels were combined before, that is the reason
        return None, first_mixed or str(error)
    return found, first_mixed if (found == MIXED).any() else ""


# ----------------------------------------------------------------------------- log L per unit, or per row
class Factorisation(NamedTuple):
    """How ``log L`` splits over the positions of an RBM variable (:func:`factorisation`)."""

    #: ``"units"``, ``"rows"`` or None (the general path).
    structure: str | None
    #: The graph of ``log L`` per unit (the value's shape) or per row (its shape without the last axis); None.
    per_position: object
    #: Where ``structure`` is None: the index of the term that could not be split, and why.
    term: int | None = None
    reason: str = ""


def _gather(piece, labels, n_positions):
    """``piece``'s elements added up by their labels: shape (n_positions,); those of no label shared equally."""
    if labels.ndim == 0:
        piece, labels = piece[None], labels[None]
    flat = labels.reshape(-1)
    kept = np.flatnonzero(flat >= 0)
    kept = kept[np.argsort(flat[kept], kind="stable")]
    target = flat[kept]
    counts = np.bincount(target, minlength=n_positions)
    width = max(int(counts.max(initial=0)), 1)
    slot = np.arange(kept.size) - (np.cumsum(counts) - counts)[target]
    index = np.zeros((n_positions, width), dtype=np.int64)
    mask = np.zeros((n_positions, width), dtype=bool)
    index[target, slot], mask[target, slot] = kept, True

    def at(flat_index):
        return piece[tuple(pt.as_tensor(c) for c in np.unravel_index(flat_index, labels.shape))]

    values = at(index)
    values = values if mask.all() else pt.switch(mask, values, 0.0)
    per = values.sum(axis=-1) if width > 1 else values[:, 0]
    free = np.flatnonzero(flat == NO_LABEL)
    return per + at(free).sum() / n_positions if free.size else per


def _per_position(piece, value_var, kept: int):
    """``piece`` added up to one value per position of the value's first ``kept`` axes, or None, and why not."""
    m = axis_map(piece, value_var)
    if m is not None and None not in m[:kept]:
        order = list(m[:kept]) + [a for a in range(piece.type.ndim) if a not in m[:kept]]
        return piece.transpose(order).sum(axis=tuple(range(kept, piece.type.ndim))), ""
    shape = value_var.type.shape
    if None in shape:
        return None, "the shape of the variable is not known before sampling"
    n_units, ndim = int(np.prod(shape)), len(shape)
    what = "units" if kept == ndim else "rows"
    labels = np.arange(n_units).reshape(shape) // (1 if kept == ndim else shape[-1])
    found, reason = unit_labels(piece, value_var, labels, what)
    if found is None or reason:
        return None, reason
    n_positions = int(np.prod(shape[:kept]))
    return _gather(piece, found, n_positions).reshape(shape[:kept]), ""


def factorisation(terms, value_var) -> Factorisation:
    """How the terms ``log L = Σ_t term_t`` split over the units, or the rows, of ``value_var``.

    Every term is split at its sums (:func:`summands`); each piece is then
    read by :func:`axis_map` or, where that loses an axis, by
    :func:`unit_labels`; the pieces that do not involve the value are shared
    equally among the positions. ``"units"`` where every piece is a sum of
    elements that each depend on one unit, else ``"rows"`` where each depends
    on one row, else None. The graph returned adds up each piece by position
    (the per-unit, or per-row, contributions of every term): its total is
    ``log L``, exactly.

    Parameters
    ----------
    terms : list of TensorVariable
        The model terms that involve ``value_var``.
    value_var : TensorVariable
        The RBM variable's value, of shape ``(..., n_visible)``.

    Returns
    -------
    Factorisation
    """
    ndim = value_var.type.ndim
    pieces = [(j, p) for j, t in enumerate(terms) for p in summands(t, value_var)]
    failure = (None, "")
    for kept in (ndim, ndim - 1) if ndim >= 2 else (ndim,):
        parts, constants = [], []
        for j, piece in pieces:
            if not _involves(piece, value_var):
                constants.append(piece.sum())
                continue
            part, reason = _per_position(piece, value_var, kept)
            if part is None:
                failure = (j, reason)
                break
            parts.append(part)
        else:
            if not parts:  # the value enters only through its shape
                break
            total = parts[0]
            for part in parts[1:]:
                total = total + part
            for c in constants:
                total = total + c / total.size
            return Factorisation("units" if kept == ndim else "rows", total)
    return Factorisation(None, None, *failure)


# ----------------------------------------------------------------------------- linear predictors
def _is_product(node) -> bool:
    """Whether ``node`` is a matrix product (``Dot``, or ``Matmul``: its ``Blockwise`` form)."""
    op = node.op
    return isinstance(op, Dot) or (isinstance(op, Blockwise) and isinstance(op.core_op, Dot))


def linear_predictors(graph, value_var) -> list | None:
    """The products ``v @ B_j`` through which alone ``graph`` reads the values of ``value_var``, or None.

    Where every use of the value (a matrix ``v`` of shape ``(K, n_visible)``
    or one row ``(n_visible,)``, cast or not) is an operand of a matrix
    product whose other operand does not involve it, ``graph`` is
    ``f(v @ B_1, ..., v @ B_J)``: the linear predictors of a generalised
    linear readout (Gaussian, logistic, Poisson), and what a single unit's
    flip changes by one row of each ``B_j``. ``v`` is the left operand, or,
    for one row, the right one as a column (PyTensor writes a vector's
    ``v @ B`` as ``Bᵀ v[:, None]``). Uses of the value's shape alone are
    allowed.

    Parameters
    ----------
    graph : TensorVariable
    value_var : TensorVariable
        The RBM variable's value, of one or two dimensions.

    Returns
    -------
    list of (TensorVariable, TensorVariable) or None
        Each product's output and its loadings ``B_j`` of shape
        ``(n_visible, m_j)``, in graph order. The output holds ``K x m_j``
        values: ``(K, m_j)``, or for one row ``(1, m_j)`` or ``(m_j, 1)``.
    """
    ndim = value_var.type.ndim
    if ndim not in (1, 2):
        return None
    read = {value_var}  # the value, its casts, and (one row) its expansions to a row or a column
    products = []
    for node in io_toposort([value_var], [graph]):
        used = [i for i in node.inputs if i in read]
        if not used or isinstance(node.op, (Shape, Shape_i)):
            continue
        op = node.op
        if isinstance(op, Elemwise) and isinstance(op.scalar_op, Cast):
            read.add(node.outputs[0])
        elif ndim == 1 and isinstance(op, DimShuffle) and node.outputs[0].type.ndim == 2 and not op.drop:
            read.add(node.outputs[0])
        elif _is_product(node) and len(used) == 1 and all(i.type.ndim == 2 for i in node.inputs):
            left, right = node.inputs
            if left in read and not _involves(right, value_var) and (ndim == 2 or left.type.shape[0] == 1):
                products.append((node.outputs[0], right))
            elif right in read and ndim == 1 and right.type.shape[1] == 1 and not _involves(left, value_var):
                products.append((node.outputs[0], left.T))
            else:
                return None
        else:
            return None
    return products or None
