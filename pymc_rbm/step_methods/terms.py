"""The model terms other than an RBM's own that involve its visible units: ``log L(v)``.

Every RBM step method samples ``π(v, h) ∝ p_RBM(v, h) L(v)``, where ``L``
collects the model's terms (likelihoods, other factors, Potentials) whose
graphs contain the RBM variable's value. :class:`OtherTerms` finds them
once and evaluates ``log L`` at one state, at a stack of states in one
vectorised call (for the single-unit flips of an informed proposal), and
the tilt of the informed moves: ``δ_i = log L(v | v_i = 1) - log L(v | v_i = 0)``
exactly, from the ``n_visible`` single-unit flips
(:func:`pymc_rbm.kernels.informed.flip_tilt`), or to first order, the
gradient ``∂ log L / ∂v_i`` at ``v`` with ``v`` read as real (Grathwohl,
Swersky, Hashemi, Duvenaud & Maddison 2021), from one evaluation and its
reverse pass: what wide layers need, where ``n_visible + 1`` evaluations per
state cost too much. Any tilt that is a function of the state gives an exact
move, since the informed move's Metropolis-Hastings ratio evaluates it at
both ends (:mod:`pymc_rbm.kernels.informed`); the tilt only decides how
often proposals are accepted.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytensor.tensor as pt
from pytensor.graph.replace import graph_replace, vectorize_graph
from pymc.model import modelcontext
from pytensor.graph.traversal import ancestors, io_toposort

from pymc_rbm.kernels.informed import flip_tilt
from pymc_rbm.step_methods.structure import factorisation, linear_predictors

__all__ = [
    "EXACT_TILT_MAX_UNITS",
    "OtherTerms",
    "RowPredictors",
    "TILTS",
    "free_in_model",
    "other_terms",
    "other_terms_are_unit_evidence",
    "other_terms_involve",
    "other_terms_structure",
]

#: The tilts of the informed moves: ``"exact"`` single-unit flips, their first-order ``"gradient"``, or
#: ``"auto"``, exact up to :data:`EXACT_TILT_MAX_UNITS` visible units and the gradient beyond.
TILTS = ("auto", "exact", "gradient")
#: Widest layer whose informed moves ``tilt="auto"`` tilts by exact single-unit flips.
EXACT_TILT_MAX_UNITS = 64

#: What a tilt of ``±inf`` (a unit whose one value ``L`` rules out) becomes in the compiled kernels: a logit
#: whose probability is 0 in float64 at every temperature above 1e-290, and that never meets another infinity.
INFINITE_TILT = 1e300


def _read_as(graph, variable, replacement):
    """``graph`` with ``variable`` replaced by ``replacement`` of another dtype (an integer value read as real):
    every node downstream is made again by its op from the new inputs, so the dtypes follow."""
    made = {variable: replacement}
    for node in io_toposort([variable], [graph]):
        if any(i in made for i in node.inputs):
            new = node.op.make_node(*(made.get(i, i) for i in node.inputs))
            made.update(zip(node.outputs, new.outputs))
    return made[graph]


def free_in_model(rv, model=None):
    """The model (``model``, or the one in context) when ``rv`` is one of its free variables, else None."""
    try:
        model = modelcontext(model)
    except TypeError:  # no model on the context stack
        return None
    return model if rv in model.free_RVs else None


def other_terms(model, rv) -> list:
    """The model's terms besides ``rv``'s own: its other random variables and its Potentials."""
    return [r for r in model.basic_RVs if r is not rv] + list(model.potentials)


def other_terms_involve(model, rv) -> bool:
    """Whether any model term other than ``rv``'s own (random variables, Potentials) depends on ``rv``."""
    others = other_terms(model, rv)
    return bool(others) and rv in set(ancestors(others))


def other_terms_structure(model, rv) -> str | None:
    """How the model terms other than ``rv``'s own that involve it split over its rows and units.

    ``"units"`` where their log-probability is a sum of pieces that each
    involve one unit of one row of ``rv`` (per-unit evidence), ``"rows"`` where
    each piece involves one row (a variable of one row always does), None
    where they couple rows or no other term involves ``rv``
    (:func:`~pymc_rbm.step_methods.structure.factorisation`, read off the
    graph without compiling).
    """
    value_var = model.rvs_to_values[rv]
    terms = [t for t in model.logp(vars=other_terms(model, rv), sum=False) if value_var in set(ancestors([t]))]
    if not terms:
        return None
    structure = factorisation(terms, value_var).structure
    shape = value_var.type.shape
    if structure is None and None not in shape and int(np.prod(shape[:-1], dtype=np.int64)) == 1:
        return "rows"
    return structure


