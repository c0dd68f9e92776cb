"""Replica exchange along a ladder of models inside ``pm.sample``: parallel trajectory tempering.

:class:`ModelLadder` keeps, for every chain, one replica per model of a
sequence of binary RBMs on the same visible units, the last of which is the
RBM variable's own model. Such a sequence is what training passes through:
:func:`~pymc_rbm.training.fit` keeps the parameters at the updates of its
``save_updates`` in ``result.trajectory``, from the almost independent
starting model to the trained one (Béreux, Decelle, Furtlehner & Seoane
2025, "parallel trajectory tempering"; Fernandez-de-Cossio-Diaz, Roussel,
Cocco & Monasson 2024, stacked tempering). The early models have no sharp
modes and mix in a few sweeps, and each model is close to the next, so a
replica carries states from the easy end to the target and back. Tempering
in ``β`` from a flat reference meets a first-order transition on RBMs
trained on clustered data, which the training trajectory avoids: the
models' modes appear one after the other, as they did in training.

**The invariant target.** ``Π(x_0, ..., x_{K-1}) = Π_r p_r(v_r, h_r)``, the
last factor being the RBM variable's distribution; every round leaves it
invariant (:mod:`pymc_rbm.kernels.model_ladder`, with the exact check on
enumerable ladders in ``tests/kernels/test_model_ladder.py``): each replica
is swept by its own model's operator (flip-the-state by default), and
neighbouring models exchange their visible states with the Metropolis ratio
``exp(F_a(v_a) + F_b(v_b) - F_a(v_b) - F_b(v_a))`` of their own free
energies (the hidden units summed out, so the models may have different
numbers of hidden units), the swapped replicas drawing fresh hidden units.
The draws returned to PyMC are the last rung's visible states.

**What it refuses.** The models are fixed arrays, so the RBM variable's
weights and biases must be constants or data, and equal to the last model's
(a clear error otherwise). Other model terms that involve the visible units
(a likelihood, a Potential) are refused: the ladder here samples the RBM
alone. Use :class:`~pymc_rbm.step_methods.ReplicaExchange` for those, which
corrects the cold replica's moves by the other terms.

**The rungs** are chosen by equal swap rejection. With ``rungs="auto"``
a pilot runs every given model for :data:`PILOT_ROUNDS` rounds (at most the
first quarter of the tune phase); each rung's newest visible states are kept,
the rejection rate of every pair of models as
neighbours is estimated from them
(:class:`~pymc_rbm.kernels.model_ladder.PairRejection`), the communication
barrier ``Λ`` is the sum of the neighbouring rates along the full ladder,
and ``⌈2Λ⌉ + 1`` models (Syed, Bouchard-Côté, Deligiannidis & Doucet 2022),
the first and the last among them, are kept so that the largest
neighbouring rejection is as small as it can be
(:func:`~pymc_rbm.kernels.model_ladder.equal_rejection_rungs`). The rungs
are frozen from then on, so the draws come from a time-homogeneous chain.

**Getting the trajectory.** ``fit`` keeps about 20 log-spaced models by
default; more, and evenly spread late in training, make a ladder with
smaller steps::

    result = fit(data, 100, method="pcd", k=10, n_updates=2000,
                 save_updates=np.unique(np.r_[log_spaced_updates(2000, 30), np.arange(0, 2001, 50)]))
    with pm.Model():
        v = RBM("v", result.params.W, result.params.vbias, result.params.hbias)
        idata = pm.sample(step=ModelLadder([v], models=result.trajectory))

A list of :class:`~pymc_rbm.RBMParams` (saved checkpoints read with
``RBMParams.load``) works as well.
"""

from __future__ import annotations

import numbers

import numpy as np
from pymc.step_methods.compound import Competence

from pymc_rbm.energy import hidden_activation
from pymc_rbm.kernels.compiled import same_values
from pymc_rbm.kernels.layer import GIBBS
from pymc_rbm.kernels.model_ladder import (
    ModelRungs,
    equal_rejection_rungs,
    init_model_ladder,
    model_ladder_round,
    model_rungs,
    PairRejection,
    rung_free_energies,
)
from pymc_rbm.kernels.operators import operator_rule
from pymc_rbm.kernels.tempering import rungs_for_barrier
from pymc_rbm.step_methods.base import RBMStep

__all__ = ["ModelLadder"]

#: Visible states kept per rung (the newest) in the pilot phase of ``rungs="auto"``, to estimate the pairs'
#: rejection: every pairing of two rungs' states is used, so a few dozen give a smooth estimate.
PILOT_SAMPLES = 64
#: Rounds of the pilot on every given model (it ends sooner at :data:`PILOT_FRACTION` of the tune phase).
PILOT_ROUNDS = 400
#: The largest fraction of the tune phase run on every given model before the rungs are chosen.
PILOT_FRACTION = 0.25


