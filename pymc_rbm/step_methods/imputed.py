"""The missing cells of an RBM observed with gaps, sampled by the RBM step methods.

``RBM("v", ..., observed=np.ma.masked_invalid(data))`` (or a
:class:`~pymc_rbm.categorical.CategoricalRBM` so observed) with single cells
missing makes PyMC split the RBM into an observed part and a free variable
``v_unobserved`` holding the missing cells of every row (a
``PartialObservedRV``); ``v`` is then their join. The full conditional of the
missing cells is, row by row, the RBM with the observed cells clamped:

    p(v_M | v_O) ∝ p_RBM(v_M, v_O),

which is the RBM tilted by per-unit evidence that rules out every value of an
observed cell but its own (``log L = 0`` where the cell holds its datum,
``-inf`` where it does not, nothing on a missing cell). :class:`ImputedCells`
samples exactly that: it keeps a small model of its own, the RBM over the
whole ``(K, n_visible)`` matrix with the clamp as a ``Potential`` of per-unit
terms, and runs :class:`~pymc_rbm.step_methods.ReplicaExchange` on it
(:class:`~pymc_rbm.step_methods.categorical.CategoricalReplicaExchange` with
``tilt_every_rung=True`` for a categorical RBM), whose ladder carries the
clamp at every rung (the RBM tempered, the evidence kept,
so the bottom rung draws the missing cells independently, exactly) and is
adapted during tuning to the barrier of this conditional. A draw maps the
point's missing cells into the matrix, makes the inner step's draw, and reads
the missing cells back. Because the inner step leaves its target invariant and
that target's missing cells are distributed as ``p(v_M | v_O)``, the step is a
valid Gibbs component next to any other step.

``pm.sample`` picks it for ``v_unobserved`` (competence ``IDEAL``) where the
RBM's weights and biases are constants or data and no model term but the RBM's own
involves the missing cells; elsewhere PyMC's ``Metropolis`` keeps them.
"""

from __future__ import annotations

import numpy as np
import pymc as pm
import pytensor.tensor as pt
from pymc.distributions.distribution import PartialObservedRV
from pymc.model import modelcontext
from pymc.step_methods.compound import BlockedStep, Competence
from pytensor.graph.basic import Constant

from pytensor.graph.traversal import ancestors

from pymc_rbm.categorical.random_variable import categorical_params_of, is_categorical_rbm_variable
from pymc_rbm.random_variable import is_rbm_variable, random_ancestors, rbm_params_of
from pymc_rbm.step_methods.categorical import CategoricalReplicaExchange
from pymc_rbm.step_methods.tempered import ReplicaExchange
from pymc_rbm.step_methods.terms import other_terms

__all__ = ["ImputedCells", "is_imputed_rbm_variable"]


def _parts(var):
    """``(rbm, mask, observed)`` of the missing-cells variable of a partly observed RBM, or None."""
    node = getattr(var, "owner", None)
    if node is None or not isinstance(node.op, PartialObservedRV) or var is not node.outputs[1]:
        return None
    rbm, mask = node.inputs[0], node.inputs[1]
    if not (is_rbm_variable(rbm) or is_categorical_rbm_variable(rbm)) or not isinstance(mask, Constant):
        return None
    return rbm, np.asarray(mask.data, dtype=bool), node.outputs[0]


def _params_of(rbm) -> tuple:
    """The symbolic weights and biases of a binary or categorical RBM variable."""
    return tuple(categorical_params_of(rbm) if is_categorical_rbm_variable(rbm) else rbm_params_of(rbm))


def is_imputed_rbm_variable(var) -> bool:
    """Whether ``var`` holds the missing cells of an :class:`~pymc_rbm.RBM` or a
    :class:`~pymc_rbm.categorical.CategoricalRBM` observed with gaps (``<name>_unobserved``)."""
    return _parts(var) is not None


