"""Step methods for :class:`~pymc_rbm.categorical.CategoricalRBM` variables in ``pm.sample``.

The step methods sweep the RBM through the one engine,
:func:`pymc_rbm.kernels.sweep.sweep` at a
:class:`~pymc_rbm.categorical.CategoricalAtBeta` target, with the hidden units
as auxiliary state:

- :class:`CategoricalExactDraws` (what ``pm.sample`` picks where the
  parameters are constants, a layer can be enumerated and no other model
  term involves the variable): independent exact draws.
- :class:`CategoricalReplicaExchange` (what it picks for the other variables
  with constant parameters): replicas on a ladder of inverse temperatures,
  adapted during tuning, swept through the engine at their β and swapped.
- :class:`CategoricalMetropolisedGibbs` (what it picks where the parameters
  are random variables): each sweep updates the hidden units by
  flip-the-state (Brügge, Fischer & Igel 2013) and the visible units by
  Liu's (1996) Metropolised Gibbs sampler, its generalisation to ``q``
  states; ``alpha`` mixes both with Gibbs.
- :class:`CategoricalGibbs`: block Gibbs sweeps.

Their construction is that of the binary steps (:mod:`pymc_rbm.step_methods.base`),
whose proofs carry over unit for unit, because given ``h`` the visible units
are independent and each unit's update is reversible for its conditional:

- **The hidden state is refreshed** (drawn from ``p(h | v)``) whenever the
  point the step receives differs from the one it left, or the parameters
  changed; a stale ``h`` would break invariance.
- **Other model terms** ``L(v)`` (a likelihood of noisy reads, a Potential)
  make the visible update a proposal reversible for ``p_RBM(v | h)``, which
  is accepted with ``min(1, L(v') / L(v))``, row by row for a batch of rows,
  so that the step samples the full conditional ``∝ p_RBM(v) L(v)``.

``tests/step_methods/test_categorical_step.py`` builds the exact transition
matrix of the step on every joint state of small models, with and without a
likelihood, and checks ``π K = π`` with negative controls.
"""

from __future__ import annotations

import numpy as np
from pymc.step_methods.compound import Competence

from pymc_rbm.categorical.exact import MAX_ENUMERATED_STATES, ExactSampler
from pymc_rbm.categorical.params import at_beta, energy
from pymc_rbm.categorical.random_variable import categorical_params_of, categorical_sizes, is_categorical_rbm_variable
from pymc_rbm.kernels.layer import GIBBS, LayerRule, check_alpha
from pymc_rbm.random_variable import random_ancestors
from pymc_rbm.step_methods.categorical_base import CategoricalStep, TiltedTarget
from pymc_rbm.step_methods.layer_ladder import LadderStep
from pymc_rbm.step_methods.terms import free_in_model, other_terms_involve
from pymc_rbm.validation import check_bool, check_positive_int

__all__ = [
    "CategoricalExactDraws",
    "CategoricalGibbs",
    "CategoricalMetropolisedGibbs",
    "CategoricalReplicaExchange",
    "EXACT_DRAWS_MAX_FLOPS",
    "exact_draws_pay",
    "register",
]


# ----------------------------------------------------------------------------- step methods

