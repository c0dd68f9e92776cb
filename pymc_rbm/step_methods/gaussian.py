"""Step methods for :class:`~pymc_rbm.gaussian.distribution.GaussianRBM` variables in ``pm.sample``.

A Gaussian-Bernoulli RBM's ``p(v)`` is a mixture of ``2**n_hidden`` Gaussians
(:mod:`pymc_rbm.gaussian`). NUTS on ``-F(v)`` samples one component well, but
where the components lie far apart (large ``W``) a gradient sampler does not
cross from one to the next and reports one mode's weight as if it were the
answer. The steps here sweep the RBM through the one engine
(:func:`pymc_rbm.kernels.sweep.sweep` at a
:class:`~pymc_rbm.gaussian.params.GaussianAtBeta` target) with the hidden units as
auxiliary state:

- :class:`GaussianReplicaExchange` (what ``pm.sample`` picks for a
  GaussianRBM variable with constant parameters whose other model terms, if
  any, are per-unit evidence): replicas at ``exp(-β E(v, h))`` on a ladder
  adapted in tuning, swept by block Gibbs at their β and swapped with the
  exact energy differences. At β the conditionals are
  ``v | h ~ N(b + σ∘Wh, σ²/β)`` and ``h | v ~ Bernoulli(sigmoid(β (c + (v/σ)·W)))``.
- :class:`GaussianGibbs`: block Gibbs sweeps, ``h ~ p(h | v)`` then
  ``v ~ p(v | h)``, exact draws of each block.

**Other model terms** ``L(v)`` are handled exactly in one of two ways.
Per-unit evidence, ``log L = Σ_{k,i} ℓ_{ki}(v_{ki})`` (a Normal or Student-t
reading of each unit), tilts the visible conditional by a quadratic fitted to
each ``ℓ_{ki}`` (:class:`GaussianStep`): the tilted conditional is a Gaussian,
drawn exactly, and the move is accepted with ``min(1, L(v') T(v) / (L(v) T(v')))``,
which is 1 where ``ℓ`` is quadratic (a Normal likelihood of ``s v + c``). Any
other ``L`` makes the RBM's visible update a proposal accepted with
``min(1, L(v') / L(v))``, and the cold replica's swaps carry ``L(v_1) / L(v_0)``;
such proposals ignore what ``L`` says about ``v`` and are rarely accepted
where ``L`` is informative, so there ``pm.sample`` refuses competence and NUTS
samples the posterior. Pass ``step=`` to use them anyway.
"""

from __future__ import annotations

import numpy as np
from pymc.step_methods.compound import Competence

from pymc_rbm.gaussian.params import (
    GaussianAtBeta,
    GaussianRBMParams,
    core_parameters,
    energy,
    free_energy,
    gaussian_at_beta,
    visible_mean,
)
from pymc_rbm.gaussian.random_variable import gaussian_params_of, is_gaussian_rbm_variable
from pymc_rbm.random_variable import random_ancestors
from pymc_rbm.step_methods.layer_base import LayerStep
from pymc_rbm.step_methods.layer_ladder import LadderStep
from pymc_rbm.step_methods.terms import free_in_model, other_terms_are_unit_evidence, other_terms_involve

__all__ = ["GaussianGibbs", "GaussianReplicaExchange", "GaussianStep", "register", "replica_exchange_pays"]


class GaussianStep(LayerStep):
    """The adapter of the Gaussian steps: :class:`LayerStep` for GaussianRBM variables.

    Where the other terms are per-unit evidence, ``log L(v) = Σ_{k,i} ℓ_{ki}(v_{ki})``
    (a Normal likelihood of each unit, say), each draw fits to every
    ``ℓ_{ki}`` the quadratic ``T_{ki}(v) = a v² + b v`` through its values at
    ``vbias_i`` and ``vbias_i ± σ_i`` (``a`` capped at 0), and the visible
    update draws from the tilted conditional ``N(vbias + σ ∘ W h, σ²) T(v)``,
    a Gaussian, accepted with ``min(1, L(v') T(v) / (L(v) T(v')))``. Exact
    for any ``ℓ``; where ``ℓ`` is quadratic in ``v`` (a Normal likelihood of
    ``s v + c``) the tilt is the exact conditional and every move is accepted.
    """

    name = "gaussian_rbm"
    variable_kind = "GaussianRBM"
    tilts_evidence = True
    corrects_tilt = True

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

    def _unit_evidence(self, point):
        """The quadratic tilt ``(a, b)``, each of shape (n_chains, n_visible) (class docstring); None where a
        term is not finite at the fitting points (the moves are then corrected by ``L`` alone)."""
        n, rows, p = self._shape[-1], self._n_chains, self.params
        units = np.arange(n)
        stack = np.repeat(np.broadcast_to(p.vbias, (rows, n))[None], 2 * n + 1, axis=0)  # (2n + 1, rows, n)
        stack[1 + units, :, units] += p.sigma[:, None]
        stack[1 + n + units, :, units] -= p.sigma[:, None]
        values = self.other_terms.row_values(point, stack.reshape((2 * n + 1, *self._shape)).astype(self._dtype))
        if not np.all(np.isfinite(values)):
            return None
        up, down = (values[1 : n + 1] - values[0]).T, (values[n + 1 :] - values[0]).T  # ℓ(b ± σ) - ℓ(b)
        curvature = np.minimum((up + down) / 2.0, 0.0)  # ℓ(b + t σ) ≈ ℓ(b) + slope t + curvature t²
        a = curvature / p.sigma**2
        return a, (up - down) / (2.0 * p.sigma) - 2.0 * a * p.vbias

    def _tilted(self, target):
        """``target`` with the first ``n_chains`` rows tilted by the evidence (:class:`GaussianAtBeta` ``tilt``)."""
        return target if self.evidence is None else target._replace(tilt=self.evidence)

    def _tilt_change(self, v_old, v_new, rows):
        if self.evidence is None:
            return np.zeros(v_old.shape[0])
        a, b = (x[rows] for x in self.evidence)
        return (a * (v_new**2 - v_old**2) + b * (v_new - v_old)).sum(axis=-1)