class ModelLadder(RBMStep):
    """Replica exchange along a ladder of RBMs (parallel trajectory tempering) for one RBM variable.

    Never chosen by ``pm.sample`` by itself: it needs the user's models.
    See the module docstring for the target, what it refuses and the rungs.

    Parameters
    ----------
    vars : RBM variable or list of one, optional
    models : Trajectory or sequence of RBMParams
        At least two binary RBMs on the variable's visible units, the last
        one equal to the variable's own weights and biases; ``fit(...).trajectory``.
        Any numbers of hidden units.
    operator : {"flip", "gibbs"} or float in [0, 1], default "flip"
        The sweep of every replica at its model.
    rungs : "auto", "all", int or sequence of int, default "auto"
        Which models become rungs: chosen by equal swap rejection in tuning
        (``"auto"``: about ``2Λ + 1`` of them; an int: that many), every model
        (``"all"``), or these indices (increasing, from 0 to the last model).
        Without a tune phase of at least 8 draws ``"auto"`` and an int keep every model.
    rounds : int or "auto", default "auto"
        Rounds (a sweep of every replica and a swap round) per draw; ``"auto"``:
        as many as there are rungs, so a replica can cross the ladder between draws.
    sweeps : int, default 1
        Sweeps of every replica per round.
    model, rng, initial_point, compile_kwargs, blocked, compiled, random_start, record_hidden
        As for every RBM step method (:class:`~pymc_rbm.step_methods.base.RBMStep`).

    Notes
    -----
    Sampler stats, besides those of :class:`~pymc_rbm.step_methods.FlipTheState`
    (of the last rung): ``n_temperatures`` (rungs in use), ``swap_accept``
    (mean acceptance probability of the swaps attempted in the draw),
    ``swap_accept_pairs`` (per pair of rungs, NaN-padded to the number of
    models given), ``rungs`` (the indices of the models in use, padded with
    -1) and ``round_trips`` (cumulative round trips from the first rung to the
    last and back, counted anew after tuning). The names are those of
    :class:`~pymc_rbm.step_methods.ReplicaExchange`, so the same stuck-chain
    checks run after sampling.

    Examples
    --------
    >>> import numpy as np
    >>> import pymc as pm
    >>> from pymc_rbm import RBM, RBMParams
    >>> from pymc_rbm.step_methods.model_ladder import ModelLadder
    >>> target = RBMParams.random(6, 4, scale=3.0, rng=0)
    >>> models = [RBMParams(t * target.W, t * target.vbias, t * target.hbias) for t in (0.0, 0.5, 1.0)]
    >>> with pm.Model():
    ...     v = RBM("v", target.W, target.vbias, target.hbias)
    ...     idata = pm.sample(draws=50, tune=50, chains=1, step=ModelLadder([v], models=models, rungs="all"),
    ...                       progressbar=False, compute_convergence_checks=False, random_seed=1)
    >>> int(idata.sample_stats["n_temperatures"].max())
    3
    """

    name = "model_ladder"

    def __init__(self, vars=None, *, models, operator="flip", rungs="auto", rounds="auto", sweeps: int = 1,
                 **kwargs):
        self._all_rungs = model_rungs(models)
        self.operator = operator
        self.rule = operator_rule(operator)
        self.keeps_hidden = self.rule is not GIBBS
        self.auto_rounds = isinstance(rounds, str) and rounds == "auto"
        if not self.auto_rounds and (isinstance(rounds, (bool, str)) or not isinstance(rounds, numbers.Integral)
                                     or rounds < 1):
            raise ValueError(f'rounds must be "auto" or an integer >= 1, got {rounds!r}')
        self.rounds = None if self.auto_rounds else int(rounds)
        self.rung_choice = self._check_rungs(rungs, self._all_rungs.n_rungs)
        super().__init__(vars, sweeps=sweeps, **kwargs)
        if self._param_fn is not None:
            raise ValueError(
                f"ModelLadder needs the weights and biases of {self._name!r} to be constants or data: its models "
                "are fixed arrays. Use FlipTheState or BlockGibbs for an RBM with random parameters."
            )
        if self.corrected:
            raise ValueError(
                f"ModelLadder samples the RBM {self._name!r} alone, but other model terms involve its visible units "
                f"({', '.join(self.rest_terms)}); the ladder's moves are not corrected for them. Use "
                "ReplicaExchange, whose cold replica is corrected by those terms, or FlipTheState."
            )
        self._check_target()
        self._extend_stats()
        self._reset_ladder()

    # ------------------------------------------------------------ set-up
    @staticmethod
    def _check_rungs(rungs, n_models: int):
        if isinstance(rungs, str):
            if rungs not in ("auto", "all"):
                raise ValueError(f'rungs must be "auto", "all", a number of rungs or model indices, got {rungs!r}')
            return rungs
        if isinstance(rungs, numbers.Integral) and not isinstance(rungs, bool):
            if not 2 <= rungs <= n_models:
                raise ValueError(f"rungs = {rungs}: a ladder of the {n_models} models given has 2 to {n_models} rungs")
            return int(rungs)
        idx = np.asarray(rungs)
        if (idx.ndim != 1 or idx.size < 2 or not np.issubdtype(idx.dtype, np.integer) or idx[0] != 0
                or idx[-1] != n_models - 1 or np.any(np.diff(idx) <= 0)):
            raise ValueError(f"rungs as model indices must increase from 0 to {n_models - 1} (the target), got {rungs!r}")
        return idx.astype(np.int64)

    def _check_target(self) -> None:
        """The last model must be the RBM variable's own parameters."""
        last = self._all_rungs.params[-1]
        own = self.params
        if last.W.shape != own.W.shape:
            raise ValueError(
                f"the last model of the ladder must be the RBM variable {self._name!r} itself (the target), but it "
                f"has W of shape {last.W.shape} and the variable {own.W.shape}; pass models ending with the "
                "variable's parameters (fit(...).trajectory ends with fit(...).params)"
            )
        diff = max(float(np.abs(a - b).max(initial=0.0)) for a, b in zip(last, own))
        if diff != 0.0:
            raise ValueError(
                f"the last model of the ladder must be the RBM variable {self._name!r} itself (the target), but its "
                f"parameters differ from the variable's by up to {diff:.3g}; pass models ending with the variable's "
                "parameters (fit(...).trajectory ends with fit(...).params)"
            )

    @staticmethod
    def competence(var, has_grad=None):
        """``INCOMPATIBLE``: never chosen by ``pm.sample`` by itself (it needs the user's models)."""
        return Competence.INCOMPATIBLE

    def _extend_stats(self) -> None:
        m = self._all_rungs.n_rungs
        extra = {
            "n_temperatures": (np.int64, []),
            "swap_accept": (np.float64, []),
            "swap_accept_pairs": (object, [m - 1]),  # the NDArray trace stores vectors as objects
            "rungs": (object, [m]),
            "round_trips": (np.int64, []),
        }
        self.stats_dtypes_shapes = {**self.stats_dtypes_shapes, **extra}
        self.stats_dtypes = [{k: d for k, (d, _) in self.stats_dtypes_shapes.items()}]

    def _reset_ladder(self) -> None:
        """The rungs before tuning: the given indices, or every model (``"auto"`` and an int choose in tuning)."""
        choice = self.rung_choice
        self.rung_indices = choice if isinstance(choice, np.ndarray) else np.arange(self._all_rungs.n_rungs)
        self._rungs = self._subset(self.rung_indices)
        self._state = None
        self._pilot = None
        self._draw = 0
        self._tune = 0
        self._choose_at = 0

    def _subset(self, idx) -> ModelRungs:
        """The models ``idx`` as a ladder, their arrays packed anew for the one-call compiled round."""
        r = self._all_rungs
        if len(idx) == r.n_rungs:
            return r
        return model_rungs([r.params[i] for i in idx])

    def setup_chain(self, rng, tune: int, draws: int) -> None:
        """Take the chain's generator, start a fresh ladder, plan the choice of rungs."""
        super().setup_chain(rng, tune, draws)  # re-reads parameters given as data
        self._check_target()
        self._reset_ladder()
        self._tune = int(tune)
        choosing = self.rung_choice == "auto" or isinstance(self.rung_choice, int)
        if choosing and tune >= 8:
            self._choose_at = max(int(tune * PILOT_FRACTION), 4)
            self._pilot = [[] for _ in range(self._all_rungs.n_rungs)]

    @RBMStep.sampling_state.setter
    def sampling_state(self, state) -> None:
        """Resume: the generator and the hidden state; the replicas start again from the point."""
        RBMStep.sampling_state.fset(self, state)
        self._state = None

    @property
    def n_temperatures(self) -> int:
        """Number of rungs in use."""
        return self._rungs.n_rungs

    # ------------------------------------------------------------ the draw
    def _top_from_point(self, v_in) -> bool:
        """Bring the last rung up to the point's ``v``; True when the replicas were made or its ``h`` redrawn."""
        if self._state is None:
            self._state = init_model_ladder(self.rng, v_in, self._rungs)
            return True
        s = self._state
        if same_values(v_in, s.v[-1]):
            return False
        v = s.v.copy()
        v[-1] = v_in
        a_top = hidden_activation(v[-1], self._rungs.params[-1])
        h_top = GIBBS.update(self.rng, None, a_top)[0]
        self._state = s._replace(v=v, h=(*s.h[:-1], h_top), hidden_input=(*s.hidden_input[:-1], a_top))
        return True

    def _product_rows(self) -> int:
        return self._n_chains * self._all_rungs.n_rungs

    def _step(self, point):
        """One draw: ``rounds`` rounds of sweeps and swaps along the ladder (stochastic); chooses rungs in tuning."""
        point = self._chain_start(point)
        self._draw += 1
        n = self._n_chains
        v_in = point[self._name].reshape(n, self.n_visible)
        refreshed = self._top_from_point(v_in)
        k = self.n_temperatures
        v_start, h_start = self._state.v[-1].copy(), self._state.h[-1].copy()
        swap_sum, swap_n = np.zeros(k - 1), np.zeros(k - 1)
        rounds = k if self.auto_rounds else self.rounds
        for _ in range(rounds):
            self._state, info = model_ladder_round(self.rng, self._state, self._rungs, rule=self.rule,
                                                   sweeps=self.sweeps, compiled_sweeps=self.compiled)
            tried = info.swap.attempted
            swap_sum[tried] += info.swap_accept[tried].sum(axis=1)
            swap_n[tried] += n
            if self._pilot is not None:
                self._record_pilot()
        s = self._state
        v_top = s.v[-1]
        v_out = v_top.astype(self._out_dtype)
        fe = rung_free_energies(v_top, s.hidden_input[-1], self._rungs.params[-1])
        stats = self._chain_stats(fe, (v_top != v_start).sum(axis=-1), (s.h[-1] != h_start).sum(axis=-1),
                                  self._ones, self._ones, refreshed)
        if self.record_hidden:
            stats["hidden"] = s.h[-1].astype(np.int8).reshape(-1)
        stats.update(self._ladder_stats(swap_sum, swap_n))
        if self._pilot is not None and self._draw <= self._tune and (
                self._draw >= self._choose_at or self._draw * rounds >= PILOT_ROUNDS):
            self._choose_rungs()
        elif self._draw == self._tune:  # round trips of the frozen ladder only
            self._state = self._state._replace(round_trips=0, trip_ends=np.zeros_like(s.trip_ends),
                                               trip_up=np.zeros_like(s.trip_up))
        out = point.copy()
        out[self._name] = v_out.reshape(self._shape)
        return out, [stats]

    def _ladder_stats(self, swap_sum, swap_n) -> dict:
        m = self._all_rungs.n_rungs
        pairs = np.full(m - 1, np.nan)
        tried = swap_n > 0
        pairs[: swap_n.size][tried] = swap_sum[tried] / swap_n[tried]
        rungs = np.full(m, -1, dtype=np.int64)
        rungs[: self.n_temperatures] = self.rung_indices
        return {
            "n_temperatures": self.n_temperatures,
            "swap_accept": float(swap_sum.sum() / swap_n.sum()) if swap_n.sum() else np.nan,
            "swap_accept_pairs": pairs,
            "rungs": rungs,
            "round_trips": int(self._state.round_trips),
        }

    # ------------------------------------------------------------ tuning
    def _record_pilot(self) -> None:
        """Keep the newest visible states of every rung (the pilot runs every model)."""
        for r, kept in enumerate(self._pilot):
            kept.append(self._state.v[r].copy())
            if len(kept) * self._n_chains > PILOT_SAMPLES:
                kept.pop(0)

    def _choose_rungs(self) -> None:
        """Keep the models whose neighbouring swaps reject about equally, from the pilot's draws (tuning only)."""
        samples = [np.concatenate(kept) for kept in self._pilot]
        self._pilot = None
        rejection = PairRejection(self._all_rungs, samples)
        m = self._all_rungs.n_rungs
        self.barrier_estimate = float(sum(rejection(i, i + 1) for i in range(m - 1)))
        if isinstance(self.rung_choice, int):
            n = self.rung_choice
        else:
            n = rungs_for_barrier(self.barrier_estimate, m)
        idx = equal_rejection_rungs(rejection, n)
        s = self._state
        self._state = init_model_ladder(self.rng, s.v[idx], self._subset(idx))
        self.rung_indices = idx
        self._rungs = self._subset(idx)