def other_terms_are_unit_evidence(model, rv) -> bool:
    """Whether the model terms other than ``rv``'s own that involve it are per-unit evidence
    (:func:`other_terms_structure` is ``"units"``); False when no other term involves ``rv``."""
    return other_terms_structure(model, rv) == "units"


class OtherTerms:
    """``log L(v)``: the sum of the model terms other than the RBM's own that involve its value.

    Parameters
    ----------
    model : pymc.Model
    rv : TensorVariable
        The RBM random variable.
    value_var : TensorVariable
        Its value variable.
    compile_kwargs : dict
        Passed to ``model.compile_fn``.

    Attributes
    ----------
    names : list of str
        The terms found (empty when none: then ``L ≡ 1`` and :attr:`active` is False).
    input_names : list of str
        Value variables ``log L`` depends on, the RBM's own among them.
    structure : {"units", "rows"} or None
        How ``L`` factorises over the variable's ``(K, n_visible)`` value
        (:mod:`pymc_rbm.step_methods.structure`): ``"units"`` when ``log L``
        is a sum of terms that each involve one unit of one row (then the tilt
        of every unit does not depend on the state), ``"rows"`` when it is a
        sum of terms that each involve one row (a variable of several rows),
        None otherwise (and whenever the graph could not be read).
    predictors : RowPredictors or None
        Where ``L`` factorises over rows (or the variable is one row) and
        reads ``v`` only through matrix products ``v @ B_j`` (a generalised
        linear readout), ``log L_k`` as a function of those products; else None.
    """

    def __init__(self, model, rv, value_var, compile_kwargs: dict):
        others = other_terms(model, rv)
        terms = model.logp(vars=others, sum=False) if others else []
        rest = [t for t in terms if value_var in set(ancestors([t]))]
        self.names = [str(r) for r, t in zip(others, terms) if any(t is x for x in rest)]
        self.fn = None
        self._many = None
        self.input_names: list[str] = []
        self.structure = None
        self._units = self._rows = None
        self.predictors = None
        self.tilt_method = "exact"
        self._gradient = self._gradient_graph = None
        self._gradient_checked = False
        if not rest:
            return
        total = rest[0].sum()
        for t in rest[1:]:
            total = total + t.sum()
        found = set(ancestors([total]))
        inputs = [v for v in model.value_vars if v in found]
        self.input_names = [v.name for v in inputs]
        self._v_pos = self.input_names.index(value_var.name)
        self._shape_ndim = value_var.type.ndim
        fn = model.compile_fn(total, inputs=inputs, point_fn=False, **compile_kwargs)
        fn.trust_input = True
        self.fn = fn
        # the same sum at a stack of values of v (one call for many states); a loop where PyTensor cannot
        stacked = pt.tensor(dtype=value_var.dtype, shape=(None, *value_var.type.shape), name=f"{value_var.name}_stack")
        try:
            batched = vectorize_graph(total, replace={value_var: stacked})
            many_inputs = [stacked if v is value_var else v for v in inputs]
            many = model.compile_fn(batched, inputs=many_inputs, point_fn=False, **compile_kwargs)
            many.trust_input = True
            self._many = many
        except Exception:  # noqa: BLE001 - any op without a batched form: evaluate state by state
            self._many = None
        self._gradient_graph = (model, total, value_var, inputs, compile_kwargs)
        self._setup_structure(model, rest, value_var, inputs, stacked, compile_kwargs)
        shape = value_var.type.shape
        if self.predictors is None and None not in shape and int(np.prod(shape[:-1], dtype=np.int64)) == 1:
            self.predictors = RowPredictors.build(model, total, value_var, inputs, compile_kwargs)  # one row

    def _setup_structure(self, model, rest, value_var, inputs, stacked, compile_kwargs) -> None:
        """Compile ``log L`` per unit or per row, over a stack of values, where ``L`` factorises so
        (:func:`~pymc_rbm.step_methods.structure.factorisation`); say why not where a variable of several rows
        is left to the general path."""
        found = factorisation(rest, value_var)
        structure, total = found.structure, found.per_position
        reason = found.reason
        if structure is not None:
            try:
                batched = vectorize_graph(total, replace={value_var: stacked})
                many_inputs = [stacked if v is value_var else v for v in inputs]
                fn = model.compile_fn(batched, inputs=many_inputs, point_fn=False, **compile_kwargs)
            except Exception as error:  # noqa: BLE001 - no batched form: the general path
                structure, reason = None, f"its per-row form has no batched form ({type(error).__name__})"
        if structure is None:
            self._say_general_path(value_var, found.term, reason)
            return
        fn.trust_input = True
        self.structure = structure
        if structure == "units":
            self._units = fn
        else:
            self._rows = fn
            self._gradient_graph = (model, total, value_var, inputs, compile_kwargs)  # per row: row by row
            self.predictors = RowPredictors.build(model, total, value_var, inputs, compile_kwargs)

    def _say_general_path(self, value_var, term, reason: str) -> None:
        """Warn that ``log L`` of a variable of several rows is evaluated whole at every move, naming the term."""
        shape = value_var.type.shape
        rows = int(np.prod(shape[:-1])) if None not in shape else None
        if value_var.type.ndim < 2 or rows == 1:
            return  # one row: the general path costs what the per-row one would
        name = self.names[term] if term is not None else ", ".join(self.names)
        warnings.warn(
            f"The model term {name!r} could not be split by the rows of the RBM variable {value_var.name!r}"
            f"{f' ({reason})' if reason else ''}, so every move evaluates log L of the whole variable, "
            f"{'about ' + str(rows) + ' times' if rows else 'several times'} slower than row by row. Terms are "
            "split when they are elementwise in v, read units by constant indices or slices (v[rows, cols], "
            "v[:, idx], v[:, :3]), or are sums of such pieces (pm.Potential('lik', (mask * logp).sum())); "
            "a term that couples several rows is exact but takes this path.",
            UserWarning,
            stacklevel=2,
        )

    def use_tilt(self, tilt: str, n_visible: int) -> None:
        """Set how the informed moves tilt (:data:`TILTS`) for a layer of ``n_visible`` units."""
        if tilt not in TILTS:
            raise ValueError(f"tilt must be one of {TILTS}, got {tilt!r}")
        if tilt == "auto":
            tilt = "exact" if n_visible <= EXACT_TILT_MAX_UNITS else "gradient"
        self.tilt_method = tilt

    def _value_and_gradient(self, point, states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``log L`` (per row where ``L`` factorises over rows) and its gradient in ``v`` read as real, at each of
        a stack of states; compiled on first use.

        Parameters
        ----------
        point : dict
        states : ndarray of shape (n_states, *value shape)

        Returns
        -------
        values : ndarray of float64 of shape (n_states,) or (n_states, n_rows)
        gradient : ndarray of float64 of shape (n_states, *value shape)
        """
        if self._gradient is None:
            model, total, value_var, inputs, compile_kwargs = self._gradient_graph
            single = pt.tensor(dtype="float64", shape=value_var.type.shape, name=f"{value_var.name}_real")
            stack = pt.tensor(dtype="float64", shape=(None, *value_var.type.shape), name=f"{value_var.name}_reals")
            values = vectorize_graph(_read_as(total, value_var, single), replace={single: stack})
            gradient = pt.grad(values.sum(), stack)
            fn = model.compile_fn([values, gradient], inputs=[stack if v is value_var else v for v in inputs],
                                  point_fn=False, **compile_kwargs)
            fn.trust_input = True
            self._gradient = fn
        values, gradient = self._gradient(*self._args(point, np.asarray(states, dtype=np.float64)))
        return np.asarray(values, dtype=np.float64), np.asarray(gradient, dtype=np.float64)

    def _gradient_tilts(self, point, states: np.ndarray):
        """:meth:`_value_and_gradient`, or None where the tilt is exact. Decided for good at the first call:
        where ``log L`` has no gradient in ``v`` read as real (an integer-only operation, a value that is not
        finite at the first state), the tilt becomes exact before any move used it."""
        if self.tilt_method != "gradient":
            return None
        try:
            values, gradient = self._value_and_gradient(point, states)
        except Exception:  # noqa: BLE001 - no gradient of this graph in a real v
            if self._gradient is not None:
                raise
            self.tilt_method = "exact"
            return None
        if not self._gradient_checked:
            self._gradient_checked = True
            if not np.isfinite(gradient).all():
                self.tilt_method = "exact"
                return None
        return values, gradient

    @property
    def active(self) -> bool:
        """Whether any other term involves ``v``."""
        return self.fn is not None

    def _args(self, point, v):
        args = [point[n] for n in self.input_names]
        args[self._v_pos] = v
        return args

    def log_rest(self, point, v: np.ndarray) -> float:
        """``log L`` with the RBM variable at ``v`` (its full shape, its dtype) and the rest at ``point``."""
        return float(self.fn(*self._args(point, v)))

    def log_rest_many(self, point, states: np.ndarray) -> np.ndarray:
        """``log L`` at each of a stack of values of the RBM variable.

        Parameters
        ----------
        point : dict
        states : ndarray of shape (n_states, ...)
            The variable's values stacked on a new first axis, in its dtype.

        Returns
        -------
        ndarray of float64 of shape (n_states,)
        """
        if self._many is not None:
            return np.asarray(self._many(*self._args(point, states)), dtype=np.float64).reshape(-1)
        return np.array([self.log_rest(point, s) for s in states], dtype=np.float64)

    def unit_tilt(self, point, shape: tuple, dtype) -> np.ndarray:
        """The per-unit evidence of every unit of every row, where ``L`` factorises over units.

        ``δ_{ki} = log L_{ki}(1) - log L_{ki}(0)`` for ``log L(v) = Σ_{k,i} log
        L_{ki}(v_{ki})`` (:attr:`structure` ``"units"``): the tilt of every state,
        from one evaluation of the per-unit terms at all zeros and all ones.

        Parameters
        ----------
        point : dict
        shape : tuple
            The variable's shape, ``(..., n_visible)``.
        dtype : numpy dtype
            The variable's dtype.

        Returns
        -------
        ndarray of float64 of shape (n_rows, n_visible)
            ``±inf`` (a unit value that ``L`` rules out) as ``±INFINITE_TILT``;
            0 where ``L`` rules out both values of a unit.
        """
        if self._units is None:
            raise ValueError("the other terms do not factorise over the units")
        stack = np.zeros((2, *shape), dtype=dtype)
        stack[1] = 1
        values = np.asarray(self._units(*self._args(point, stack)), dtype=np.float64).reshape(2, -1, shape[-1])
        with np.errstate(invalid="ignore"):
            tilt = values[1] - values[0]
        return np.clip(np.where(np.isnan(tilt), 0.0, tilt), -INFINITE_TILT, INFINITE_TILT)

    def row_values(self, point, states: np.ndarray) -> np.ndarray:
        """``log L_k``, the terms of row ``k``, at every row of a stack of values (``"rows"`` or ``"units"``).

        Parameters
        ----------
        point : dict
        states : ndarray of shape (n_states, n_rows, n_visible)
            Values of the variable stacked on a new first axis, in its dtype.

        Returns
        -------
        ndarray of float64 of shape (n_states, n_rows)
        """
        fn = self._rows if self._rows is not None else self._units
        if fn is None:
            raise ValueError("the other terms do not factorise over the rows")
        values = np.asarray(fn(*self._args(point, states)), dtype=np.float64)
        return values.reshape(states.shape[0], -1, states.shape[-1]).sum(axis=-1) if fn is self._units else (
            values.reshape(states.shape[0], -1))

    def row_tilts(self, point, states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``log L_k`` and the flip tilt of every row of a stack of values, in one call (``"rows"`` structure).

        Row ``k``'s tilt at unit ``i`` is the change of ``log L_k`` when unit
        ``i`` of that row alone is flipped (:func:`~pymc_rbm.kernels.informed.flip_tilt`).
        Because ``L`` factorises over the rows, flipping unit ``i`` of every row
        at once gives every row's change: ``n_visible + 1`` values per state.

        Parameters
        ----------
        point : dict
        states : ndarray of shape (n_states, n_rows, n_visible)
            Values of the variable, in its dtype.

        Returns
        -------
        log_rest : ndarray of shape (n_states, n_rows)
        tilt : ndarray of shape (n_states, n_rows, n_visible)
        """
        m, n = states.shape[0], states.shape[-1]
        found = self._gradient_tilts(point, states)
        if found is not None:
            values, gradient = found
            return values.reshape(m, -1), gradient.reshape(m, -1, n)
        flat = states.reshape(m, -1, n)
        flips = np.repeat(flat[:, None], n + 1, axis=1)  # each state, then it with unit i flipped in every row
        idx = np.arange(n)
        flips[:, idx + 1, :, idx] = 1 - flips[:, idx + 1, :, idx]
        values = self.row_values(point, flips.reshape(m * (n + 1), *states.shape[1:])).reshape(m, n + 1, -1)
        rows = flat.shape[1]
        tilt = flip_tilt(flat.reshape(m * rows, n).astype(np.float64), values[:, 0].reshape(-1),
                         values[:, 1:].transpose(0, 2, 1).reshape(m * rows, n))
        return values[:, 0].copy(), tilt.reshape(m, rows, n)

    def flip_states(self, v: np.ndarray, row: int) -> np.ndarray:
        """``v`` once per unit of row ``row``, with that unit flipped: shape ``(n_visible, *v.shape)``."""
        n = v.shape[-1]
        flat = v.reshape(-1, n)
        if flat.shape[0] == 1:  # one chain: the row XOR each unit vector, in one operation
            return np.abs(flat - self._unit_vectors(n, v.dtype)).reshape((n, *v.shape))
        out = np.repeat(flat[None], n, axis=0)
        idx = np.arange(n)
        out[idx, row, idx] = 1 - out[idx, row, idx]
        return out.reshape((n, *v.shape))

    def _unit_vectors(self, n: int, dtype) -> np.ndarray:
        eye = getattr(self, "_eye", None)
        if eye is None or eye.shape[0] != n or eye.dtype != dtype:
            eye = self._eye = np.eye(n, dtype=dtype)
        return eye

    def tilts(self, point, states: np.ndarray, shape: tuple, dtype) -> tuple[np.ndarray, np.ndarray]:
        """``log L`` and the flip tilt at each of several states of a one-chain variable, in one call.

        Parameters
        ----------
        point : dict
        states : ndarray of shape (n_states, n_visible)
            0/1 values.
        shape : tuple
            The variable's shape (``(n_visible,)`` or ``(1, n_visible)``).
        dtype : numpy dtype
            The variable's dtype.

        Returns
        -------
        log_rest : ndarray of shape (n_states,)
        tilt : ndarray of shape (n_states, n_visible)
        """
        m, n = states.shape
        found = self._gradient_tilts(point, states.reshape(m, *shape))
        if found is not None:
            values, gradient = found
            return values.reshape(m), gradient.reshape(m, n)
        flips = np.repeat(states[:, None, :], n + 1, axis=1)  # each state, then it with one unit flipped
        idx = np.arange(n)
        flips[:, idx + 1, idx] = 1.0 - flips[:, idx + 1, idx]
        values = self.log_rest_many(point, flips.reshape(m * (n + 1), *shape).astype(dtype)).reshape(m, n + 1)
        return values[:, 0].copy(), flip_tilt(states, values[:, 0], values[:, 1:])

    def tilt(self, point, v: np.ndarray, row: int, log_rest: float | None = None) -> tuple[np.ndarray, float]:
        """The exact tilt of row ``row`` at ``v`` and ``log L(v)``, in one vectorised call.

        Parameters
        ----------
        point : dict
        v : ndarray
            The variable's value (full shape, its dtype).
        row : int
            Which row of the flattened ``(n_chains, n_visible)`` value.
        log_rest : float, optional
            ``log L(v)`` when known (saves one state in the call).

        Returns
        -------
        tilt : ndarray of shape (n_visible,)
        log_rest : float
        """
        found = self._gradient_tilts(point, v[None])
        if found is not None:
            values, gradient = found
            return gradient.reshape(-1, v.shape[-1])[row].copy(), float(values.reshape(-1)[0])
        states = self.flip_states(v, row)
        if log_rest is None:
            values = self.log_rest_many(point, np.concatenate([v[None], states]))
            log_rest, flipped = float(values[0]), values[1:]
        else:
            flipped = self.log_rest_many(point, states)
        x = v.reshape(-1, v.shape[-1])[row][None].astype(np.float64)
        return flip_tilt(x, np.array([log_rest]), flipped[None])[0], log_rest


class RowPredictors:
    """``log L_k`` as a function of the linear predictors ``η_j = v @ B_j``, where ``L`` reads ``v`` only so.

    A term such as ``y_k ~ N(v_k @ B, σ)`` or ``Bernoulli(logit_p=v_k @ A + a0)``
    reads row ``k`` only through ``η_k = v_k B``; flipping unit ``i`` of
    every row changes ``η`` by ``(1 - 2 v_{ki}) B_i``, so the exact change of
    every row's ``log L_k`` under that flip costs one evaluation of the
    readout at ``K x m`` predictors, not of the whole term at ``K x n``
    units. Built by :meth:`build` from the per-row graph
    (:func:`~pymc_rbm.step_methods.structure.linear_predictors`).

    Attributes
    ----------
    input_names : list of str
        The value variables other than ``v`` that the loadings or the readout read.
    """

    def __init__(self, loadings_fn, values_fn, input_names, types):
        self._loadings = loadings_fn
        self._values = values_fn
        self.input_names = input_names
        self._types = types  # (dtype, shape) of each product in the graph

    @classmethod
    def build(cls, model, per_row, value_var, inputs, compile_kwargs) -> RowPredictors | None:
        """The predictors of the per-row graph ``per_row``, or None where it reads ``v`` otherwise.

        Parameters
        ----------
        model : pymc.Model
        per_row : TensorVariable of shape (K,), or a scalar for a variable of one row
            ``log L_k`` of every row.
        value_var : TensorVariable of shape (K, n_visible) or (n_visible,)
        inputs : list of TensorVariable
            The value variables ``per_row`` reads, ``value_var`` among them.
        compile_kwargs : dict
        """
        found = linear_predictors(per_row, value_var)
        if found is None:
            return None
        products, loadings = [x for x, _ in found], [b for _, b in found]
        etas = [pt.tensor(dtype=x.dtype, shape=x.type.shape, name=f"eta_{j}") for j, x in enumerate(products)]
        placeholder = pt.constant(np.zeros(value_var.type.shape, dtype=value_var.dtype)) if (
            None not in value_var.type.shape) else None
        replace = dict(zip(products, etas))
        if placeholder is not None:
            replace[value_var] = placeholder  # what is left of v is its shape
        try:
            readout = graph_replace(per_row, replace, strict=False)
            found = set(ancestors([readout, *loadings]))
            if value_var in found:
                return None
            others = [v for v in inputs if v is not value_var and v in found]
            kwargs = {**compile_kwargs, "on_unused_input": "ignore"}  # the readout or the loadings may not read all
            values_fn = model.compile_fn(readout, inputs=[*etas, *others], point_fn=False, **kwargs)
            loadings_fn = model.compile_fn(loadings, inputs=others, point_fn=False, **kwargs)
        except Exception:  # noqa: BLE001 - a graph this reading cannot rebuild: the general row path
            return None
        values_fn.trust_input = True
        return cls(loadings_fn, values_fn, [v.name for v in others], [(x.dtype, x.type.shape) for x in products])

    def _others(self, point) -> list:
        return [point[n] for n in self.input_names]

    def loadings(self, point) -> list[np.ndarray]:
        """The matrices ``B_j`` at ``point``, each of float64 of shape ``(n_visible, m_j)``."""
        return [np.asarray(b, dtype=np.float64) for b in self._loadings(*self._others(point))]

    def predictors(self, v: np.ndarray, loadings) -> list[np.ndarray]:
        """``η_j = v @ B_j`` for 0/1 rows ``v`` of shape ``(K, n_visible)``: each of shape ``(K, m_j)``."""
        return [np.asarray(v, dtype=np.float64) @ b for b in loadings]

    def row_values(self, point, etas) -> np.ndarray:
        """``log L_k`` of every row at the predictors ``etas`` (each ``(K, m_j)``): float64 of shape ``(K,)``."""
        args = [np.asarray(e, dtype=d).reshape(shape) for e, (d, shape) in zip(etas, self._types)]
        return np.asarray(self._values(*args, *self._others(point)), dtype=np.float64).reshape(-1)