class CategoricalMetropolisedGibbs(CategoricalStep):
    """Metropolised Gibbs sweeps of a :class:`CategoricalRBM` variable (``pm.sample``'s pick for random parameters).

    Each sweep updates the hidden units given ``v`` and then every visible
    unit given ``h`` by Liu's (1996) Metropolised Gibbs sampler (propose one
    of the other ``q - 1`` labels in proportion to its probability, accept
    with ``min(1, (1 - p_current) / (1 - p_proposed))``), mixed with the Gibbs
    draw by ``alpha``; the hidden units by flip-the-state (its ``q = 2`` case)
    mixed the same way. It never proposes to stay, so it moves more often
    than Gibbs (Peskun 1973); the hidden units are auxiliary and redrawn
    whenever another step changed the point (module docstring).

    Parameters
    ----------
    vars : CategoricalRBM variable, optional
    alpha : float in [0, 1], default 1.0
        Weight of the Metropolised update against Gibbs, per unit.
    sweeps : int, default 1
        Sweeps per recorded draw.
    random_start : bool, default True
        Uniformly random labels on a chain's first tuning draw (PyMC starts
        every chain at the same point).
    model, rng, initial_point, compile_kwargs, blocked
        As for every PyMC step method.

    Notes
    -----
    Stats per draw (per row of a batched variable): ``free_energy`` F(v),
    ``n_changed`` (labels changed in the draw), ``accept`` (mean Metropolis
    acceptance of the correction for other model terms, 1 without them) and
    ``refreshed``.
    """

    name = "categorical_metropolised_gibbs"

    def __init__(self, vars=None, *, alpha: float = 1.0, **kwargs):
        self.alpha = check_alpha(alpha)
        self.rule = LayerRule(self.alpha)
        super().__init__(vars, **kwargs)

    @staticmethod
    def competence(var, has_grad=None):
        """``IDEAL`` for CategoricalRBM variables (exact draws and replica exchange, registered first, win the tie
        where the parameters are constants), else ``INCOMPATIBLE``."""
        return Competence.IDEAL if is_categorical_rbm_variable(var) else Competence.INCOMPATIBLE


class CategoricalGibbs(CategoricalStep):
    """Block Gibbs sweeps of a :class:`CategoricalRBM` variable: ``h ~ p(h | v)``, then ``v ~ p(v | h)``.

    Parameters as for :class:`CategoricalMetropolisedGibbs` (without ``alpha``).
    ``pm.sample`` never picks it by itself; pass ``step=CategoricalGibbs()`` for Gibbs.
    """

    name = "categorical_gibbs"
    rule = GIBBS

    @staticmethod
    def competence(var, has_grad=None):
        """``PREFERRED`` for CategoricalRBM variables, else ``INCOMPATIBLE``."""
        return Competence.PREFERRED if is_categorical_rbm_variable(var) else Competence.INCOMPATIBLE


#: Largest one-off enumeration (multiply-adds, about ``configurations x n_visible x n_states x n_hidden``) for which
#: ``pm.sample`` picks exact draws by itself: about 5 s in NumPy (2**16 x 20 x 21 x 16 = 4.4e8 took 2.1 s).
EXACT_DRAWS_MAX_FLOPS = 1e9


def exact_draws_pay(var, model=None) -> bool:
    """Whether ``pm.sample`` should sample ``var`` by :class:`CategoricalExactDraws`.

    True for a free :class:`CategoricalRBM` variable whose parameters are
    constants or data, whose smaller enumeration (``2**n_hidden`` or
    ``n_states**n_visible`` configurations) is at most
    :data:`~pymc_rbm.categorical.MAX_ENUMERATED_STATES`, and that no other
    model term involves (independent exact draws then need no correction).
    """
    if not is_categorical_rbm_variable(var) or random_ancestors(*categorical_params_of(var)):
        return False
    model = free_in_model(var, model)
    if model is None:
        return False
    sizes = categorical_sizes(categorical_params_of(var)[0])
    if sizes is None:
        return False
    n, q, H = sizes
    configurations = min(2**H, q**n)
    if configurations > MAX_ENUMERATED_STATES or configurations * n * q * H > EXACT_DRAWS_MAX_FLOPS:
        return False
    return not other_terms_involve(model, var)