class ImputedCells(BlockedStep):
    """The missing cells of an RBM (binary or categorical) observed with gaps, by replica exchange on the RBM with the
    rest clamped.

    See :mod:`pymc_rbm.step_methods.imputed` for the construction.

    Parameters
    ----------
    vars : list of one variable, optional
        The missing-cells variable (``<name>_unobserved``); by default the
        model's only one.
    model : pymc.Model, optional
    rng : numpy.random.Generator or seed, optional
        Replaced per chain by ``pm.sample``.
    initial_point, compile_kwargs, blocked
        As for every step method.
    **options
        Passed to the inner :class:`~pymc_rbm.step_methods.ReplicaExchange`
        (``sweeps``, ``adapt``, ``record_hidden``, ...), or
        :class:`~pymc_rbm.step_methods.categorical.CategoricalReplicaExchange`
        for a categorical RBM (``sweeps``, ``n_replicas``, ``alpha``, ...).

    Notes
    -----
    The sampler stats are the inner step's, for the ``(K, n_visible)``
    matrix with the observed cells clamped.

    Examples
    --------
    >>> import numpy as np, pymc as pm
    >>> from pymc_rbm import RBM, RBMParams
    >>> p = RBMParams.random(6, 3, rng=0)
    >>> data = np.array([[1, 0, np.nan, 1, 0, 1], [np.nan, 1, 1, 0, 0, np.nan]])
    >>> with pm.Model():
    ...     v = RBM("v", p.W, p.vbias, p.hbias, observed=np.ma.masked_invalid(data))
    ...     idata = pm.sample(draws=50, tune=50, chains=1, progressbar=False,
    ...                       compute_convergence_checks=False, random_seed=1)
    >>> idata.posterior["v_unobserved"].shape
    (1, 50, 3)
    """

    name = "imputed_cells"

    def __init__(self, vars=None, *, model=None, rng=None, initial_point=None, compile_kwargs=None,
                 blocked: bool = True, **options):
        model = modelcontext(model)
        candidates = [model.values_to_rvs.get(v, v) for v in (vars or model.value_vars)]
        found = [rv for rv in candidates if is_imputed_rbm_variable(rv)]
        if len(found) != 1 or (vars is not None and len(candidates) != 1):
            raise ValueError("ImputedCells samples one variable: the missing cells of an RBM or CategoricalRBM "
                             "observed with gaps (<name>_unobserved, made by PyMC from a masked observed array)")
        rv = found[0]
        rbm, mask, observed_rv = _parts(rv)
        if random_ancestors(*_params_of(rbm)):
            raise ValueError(f"ImputedCells needs the weights and biases of {rv.name!r} to be constants or data")
        self.vars = [model.rvs_to_values[rv]]
        self._name = self.vars[0].name
        self._mask = mask
        observed = np.asarray(model.rvs_to_values[observed_rv].data)
        self._matrix = np.zeros(mask.shape, dtype=rv.dtype)
        self._matrix[~mask] = observed
        with pm.Model(model=None) as inner:
            node = rbm.owner.clone()  # the same RBM (its op, parameters and shape), in a model of its own
            v = inner.register_rv(node.outputs[rbm.owner.outputs.index(rbm)], rv.name)
            pm.Potential(f"{rv.name}_observed",
                         pt.switch(pt.as_tensor(~mask), pt.switch(pt.eq(v, self._matrix), 0.0, -np.inf), 0.0))
        self._inner_name = v.name
        if is_categorical_rbm_variable(rbm):
            inner_step, options = CategoricalReplicaExchange, {"tilt_every_rung": True, **options}
        else:
            inner_step = ReplicaExchange
        self._inner = inner_step([v], model=inner, rng=rng, initial_point={v.name: self._matrix.copy()},
                                 compile_kwargs=compile_kwargs, **options)
        self.stats_dtypes_shapes = self._inner.stats_dtypes_shapes
        self.stats_dtypes = self._inner.stats_dtypes

    @staticmethod
    def competence(var, has_grad=None):
        """``IDEAL`` for the missing cells of an RBM whose parameters are constants or data and that no other
        term involves; ``INCOMPATIBLE`` otherwise."""
        parts = _parts(var)
        if parts is None:
            return Competence.INCOMPATIBLE
        rbm, _, observed_rv = parts
        if random_ancestors(*_params_of(rbm)):
            return Competence.INCOMPATIBLE
        try:
            model = modelcontext(None)
        except TypeError:
            return Competence.INCOMPATIBLE
        others = [r for r in other_terms(model, var) if r is not observed_rv]
        return Competence.IDEAL if not others or var not in set(ancestors(others)) else Competence.INCOMPATIBLE

    # ------------------------------------------------------------ a chain: the inner step's
    def setup_chain(self, rng, tune: int, draws: int) -> None:
        """Set up the inner step's chain."""
        self._inner.setup_chain(rng, tune, draws)

    @property
    def sampling_state(self):
        """The inner step's sampling state; settable to resume."""
        return self._inner.sampling_state

    @sampling_state.setter
    def sampling_state(self, state) -> None:
        self._inner.sampling_state = state

    def stop_tuning(self) -> None:
        self._inner.stop_tuning()

    def step(self, point):
        """One draw: the missing cells into the matrix, the inner step's draw, the missing cells back."""
        matrix = self._matrix.copy()
        matrix[self._mask] = point[self._name]
        inner, stats = self._inner.step({self._inner_name: matrix})
        out = point.copy()
        out[self._name] = inner[self._inner_name][self._mask].astype(self._matrix.dtype)
        return out, stats

    def _progressbar_config(self, n_chains=1):
        return self._inner._progressbar_config(n_chains)

    def _make_progressbar_update_functions(self):
        return self._inner._make_progressbar_update_functions()

