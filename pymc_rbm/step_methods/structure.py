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
broadcasts, parameter checks, matrix products, basic indexing). An axis that a reduction or a
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

from pytensor.graph.traversal import io_toposort
from pytensor.raise_op import CheckAndRaise
from pytensor.scalar.basic import AND
from pytensor.tensor.basic import Alloc, MakeVector, ScalarFromTensor, TensorFromScalar
from pytensor.tensor.blockwise import Blockwise
from pytensor.tensor.elemwise import CAReduce, DimShuffle, Elemwise
from pytensor.tensor.math import Dot
from pytensor.tensor.shape import Shape, Shape_i, SpecifyShape
from pytensor.tensor.subtensor import Subtensor

__all__ = ["axis_map", "factorised_axes"]

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
