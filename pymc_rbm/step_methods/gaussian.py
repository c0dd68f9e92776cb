"""Step methods for :class:`~pymc_rbm.gaussian.GaussianRBM` variables in ``pm.sample``.

A Gaussian-Bernoulli RBM's ``p(v)`` is a mixture of ``2**n_hidden`` Gaussians
(:mod:`pymc_rbm.gaussian`). NUTS on ``-F(v)`` samples one component well, but
where the components lie far apart (large ``W``) a gradient sampler does not
cross from one to the next and reports one mode's weight as if it were the
answer. The steps here sweep the RBM through the one engine
(:func:`pymc_rbm.kernels.sweep.sweep` at a
:class:`~pymc_rbm.gaussian.GaussianAtBeta` target) with the hidden units as
auxiliary state:

- :class:`GaussianReplicaExchange` (what ``pm.sample`` picks for a
  GaussianRBM variable with constant parameters that no other model term
  involves): replicas at ``exp(-β E(v, h))`` on a ladder adapted in tuning,
  swept by block Gibbs at their β and swapped with the exact energy
  differences. At β the conditionals are ``v | h ~ N(b + σ∘Wh, σ²/β)`` and
  ``h | v ~ Bernoulli(sigmoid(β (c + (v/σ)·W)))``.
- :class:`GaussianGibbs`: block Gibbs sweeps, ``h ~ p(h | v)`` then
  ``v ~ p(v | h)``, exact draws of each block.

**Other model terms.** Where other terms ``L(v)`` involve the visible units
(a likelihood of noisy measurements, a Potential), both steps are exact: the
visible update is a proposal reversible for ``p_RBM(v | h)`` accepted with
``min(1, L(v') / L(v))`` (:class:`~pymc_rbm.step_methods.layer_base.LayerStep`),
and the swap of the cold replica carries ``L(v_1) / L(v_0)``. Such proposals
ignore what ``L`` says about ``v`` and are rarely accepted where ``L`` is
informative, so ``pm.sample`` does not pick them by itself there: it refuses
competence and NUTS samples the posterior. Pass ``step=`` to use them anyway.
"""

from __future__ import annotations

import numpy as np
from pymc.model import modelcontext
from pymc.step_methods.compound import Competence
from pytensor.graph.traversal import ancestors

from pymc_rbm.gaussian import (
    GaussianAtBeta,
    GaussianRBMParams,
    core_parameters,
    energy,
    free_energy,
    gaussian_at_beta,
    gaussian_params_of,
    is_gaussian_rbm_variable,
    visible_mean,
)
from pymc_rbm.random_variable import random_ancestors
from pymc_rbm.step_methods.layer_base import LadderStep, LayerStep

__all__ = ["GaussianGibbs", "GaussianReplicaExchange", "GaussianStep", "register", "replica_exchange_pays"]


class GaussianStep(LayerStep):
    """The adapter of the Gaussian steps: :class:`LayerStep` for GaussianRBM variables (other terms corrected)."""

    name = "gaussian_rbm"
    variable_kind = "GaussianRBM"

    @staticmethod
    def is_variable(var) -> bool:
        return is_gaussian_rbm_variable(var)

    @staticmethod
    def params_of(rv) -> tuple:
        return gaussian_params_of(rv)

    def _set_params(self, W, vbias, hbias, sigma):
        arrays = core_parameters(np.asarray(W), np.asarray(vbias), np.asarray(hbias), np.asarray(sigma))
        self.params = GaussianRBMParams(*arrays)
        if self.params.n_visible != self._shape[-1]:
            raise ValueError(f"W has {self.params.n_visible} visible units but the variable has {self._shape[-1]}")
        self.target = GaussianAtBeta(self.params)

    def _random_visible(self, size):
        """``v ~ p(v | h)`` at uniformly random hidden states ``h``, shape ``size`` (float64; stochastic).

        Every mixture component is equally likely to be the start, so chains
        start spread over the components.
        """
        m = int(np.prod(size[:-1], dtype=np.int64))
        h = self.rng.integers(0, 2, size=(m, self.params.n_hidden)).astype(np.float64)
        v = visible_mean(h, self.params) + self.params.sigma * self.rng.standard_normal((m, self.params.n_visible))
        return v.reshape(size)

    def _free_energy(self, v):
        return free_energy(v, self.params)