class CategoricalExactDraws(CategoricalStep):
    """Independent exact draws of a :class:`CategoricalRBM` variable with constant parameters.

    The smaller layer's configurations are enumerated once
    (:class:`~pymc_rbm.categorical.ExactSampler`); every draw of every row is
    then independent and exact. Where other model terms ``L(v)`` involve the
    labels, the draw is an independence proposal (Tierney 1994) accepted with
    ``min(1, L(v') / L(v))`` row by row, which is exact for any ``L`` but
    rarely accepted where ``L`` is informative: ``pm.sample`` picks this step
    by itself (``IDEAL``, ahead of :class:`CategoricalMetropolisedGibbs`) only
    where no other term involves the variable (:func:`exact_draws_pay`).

    Parameters
    ----------
    vars : CategoricalRBM variable, optional
    max_states : int, default 2**20
        Largest enumeration; larger models are refused.
    model, rng, initial_point, compile_kwargs, blocked
        As for every PyMC step method.
    """

    name = "categorical_exact_draws"
    tilts_evidence = False  # its proposals are independent draws, corrected by Metropolis

    def __init__(self, vars=None, *, max_states: int = MAX_ENUMERATED_STATES, **kwargs):
        self.max_states = check_positive_int(max_states, "max_states")
        kwargs.setdefault("random_start", False)
        super().__init__(vars, **kwargs)
        if self._param_fn is not None:
            raise ValueError(
                "CategoricalExactDraws needs constant parameters (or data); these depend on random variables: "
                "use CategoricalMetropolisedGibbs"
            )

    def _set_params(self, W, vbias, hbias):
        super()._set_params(W, vbias, hbias)
        self._sampler = ExactSampler(self.params, max_states=self.max_states)

    def _draw(self, v, h, accept):
        v_new, _ = self._sampler.draw(self.rng, self._n_chains)
        v_new = v_new.astype(np.float64)
        if accept is not None:
            v_new = accept(v, v_new)
        return v_new, None

    @staticmethod
    def competence(var, has_grad=None):
        """``IDEAL`` where :func:`exact_draws_pay`, else ``INCOMPATIBLE``."""
        return Competence.IDEAL if exact_draws_pay(var) else Competence.INCOMPATIBLE