class GaussianGibbs(GaussianStep):
    """Block Gibbs sweeps of a :class:`~pymc_rbm.gaussian.distribution.GaussianRBM` variable.

    Each sweep draws ``h ~ Bernoulli(sigmoid(c + (v/σ)·W))`` and then
    ``v ~ N(b + σ ∘ W h, σ²)``; the hidden units are auxiliary and redrawn
    whenever another step changed the point; other terms as in
    :class:`GaussianStep`. Exact, but on a mixture whose components lie far
    apart it moves between them as rarely as NUTS does:
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

    True for a free :class:`~pymc_rbm.gaussian.distribution.GaussianRBM` variable whose
    parameters are constants or data and whose other model terms, if any,
    are per-unit evidence (:func:`~pymc_rbm.step_methods.structure.factorisation`: elementwise readings of the
    units, readings by constant indices or slices such as ``v[:, :3]``, and sums of them such as a summed
    ``pm.Potential``), which the cold replica's sweeps take in as a tilt (:class:`GaussianStep`).
    Where another term couples the units, the step would propose from the
    RBM alone and accept by ``L``, which an informative likelihood rarely
    accepts: NUTS samples that posterior instead.
    """
    if not is_gaussian_rbm_variable(var) or random_ancestors(*gaussian_params_of(var)):
        return False
    model = free_in_model(var, model)
    if model is None:
        return False
    return not other_terms_involve(model, var) or other_terms_are_unit_evidence(model, var)


class GaussianReplicaExchange(LadderStep, GaussianStep):
    """Replica exchange (parallel tempering) of a :class:`~pymc_rbm.gaussian.distribution.GaussianRBM` variable.

    Replica ``r`` samples ``p_{β_r}(v, h) ∝ exp(-β_r E(v, h))``, ``1 = β_0 > … > β_{R-1} > 0``,
    by block Gibbs at its β (:class:`~pymc_rbm.gaussian.params.GaussianAtBeta`:
    ``v | h ~ N(b + σ ∘ W h, σ²/β)``, ``h | v ~ Bernoulli(sigmoid(β (c + (v/σ)·W)))``);
    neighbours swap their joint states ``(v, h)`` with probability
    ``min(1, exp((β_r - β_{r+1}) (E(x_r) - E(x_{r+1}))))``, even and odd
    pairs on alternate rounds, and the ladder is adapted in tuning to equal
    swap rates (:class:`~pymc_rbm.step_methods.layer_ladder.LadderStep`, shared
    with the categorical replica exchange). At small β the components of
    the mixture widen (standard deviation ``σ / √β``) and their weights
    flatten, so the hot replicas cross between them and the swaps bring the
    crossings down to ``β = 1``.

    ``pm.sample`` picks it (``IDEAL``) for GaussianRBM variables with
    constant parameters whose other terms, if any, are per-unit evidence
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
    """Add the Gaussian steps to ``pymc.step_methods.STEP_METHODS`` (once), after the binary and categorical ones.

    :func:`pymc_rbm.step_methods.register` calls it when :mod:`pymc_rbm.step_methods` is imported.
    """
    from pymc.step_methods import STEP_METHODS

    for method in (GaussianReplicaExchange, GaussianGibbs):
        if method in STEP_METHODS:
            STEP_METHODS.remove(method)
        STEP_METHODS.append(method)
