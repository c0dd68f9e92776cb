"""Replica exchange for the steps of the other layer types: :class:`LadderStep` on a ladder adapted in tuning.

:class:`LadderStep` is :class:`~pymc_rbm.step_methods.layer_base.LayerStep`
(the categorical and Gaussian steps' adapter) with hot replicas at inverse
temperatures ``β_1 > … > β_{R-1}`` beside the cold one, swapped between
neighbours by the exact ratio of their targets; the ladder starts geometric
(:func:`initial_ladder`) and is equalised during tuning, then frozen.
"""

from __future__ import annotations

from dataclasses import field

import numpy as np
from pymc.step_methods.state import dataclass_state

from pymc_rbm.kernels.layer import GIBBS
from pymc_rbm.kernels.state import RBMState
from pymc_rbm.kernels.sweep import sweep
from pymc_rbm.kernels.tempering import (
    equalized_ladder,
    exchange_pairs,
    rungs_for_barrier,
    swap_pairs,
    tempered_log_ratio,
)
from pymc_rbm.layers import BERNOULLI
from pymc_rbm.step_methods.layer_base import LayerStep, LayerStepState
from pymc_rbm.validation import check_positive_int

__all__ = ["LadderStep", "LadderStepState", "initial_ladder"]

def initial_ladder(betas, n_replicas: int, beta_min: float) -> np.ndarray:
    """The ladder a replica-exchange step starts from: ``betas`` checked, or ``n_replicas`` rungs geometric to ``beta_min``.

    Returns
    -------
    ndarray of shape (n_replicas,)
        Decreasing from 1.
    """
    if betas is None:
        n_replicas = check_positive_int(n_replicas, "n_replicas", 2)
        if not 0.0 < float(beta_min) < 1.0:
            raise ValueError(f"beta_min must lie in (0, 1), got {beta_min!r}")
        betas = np.geomspace(1.0, float(beta_min), n_replicas)
    betas = np.asarray(betas, dtype=np.float64).reshape(-1)
    if betas.size < 2 or betas[0] != 1.0 or not np.all(np.diff(betas) < 0) or betas[-1] < 0:
        raise ValueError(f"betas must decrease from 1 to a value >= 0 with at least 2 rungs, got {betas.tolist()}")
    return betas


@dataclass_state
class LadderStepState(LayerStepState):
    """:class:`LayerStepState` and the ladder: ``betas``, the hot replicas ``hot_visible`` and
    ``hot_hidden`` (shape ``((n_replicas - 1) * n_chains, n)``), the round count whose parity picks the swaps,
    the swap counts since the last adaptation, the draws done and the tuning draws at which the ladder adapts."""

    betas: np.ndarray | None = field(default=None)
    hot_visible: np.ndarray | None = field(default=None)
    hot_hidden: np.ndarray | None = field(default=None)
    n_rounds: int = field(default=0)
    swap_accepted: np.ndarray | None = field(default=None)
    swap_proposed: np.ndarray | None = field(default=None)
    draws_done: int = field(default=0)
    adapt_at: set | None = field(default=None)


