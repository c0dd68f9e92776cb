"""The shared adapter of the categorical RBM steps: the layer-generic adapter and per-unit evidence as a tilt.

:class:`CategoricalStep` is what :class:`~pymc_rbm.step_methods.categorical.CategoricalGibbs`,
``CategoricalMetropolisedGibbs``, ``CategoricalExactDraws`` and
``CategoricalReplicaExchange`` share. Most of it is the layer-generic adapter
:class:`~pymc_rbm.step_methods.layer_base.LayerStep` (parameters, the hidden
state refreshed whenever the point changed, other model terms accepted by
their Metropolis ratio); what is categorical is the variable, its parameters,
uniformly random labels, and other terms that are one term per site, swept as
a tilt of the visible fields (:class:`TiltedTarget`). The proofs are those of
the binary steps, unit for unit (:mod:`pymc_rbm.step_methods.correction`).
"""

from __future__ import annotations

import numpy as np

from pymc_rbm.categorical.params import CategoricalAtBeta, CategoricalRBMParams, free_energy
from pymc_rbm.categorical.random_variable import categorical_params_of, core_parameters, is_categorical_rbm_variable
from pymc_rbm.step_methods.layer_base import LayerStep, LayerStepState

__all__ = ["CategoricalStep", "CategoricalStepState", "TiltedTarget", "resolve_categorical_vars"]

#: The sampling state of a categorical step (:class:`~pymc_rbm.step_methods.layer_base.LayerStepState`).
CategoricalStepState = LayerStepState


class TiltedTarget:
    """A sweep target whose visible fields are those of ``base`` plus per-row evidence (rows beyond it untilted).

    ``evidence`` has shape (n_rows, n_visible, q) and tilts the first
    ``n_rows`` rows of a batch (the cold replica of a ladder, or every chain).
    """

    def __init__(self, base, evidence):
        self.base, self.evidence = base, evidence
        self.visible_layer, self.hidden_layer, self.W = base.visible_layer, base.hidden_layer, base.W

    def hidden_input(self, v):
        return self.base.hidden_input(v)

    def hidden_logits(self, a):
        return self.base.hidden_logits(a)

    def visible_logits(self, h):
        f = self.base.visible_logits(h)
        f[: self.evidence.shape[0]] += self.evidence
        return f


class CategoricalStep(LayerStep):
    """The shared adapter of the categorical steps: :class:`LayerStep` for CategoricalRBM variables.

    Where the other terms are per-unit evidence, ``log L(v) = Σ_{k,i} ℓ_{ki}(v_{ki})``
    (noisy reads of each site, observed through a ``pm.Categorical`` or a
    ``pm.Normal``), ``p_RBM(v | h) L(v)`` is, unit by unit, a Potts unit whose
    fields gain ``ℓ_{ki}(·)``: every sweep updates the visible units from that
    exact conditional (Gibbs or Metropolised Gibbs), nothing to correct
    (:attr:`uses_evidence`).
    """

    name = "categorical_rbm"
    variable_kind = "CategoricalRBM"
    #: Whether per-unit evidence is swept exactly as a tilt of the visible fields (steps that sweep; not exact draws).
    tilts_evidence = True

    @staticmethod
    def is_variable(var) -> bool:
        return is_categorical_rbm_variable(var)

    @staticmethod
    def params_of(rv) -> tuple:
        return categorical_params_of(rv)

    def _set_params(self, W, vbias, hbias):
        W, vbias, hbias = core_parameters(np.asarray(W), np.asarray(vbias), np.asarray(hbias), np.zeros(()))[:3]
        self.params = CategoricalRBMParams(W, vbias, hbias)
        if self.params.n_visible != self._shape[-1]:
            raise ValueError(f"W has {self.params.n_visible} visible units but the variable has {self._shape[-1]}")
        self.target = CategoricalAtBeta(self.params)

    def _random_visible(self, size):
        """Uniformly random labels of shape ``size`` (float64; stochastic)."""
        return self.rng.integers(0, self.params.n_states, size=size).astype(np.float64)

    def _free_energy(self, v):
        return free_energy(v, self.params)

    def _chain_start(self, point):
        self._received = np.asarray(point[self._name])  # the state a random start replaces: see _unit_evidence
        return super()._chain_start(point)

    def _check_start(self, value) -> None:
        """Refuse a chain's first value (e.g. from ``initvals``) that is not labels in ``[0, n_states)``."""
        q = self.params.n_states
        a = np.asarray(value)
        with np.errstate(invalid="ignore"):
            bad = ~((a >= 0) & (a < q) & (a == np.floor(a)))
        if bad.any():
            where = tuple(int(i) for i in np.argwhere(bad)[0])
            raise ValueError(
                f"the start value of {self._name!r} (initvals or the initial point) must hold integer labels in "
                f"[0, {q}) (values in {{0, …, {q - 1}}}); found {a[where].item()!r} at index {where} "
                f"({int(bad.sum())} bad entries)"
            )

    def _unit_evidence(self, point):
        """``ℓ_{ki}(c) - ℓ_{ki}(0)`` for every row ``k``, unit ``i`` and label ``c``, shape (n_chains, n_visible, q).

        From one vectorised evaluation of the row terms at ``q·n + 1`` states
        (a reference state ``r``, then unit ``i`` of every row set to ``c``).
        Where ``L`` rules out label 0 of a unit the offset is ``ℓ_{ki}(r_{ki})``
        instead: the same for every label of the unit, it changes no
        conditional. The reference is the point's state where
        the terms are finite there (a chain's state), else the state a random
        start replaced (a clamp of observed cells rules out most others), else
        all labels 0. None (the step then corrects by Metropolis instead)
        where a row's terms are ``-inf`` at all three.
        """
        n, q, shape = self._shape[-1], self.params.n_states, self._shape
        rows = self._n_chains
        received = getattr(self, "_received", None)
        for reference in (point[self._name], received, np.zeros(shape)):
            if reference is None:
                continue
            stack = np.repeat(np.asarray(reference, dtype=self._out_dtype).reshape(1, rows, n), q * n + 1, axis=0)
            for c in range(q):
                stack[1 + c * n + np.arange(n), :, np.arange(n)] = c
            values = self.other_terms.row_values(point, stack.reshape((q * n + 1, *shape)))  # (q n + 1, rows)
            base = values[0]
            if np.all(np.isfinite(base)):
                break
        else:
            return None
        with np.errstate(invalid="ignore"):
            ev = (values[1:] - base).reshape(q, n, rows).transpose(2, 1, 0)
        ev = np.where(np.isnan(ev), -np.inf, ev)
        offset = ev[..., :1]
        ev = np.where(np.isfinite(offset), ev - offset, ev)  # relative to label 0 where L allows it
        return np.maximum(ev, -1e300)  # -inf (a label L rules out) as a finite field of probability 0

    def _tilted(self, target):
        """``target`` with its visible fields tilted by the evidence where there is some."""
        return target if self.evidence is None else TiltedTarget(target, self.evidence)


def resolve_categorical_vars(vars, model):
    """The CategoricalRBM value variables a categorical step samples (:meth:`LayerStep.resolve_vars`)."""
    return CategoricalStep.resolve_vars(vars, model)