class GaussianGibbs(GaussianStep):
    """Block Gibbs sweeps of a :class:`~pymc_rbm.gaussian.GaussianRBM` variable.

    Each sweep draws ``h ~ Bernoulli(sigmoid(c + (v/σ)·W))`` and then
    ``v ~ N(b + σ ∘ W h, σ²)``; the hidden units are auxiliary and redrawn
    whenever another step changed the point. Exact, but on a mixture whose
    components lie far apart it moves between them as rarely as NUTS does:
    ``pm.sample`` never picks it by itself (``COMPATIBLE``, below NUTS), and
    picks :class:`GaussianReplicaExchange` where it can.

    Parameters
    ----------
    vars : GaussianRBM variable, optional
    sweeps : int, default 1
        Sweeps per recorded draw.
    random_start : bool, default True
        Start each chain's first tuning draw at ``v ~ p(v | h)`` for a
        uniformly random ``h`` (PyMC starts every chain at the same point).
    model, rng, initial_point, compile_kwargs, blocked
        As for every PyMC step method.

    Notes
    -----
    Stats per draw (per row of a batched variable): ``free_energy`` F(v),
    ``n_changed`` (units changed), ``accept`` (mean Metropolis acceptance of
    the correction for other model terms, 1 without them) and ``refreshed``.
    """

    name = "gaussian_gibbs"

    @staticmethod
    def competence(var, has_grad=None):
        """``COMPATIBLE`` for GaussianRBM variables (NUTS, ``PREFERRED``, wins), else ``INCOMPATIBLE``."""
        return Competence.COMPATIBLE if is_gaussian_rbm_variable(var) else Competence.INCOMPATIBLE


def replica_exchange_pays(var, model=None) -> bool:
    """Whether ``pm.sample`` should sample ``var`` by :class:`GaussianReplicaExchange`.

    True for a free :class:`~pymc_rbm.gaussian.GaussianRBM` variable whose
    parameters are constants or data and that no other model term involves.
    Where another term involves it, the step would propose from the RBM alone
    and accept by ``L``, which an informative likelihood rarely accepts:
    NUTS samples that posterior instead (module docstring).
    """
    if not is_gaussian_rbm_variable(var) or random_ancestors(*gaussian_params_of(var)):
        return False
    try:
        model = modelcontext(model)
    except TypeError:
        return False
    if var not in model.free_RVs:
        return False
    others = [r for r in model.basic_RVs if r is not var] + list(model.potentials)
    return not (others and var in set(ancestors(others)))


class GaussianReplicaExchange(LadderStep, GaussianStep):
    """Replica exchange (parallel tempering) of a :class:`~pymc_rbm.gaussian.GaussianRBM` variable.

    Replica ``r`` samples ``p_{β_r}(v, h) ∝ exp(-β_r E(v, h))``, ``1 = β_0 > … > β_{R-1} > 0``,
    by block Gibbs at its β (:class:`~pymc_rbm.gaussian.GaussianAtBeta`:
    ``v | h ~ N(b + σ ∘ W h, σ²/β)``, ``h | v ~ Bernoulli(sigmoid(β (c + (v/σ)·W)))``);
    neighbours swap their joint states ``(v, h)`` with probability
    ``min(1, exp((β_r - β_{r+1}) (E(x_r) - E(x_{r+1}))))``, even and odd
    pairs on alternate rounds, and the ladder is adapted in tuning to equal
    swap rates (:class:`~pymc_rbm.step_methods.layer_base.LadderStep`, shared
    with the categorical replica exchange). At small β the components of
    the mixture widen (standard deviation ``σ / √β``) and their weights
    flatten, so the hot replicas cross between them and the swaps bring the
    crossings down to ``β = 1``.

    ``pm.sample`` picks it (``IDEAL``) for GaussianRBM variables with
    constant parameters that no other model term involves
    (:func:`replica_exchange_pays`); elsewhere NUTS.

    Parameters
    ----------
    vars : GaussianRBM variable, optional
    betas : array_like of float, optional
        The initial ladder, decreasing from 1 to a value > 0 (default:
        ``n_replicas`` values geometric from 1 to ``beta_min``).
    n_replicas : int, default 8
    beta_min : float in (0, 1), default 0.05
        The hottest rung, kept by the adaptation.
    max_replicas : int, default 32
    sweeps : int, default 1
        Rounds (a sweep of every replica, then swaps) per recorded draw.
    model, rng, initial_point, compile_kwargs, blocked, random_start
        As for :class:`GaussianGibbs`.
    """

    name = "gaussian_replica_exchange"

    def __init__(self, vars=None, *, betas=None, **kwargs):
        if betas is not None and not np.min(betas) > 0:
            raise ValueError("the ladder of a Gaussian RBM must stay at beta > 0 (at beta = 0 v is improper)")
        super().__init__(vars, betas=betas, **kwargs)

    def _ladder_target(self, betas_per_row):
        return gaussian_at_beta(self.params, betas_per_row, betas_per_row.size)

    def _energy(self, V, Hh):
        return energy(V, Hh, self.params)

    @staticmethod
    def competence(var, has_grad=None):
        """``IDEAL`` where :func:`replica_exchange_pays`, else ``INCOMPATIBLE``."""
        return Competence.IDEAL if replica_exchange_pays(var) else Competence.INCOMPATIBLE


def register() -> None:
    """Add the Gaussian steps to ``pymc.step_methods.STEP_METHODS`` (once), as the categorical steps are added."""
    from pymc.step_methods import STEP_METHODS

    for method in (GaussianReplicaExchange, GaussianGibbs):
        if method in STEP_METHODS:
            STEP_METHODS.remove(method)
        STEP_METHODS.append(method)


register()