class LadderStep(LayerStep):
    """Replica exchange (parallel tempering) of one RBM variable on a ladder adapted in tuning.

    Replica ``r`` samples ``p_{β_r}(v, h) ∝ exp(-β_r E(v, h))`` with
    ``β_0 = 1 > β_1 > … > β_{R-1}``; the cold replica is the variable, and it
    alone carries the other model terms ``L(v)`` (its visible moves are
    corrected as in :class:`LayerStep`). A round sweeps every replica through
    the engine at its β (one sweep of all rows, β per row: the target of
    :meth:`_ladder_target`) and then proposes to swap the joint states of
    neighbours, pairs ``(0, 1), (2, 3), …`` on even rounds and ``(1, 2), (3, 4), …``
    on odd ones (Syed, Bouchard-Côté, Deligiannidis & Doucet 2022), each
    accepted with ``min(1, exp((β_r - β_{r+1}) (E(x_r) - E(x_{r+1}))))``, times
    ``L(v_1) / L(v_0)`` for the pair that involves the cold replica. Every
    round leaves ``π(x_0) Π_{r>0} p_{β_r}(x_r)`` invariant, so the cold
    replica samples the full conditional ``∝ p_RBM(v) L(v)``; the hot replicas
    are auxiliary state, kept between draws (their targets do not depend on
    the point: the parameters must be constants or data) and redrawn at each
    chain's start.

    The ladder is adapted at tuning draws ``tune/4`` and ``tune/2``: the swap
    rejection rates give the communication barrier ``Λ`` and the new ladder
    has ``ceil(2Λ) + 1`` rungs (at least as many as the initial ladder, at
    most ``max_replicas``) between 1 and ``β_min``, spaced evenly in ``Λ``
    (:func:`~pymc_rbm.kernels.tempering.equalized_ladder`); the hot replicas
    then restart and burn in during the rest of tuning. With ``tune < 40`` the
    initial ladder is kept. Subclasses implement :meth:`_ladder_target` and
    :meth:`_energy`.

    Parameters
    ----------
    betas, n_replicas, beta_min
        The initial ladder (:func:`initial_ladder`).
    max_replicas : int, default 32
        Most rungs the adaptation may choose.
    **kwargs
        As for :class:`LayerStep`.
    """

    _state_class = LadderStepState

    def __init__(self, vars=None, *, betas=None, n_replicas: int = 8, beta_min: float = 0.05,
                 max_replicas: int = 32, **kwargs):
        betas = initial_ladder(betas, n_replicas, beta_min)
        self.initial_betas = betas
        self.betas = betas.copy()
        self.max_replicas = check_positive_int(max_replicas, "max_replicas", 2)
        self.adapt_at: set = set()
        self.draws_done = 0
        super().__init__(vars, **kwargs)
        if self._param_fn is not None:
            raise ValueError(
                f"{type(self).__name__} needs constant parameters (or data): the hot replicas are kept between "
                "draws; sample random parameters with a step that sweeps the cold chain alone"
            )
        self._reset_replicas()

    # ------------------------------------------------------------ what a layer type says
    def _ladder_target(self, betas_per_row: np.ndarray):
        """The sweep target of all replicas' rows, β per row (``(R n_chains,)``, cold rows first)."""
        raise NotImplementedError

    def _energy(self, V: np.ndarray, Hh: np.ndarray) -> np.ndarray:
        """``E(v, h)`` of every row, shape (rows,)."""
        raise NotImplementedError

    # ------------------------------------------------------------ the ladder
    def _reset_replicas(self):
        self.hot_visible = self.hot_hidden = None
        self.n_rounds = 0
        self.swap_accepted = np.zeros(self.betas.size - 1)
        self.swap_proposed = np.zeros(self.betas.size - 1)

    def setup_chain(self, rng, tune: int, draws: int) -> None:
        super().setup_chain(rng, tune, draws)
        self.betas = self.initial_betas.copy()
        self.draws_done = 0
        self.adapt_at = {tune // 4, tune // 2} if tune >= 40 else set()
        self._reset_replicas()

    def _adapt(self) -> None:
        """Respace the ladder evenly in the communication barrier measured since the last adaptation."""
        rates = self.swap_rates
        if not np.all(np.isfinite(rates)):
            return
        total = float(np.sum(1.0 - rates))  # Λ
        n = rungs_for_barrier(total, self.max_replicas, min(self.initial_betas.size, self.max_replicas))
        betas = equalized_ladder(self.betas[::-1], (1.0 - rates)[::-1], n)[::-1]  # the kernel's ladders increase
        if np.all(np.diff(betas) < 0):
            self.betas = np.ascontiguousarray(betas)
        self._reset_replicas()

    @property
    def swap_rates(self) -> np.ndarray:
        """Acceptance rate of the swaps of each neighbouring pair so far in the chain, shape (n_replicas - 1,)."""
        with np.errstate(invalid="ignore"):
            return self.swap_accepted / self.swap_proposed

    def _product_rows(self) -> int:
        return self._n_chains * self.max_replicas

    def _step(self, point):
        self._point = point
        if self.draws_done in self.adapt_at:
            self._adapt()
        self.draws_done += 1
        return super()._step(point)

    # ------------------------------------------------------------ a round
    def _target(self):
        return self._tilted(self._ladder_target(np.repeat(self.betas, self._n_chains)))

    def _draw(self, v, h, accept):
        R, n = self.betas.size, self._n_chains
        if h is None:  # the cold replica's h, redrawn from p(h | v)
            h, _ = BERNOULLI.update(self.rng, None, self.target.hidden_input(v), GIBBS)
        if self.hot_visible is None:
            self.hot_visible = self._random_visible(((R - 1) * n, self._shape[-1]))
            a = self.target.hidden_input(self.hot_visible) * self.betas[1:].repeat(n)[:, None]
            self.hot_hidden, _ = BERNOULLI.update(self.rng, None, a, GIBBS)
        target = self._target()
        V = np.concatenate([v, self.hot_visible])
        Hh = np.concatenate([h, self.hot_hidden])

        def accept_cold(v_old, v_new):
            if accept is not None:
                v_new[:n] = accept(v_old[:n], v_new[:n].copy())
            return v_new

        for _ in range(self.sweeps):
            state, _ = sweep(self.rng, RBMState(V, Hh), target, self.rule, accept=accept_cold)
            V, Hh = state.v, state.h
            self._swap(V, Hh, n, accept)
        self.hot_visible, self.hot_hidden = V[n:], Hh[n:]
        return V[:n], Hh[:n]

    def _swap(self, V, Hh, n, accept):
        """One round of neighbour swaps (even or odd pairs, all decided in one call), in place on the replicas."""
        R, betas = self.betas.size, self.betas
        first = self.n_rounds % 2
        self.n_rounds += 1
        pairs = swap_pairs(R, first)
        if pairs.size == 0:
            return
        log_ratio = tempered_log_ratio(betas, self._energy(V, Hh).reshape(R, n))  # (R - 1, n)
        if first == 0 and accept is not None:  # L evaluated (a tilt, if any, is only the cold sweeps' proposal)
            log_ratio[0] += self._log_rest_change(V[:n], V[n : 2 * n])
        elif first == 0 and self.evidence is not None:  # L is the exact tilt
            log_ratio[0] += self._evidence_change(V[:n], V[n : 2 * n])
        by_rung = [x.reshape(R, n, *x.shape[1:]) for x in (V, Hh)]  # views of contiguous arrays
        took = exchange_pairs(self.rng, *by_rung, log_ratio, pairs)
        for x, y in zip((V, Hh), by_rung):
            if not np.shares_memory(x, y):  # reshape copied a strided array: write the swaps back
                x[...] = y.reshape(x.shape)
        self.swap_proposed[pairs] += n
        self.swap_accepted[pairs] += took[pairs].sum(axis=1)
        if first == 0 and accept is not None and took[0].any():  # the correction's current state moved with the swap
            self._current["v"][:] = V[:n].astype(self._out_dtype)
            self._current["log"] = None

    def _evidence_change(self, v_cold, v_new) -> np.ndarray:
        """``log L(v') - log L(v)`` per row from per-unit evidence (steps that tilt it implement this)."""
        raise NotImplementedError

    def _log_rest_change(self, v_cold, v_new) -> np.ndarray:
        """``log L(v'_k) - log L(v_k)`` per row ``k`` when row ``k`` of the cold replica alone becomes ``v'_k``.

        Where ``L`` factorises over the rows (or the variable has one row) the
        rows' swaps are independent; otherwise the swap is refused with an error.
        """
        shape, dt = self._shape, self._out_dtype
        cur = v_cold.astype(dt)
        if self._row_terms:
            stack = np.stack([cur.reshape(shape), v_new.astype(dt).reshape(shape)])
            values = self.other_terms.row_values(self._point, stack)
            with np.errstate(invalid="ignore"):
                return np.where(values[0] == -np.inf, np.inf, values[1] - values[0])
        if cur.shape[0] == 1:
            old = self.other_terms.log_rest(self._point, cur.reshape(shape))
            new = self.other_terms.log_rest(self._point, v_new.astype(dt).reshape(shape))
            return np.array([np.inf if old == -np.inf else new - old])
        raise ValueError(
            f"{type(self).__name__}: other model terms involve several rows of the variable jointly; swaps "
            "with the cold replica need them to factorise over rows (use a step that sweeps the cold chain alone)"
        )