class CategoricalReplicaExchange(LadderStep, CategoricalStep):
    """Replica exchange (parallel tempering) of a :class:`CategoricalRBM` variable on a fixed ladder.

    Replica ``r`` samples ``p_{β_r}(v, h) ∝ exp(-β_r E(v, h))`` with ``β_0 = 1 > β_1 > … > β_{R-1}``;
    the cold replica is the variable, and it alone carries the other model
    terms ``L(v)`` (its visible moves are corrected as in the other steps).
    A round sweeps every replica through the engine at its β (one
    :func:`~pymc_rbm.kernels.sweep.sweep` of all rows, β per row, by
    Metropolised Gibbs mixed with Gibbs by ``alpha``) and then proposes to
    swap the joint states of neighbours, pairs ``(0, 1), (2, 3), …`` on even
    rounds and ``(1, 2), (3, 4), …`` on odd ones (Syed, Bouchard-Côté,
    Deligiannidis & Doucet 2022), each accepted with
    ``min(1, exp((β_r - β_{r+1}) (E(x_r) - E(x_{r+1}))))``, times ``L(v_{1}) / L(v_0)``
    for the pair that involves the cold replica. Every round leaves the
    product ``π(x_0) Π_{r>0} p_{β_r}(x_r)`` invariant, so the cold replica
    samples the full conditional ``∝ p_RBM(v) L(v)``; the hot replicas are
    auxiliary state, kept between draws (their targets do not depend on the
    point, since the parameters must be constants or data) and redrawn at
    each chain's start.

    **The ladder is adapted during tuning** (Syed, Bouchard-Côté, Deligiannidis &
    Doucet 2022): at tuning draws ``tune/4`` and ``tune/2`` the swap rejection
    rates ``r_i`` of the pairs give the communication barrier
    ``Λ(β_k) = Σ_{i<k} r_i`` (linear in β between rungs), and the new ladder
    has ``ceil(2Λ) + 1`` rungs (at least as many as the initial ladder, since
    a rung costs little in a batched sweep, and at most ``max_replicas``)
    between 1 and ``β_min`` spaced evenly in ``Λ``, so that every pair rejects about
    equally often; the hot replicas then restart from random labels and burn
    in during the rest of tuning. After tuning the ladder is frozen, so the
    draws come from a time-homogeneous chain. With ``tune < 40`` the initial
    ladder is kept.

    ``pm.sample`` picks this step by itself for ``CategoricalRBM`` variables
    whose parameters are constants or data, unless exact draws pay
    (:func:`exact_draws_pay`): an exactly invariant sampler that stays in one
    mode gives wrong answers without a word, and on a model with two sharp
    modes Metropolised Gibbs alone does (``docs/categorical.md``).

    Parameters
    ----------
    vars : CategoricalRBM variable, optional
    betas : array_like of float, optional
        The ladder, decreasing from 1 (default: ``n_replicas`` values spaced
        geometrically from 1 to ``beta_min``).
    n_replicas : int, default 8
        Rungs of the initial ladder.
    beta_min : float in (0, 1), default 0.05
        The hottest rung, kept by the adaptation.
    max_replicas : int, default 32
        Most rungs the adaptation may choose.
    alpha : float in [0, 1], default 1.0
        Weight of Metropolised Gibbs against Gibbs in the sweeps.
    sweeps : int, default 1
        Rounds (sweep of every replica, then swaps) per recorded draw.
    tilt_every_rung : bool, default False
        Where the other terms are per-unit evidence that involves no other
        random variable (a clamp of observed cells:
        :class:`~pymc_rbm.step_methods.ImputedCells`), let every replica carry
        it: replica ``r`` then samples ``∝ p_{β_r}(v) L(v)``, ``L`` cancels from
        every swap, and the hottest rung draws nearly independent states that
        agree with the evidence. Refused where the other terms involve other
        random variables (the hot replicas, kept between draws, would be
        stale for the point).
    model, rng, initial_point, compile_kwargs, blocked, random_start
        As for :class:`CategoricalMetropolisedGibbs`.
    """

    name = "categorical_replica_exchange"

    def __init__(self, vars=None, *, alpha: float = 1.0, tilt_every_rung: bool = False, **kwargs):
        self.alpha = check_alpha(alpha)
        self.rule = LayerRule(self.alpha)
        self.tilt_every_rung = check_bool(tilt_every_rung, "tilt_every_rung")
        super().__init__(vars, **kwargs)
        others = sorted(set(self.other_terms.input_names) - {self._name})
        if self.tilt_every_rung and others:
            raise ValueError(
                f"tilt_every_rung=True needs other model terms of {self._name!r} that involve no other random "
                f"variable (the hot replicas are kept between draws); these involve {others}: leave it False"
            )

    def _tilted(self, target):
        """The ladder's target, tilted on the cold replica's rows (or on every rung's: ``tilt_every_rung``)."""
        if self.evidence is None or not self.tilt_every_rung:
            return super()._tilted(target)
        return TiltedTarget(target, np.tile(self.evidence, (self.betas.size, 1, 1)))

    def _ladder_target(self, betas_per_row):
        return at_beta(self.params, betas_per_row, betas_per_row.size)

    def _energy(self, V, Hh):
        return energy(V.astype(np.int64), Hh, self.params)

    def _evidence_change(self, v_cold, v_new) -> np.ndarray:
        """``log L(v') - log L(v)`` per row from the per-unit evidence (:attr:`uses_evidence`); 0 where every rung
        carries it (it cancels from the swap)."""
        if self.tilt_every_rung:
            return np.zeros(v_cold.shape[0])
        rows, units = np.arange(v_cold.shape[0])[:, None], np.arange(v_cold.shape[1])
        ev = self.evidence
        return (ev[rows, units, v_new.astype(np.int64)] - ev[rows, units, v_cold.astype(np.int64)]).sum(axis=-1)

    @staticmethod
    def competence(var, has_grad=None):
        """``IDEAL`` for CategoricalRBM variables with constant (or data) parameters, else ``INCOMPATIBLE``."""
        if is_categorical_rbm_variable(var) and not random_ancestors(*categorical_params_of(var)):
            return Competence.IDEAL
        return Competence.INCOMPATIBLE


def register() -> None:
    """Add the categorical steps to ``pymc.step_methods.STEP_METHODS`` (once), after the binary ones.

    :func:`pymc_rbm.step_methods.register` calls it when :mod:`pymc_rbm.step_methods` is imported.
    """
    from pymc.step_methods import STEP_METHODS

    for method in (CategoricalExactDraws, CategoricalReplicaExchange, CategoricalMetropolisedGibbs, CategoricalGibbs):
        if method in STEP_METHODS:
            STEP_METHODS.remove(method)
        STEP_METHODS.append(method)
