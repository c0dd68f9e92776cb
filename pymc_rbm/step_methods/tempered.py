"""Replica exchange for RBM variables inside ``pm.sample``, with likelihood-informed moves of the cold replica.

:class:`ReplicaExchange` keeps, for every chain, replicas of the visible and
hidden units on a ladder of inverse temperatures ``0 <= β_0 < ... <
β_{K-1} = 1``. The cold replica (``β = 1``) is the model's variable; the
others are auxiliary state of the step, like the hidden units.

**The invariant target.** With ``L(v)`` the model terms other than the
RBM's own that involve ``v`` (likelihoods, factors, Potentials) and ``θ``
every other variable of the model, the step leaves

    Π(θ, x_0, ..., x_{K-1}) = p(θ) p_RBM(x_{K-1}) L(v_{K-1}; θ) · Π_{r < K-1} p_{β_r}(x_r),

invariant, where ``x_r = (v_r, h_r)`` and ``p_β(x) ∝ exp(-β E(x) + (1 - β) b·v)``
is the RBM alone at inverse temperature ``β`` on the annealing path from a
reference, independent visible units with biases ``b``, to the RBM (the path
of :class:`~pymc_rbm.estimators.AnnealingPath`, below). Its marginal in ``(θ, v_{K-1})`` is
the model's posterior. The hot replicas' targets involve neither ``θ`` nor
``L`` (this is why the step refuses RBMs whose weights or biases are random
variables: their hot targets would depend on ``θ`` through ``log Z``), so
the conditional of ``θ`` given everything else is the model's own, and NUTS
or any other step on ``θ`` stays exact next to this one. Each draw is
``sweeps`` rounds of

1. **The sweeps of every replica** (one each, or ``n_r`` at rung ``r``:
   the explorers' sweeps, adapted in tuning where a rung does not relax in
   one sweep and then frozen; :mod:`pymc_rbm.step_methods.ladder`). Hot
   replicas: the RBM kernel (Gibbs, flip-the-state or their α mixture) at
   their ``β``, invariant for ``p_β``, so any number of them is. Cold replica: the hidden update given ``v`` (``L`` does not
   involve ``h``), then the visible update. When ``L`` exists the visible
   update is a Metropolis-Hastings move for ``π(v | h) ∝ p_RBM(v | h) L(v)``:
   by default the tilted proposal of :mod:`pymc_rbm.kernels.informed`
   (each unit's logit shifted by the exact change of ``log L`` when that
   unit alone flips; accepted with the ratio of
   :func:`~pymc_rbm.kernels.informed.tilted_log_ratio`), or with
   ``informed=False`` the RBM's own layer update accepted with
   ``min(1, L(v') / L(v))`` (:mod:`pymc_rbm.step_methods.base`).
2. **A swap round** (Syed, Bouchard-Côté, Deligiannidis & Doucet 2022,
   non-reversible): even rounds propose to exchange the pairs ``(0, 1),
   (2, 3), ...``, odd rounds ``(1, 2), (3, 4), ...``, each with the
   Metropolis ratio of ``Π``. For hot pairs it is
   ``exp((β_{r+1} - β_r)(U_{r+1} - U_r))`` with ``U = E + b·v``; the pair that includes the cold
   replica gains the factor ``L(v_{K-2}) / L(v_{K-1})``. When ``L`` exists
   the ladder of the RBM runs from ``β_0`` to 1 and the cold replica sits
   above its top rung (both at ``β = 1``), so that pair's ratio is the
   likelihood ratio alone: the ladder tempers the RBM, the last step adds
   the evidence. Each round is a
   product of Metropolis moves on disjoint pairs, so it leaves ``Π``
   invariant; the deterministic alternation makes the index process
   non-reversible, so replicas cross the ladder in ``O(K)`` rounds rather
   than ``O(K²)``.

**The reference.** At ``β = 0`` the ladder starts from independent units,
``exp(b·v + c·h)``, and rung ``r`` targets ``exp(-β_r E(v, h) + (1 - β_r)(b·v +
c·h))``: one sweep draws the bottom rung exactly. With ``b = c = 0``
(``reference="zero"``) it is the uniform distribution, the classical ladder
in ``β``, which on RBMs trained on clustered data meets a first-order
transition (Béreux, Decelle, Furtlehner & Seoane 2025): on the MNIST RBMs no
replica crossed it. ``"mean_field"`` is the RBM's naive mean-field product on
both layers (:func:`~pymc_rbm.estimators.base_rate.mean_field_fields`): each
unit in the field the other layer's magnetisations give it, so that along the
path the hidden layer keeps about the distribution it has in the model
(with the visible layer alone in the reference, the hidden units start as
fair coins and most of the ladder's rungs went to them: mnist_h500 needed 16
rungs, 12 of them before the transition, and needs 9 with the hidden fields).
Where the mean-field solution is not clear (another fixed point within
``MEAN_FIELD_CLEAR_GAP`` nats of its bound, as for the symmetric patterns of
the bundled bars-and-stripes model) the product would stand for one pattern
of several, and the reference is the visible magnetisations alone, as the
estimators' AIS starts without data
(:func:`~pymc_rbm.estimators.base_rate.base_rate_vbias`); a user with data
can pass the data's base rate, ``base_rate_vbias(params, data)``, as ``b``.
Neither the uniform nor the mean-field reference is right for every RBM: on
the MNIST RBMs the mean-field one lowers ``Λ`` and replicas that never
crossed the uniform ladder cross it; on bars and stripes its solution sits in
one pattern and no replica crosses (docs/benchmarks.md). So by default
(``reference="auto"``) tuning measures: the first adaptation window runs the
uniform reference, the second the mean-field one on the same ladder, and the
one with the lower barrier ``Λ`` is kept (with its measured rejection rates)
for the rest of the run; the ladder collapses (below) only if the uniform
reference, which favours no mode, found the barrier low too. The reference
is the hot rungs' fields ``(1 - β_r) b`` and ``(1 - β_r) c``, untempered, so
the compiled rounds carry them as they carry per-unit evidence, and with
per-unit evidence (below) ``b`` adds to it. A ladder of the whole posterior
(below) starts from the uniform distribution.

A mixture of products, one per mode (``reference="mixture"``, or
:func:`~pymc_rbm.estimators.base_rate.mixture_reference` of data), lets
each mode grow out of its own component instead of out of one product:
rung ``r`` targets ``exp(-β_r E(v, h)) [w_z q_z(v, h)]^(1 - β_r)`` on states
that carry a component label ``z`` (:mod:`pymc_rbm.kernels.mixture_reference`).
Each round first redraws every replica's label from its conditional and the
bottom rung's whole state from the mixture, then sweeps each replica in its
label's fields, then swaps ``(v, h)`` with the labels summed out; the next
round's redraw restores the labels' conditionals. A low barrier does not
collapse such a ladder (its bottom rung is exact and close to the model).
A mode that no component covers has almost no mass below ``β = 1``. With
``reference="mixture"`` tuning refits the components to the modes the chain
visits (:mod:`pymc_rbm.step_methods.ladder`, "The mixture refitted").

**Tuning.** The ladder (its number of rungs, their spacing, its reference)
is adapted during PyMC's tune phase and frozen after it, so the draws come
from a time-homogeneous chain that leaves ``Π`` invariant
(:mod:`pymc_rbm.step_methods.ladder`).

**Tempering the whole posterior.** When ``L`` involves no free variable
but ``v`` and the variable is one chain, tuning may switch to a ladder of
``[p_RBM(v, h) L(v)]^β`` (:mod:`pymc_rbm.step_methods.cold`).

**Per-unit evidence: the RBM tempered, the evidence kept.** Where ``log L``
is a sum of terms that each involve one unit of one row (Gaussian or
Bernoulli readouts of every pixel; found from the model's graph by
:mod:`pymc_rbm.step_methods.structure`), ``L(v) ∝ exp(δ(θ)·v)`` row by row
with the per-unit evidence ``δ_{ki} = log L_{ki}(1) - log L_{ki}(0)``, which
may depend on other free variables ``θ``. Replica ``r`` then targets

    p_r(x) ∝ exp(-β_r E(x) + (1 - β_r) b·v + δ̂·v),      the cold replica  p(x) exp(δ(θ)·v),

an RBM whose visible units carry the evidence untempered: the bottom rung
(``β = 0``) is the evidence alone (times the reference, ``b = 0`` for the
uniform one), independent units drawn exactly by one sweep, and a row whose
posterior has several modes crosses between them there. The hot rungs' evidence ``δ̂`` is ``δ`` at the shared parameters where
the ladder was last adapted, frozen with it after tuning; when ``L`` involves
no free variable but ``v``, ``δ̂ = δ`` and the top rung is the cold replica,
else the cold replica sits above the top rung (both at ``β = 1``) and that
pair swaps with ``exp((δ(θ) - δ̂)·(v_a - v_b))``. The hot targets involve no
free variable, so ``θ``'s conditional is the model's own and NUTS on it stays
exact; neighbours swap with ``exp((β_{r+1} - β_r)(E_{r+1} - E_r) + (ev_{r+1} -
ev_r)·(v_r - v_{r+1}))`` (``ev`` a rung's evidence). Every replica's update is
the operator's exact layer update on its own logits, so nothing is
corrected, and the rounds of all rows and rungs run in one compiled call
(:func:`~pymc_rbm.kernels.replica_rounds.tempered_round`). The tuning measures
``Λ`` on this ladder: tempering is decided by the barrier of what is
sampled, the posterior of each row. A unit value that ``L`` rules out
(``δ = ±inf``) enters as ``±1e300``, whose probability is 0 in float64.

**Hidden refresh.** As for every RBM step: when the incoming point's ``v``
is not the one the step left, the cold replica's ``h`` is redrawn from
``p(h | v)`` before it is used.

A batch of chains (``shape=(B, n_visible)``) has one ladder per row. With
``L`` that factorises over the rows, ``L(v) = Π_k L_k(v_k)``, the cold
replicas of all rows move and swap at once, each accepted by its own
``L_k``, from a few vectorised evaluations of the row terms per round. Other
``L`` (terms that couple rows) is evaluated row by row, at the batch where
only that row changed (exact for any ``L``, as in
:mod:`pymc_rbm.step_methods.base`).
"""

from __future__ import annotations

import numbers

import numpy as np
from pymc.step_methods.compound import Competence
from pymc.step_methods.state import dataclass_state

from pymc_rbm.estimators.base_rate import mixture_reference
from pymc_rbm.kernels.mixture_reference import ProductMixture
from pymc_rbm.kernels.operators import build_operator, operator_alpha, operator_rule
from pymc_rbm.kernels.tempering import TemperedState, check_ladder, uniform_ladder
from pymc_rbm.params import RBMParams
from pymc_rbm.step_methods.base import RBMStep, RBMStepState, has_constant_parameters
from pymc_rbm.step_methods.cold import ColdReplicaMoves
from pymc_rbm.step_methods.ladder import LadderAdaptation, LadderTuning
from pymc_rbm.step_methods.rounds import ReplicaRounds

__all__ = ["ReplicaExchange", "ReplicaExchangeState", "has_constant_parameters"]

#: Initial number of replicas when the ladder is adapted.
INITIAL_TEMPERATURES = 8
#: Largest flip-the-state weight of the informed proposal. Pure flip-the-state on tilted logits can leave
#: the corrected chain reducible (some states only reachable by moves whose way back is impossible, so
#: always rejected; found on exact matrices); a tenth of Gibbs keeps every move possible.
INFORMED_MAX_ALPHA = 0.9
#: Where the ladder starts (``ReplicaExchange(reference=...)``), besides visible biases given as an array.
REFERENCES = ("auto", "mean_field", "zero", "mixture")
#: Fractions of the tune phase after which the ladder is adapted.
ADAPT_AT = (1 / 16, 1 / 8, 1 / 4, 1 / 2)
#: ``explorer_sweeps`` besides an integer or one per rung.
EXPLORER_SWEEPS = ("auto",)


@dataclass_state
class ReplicaExchangeState(RBMStepState):
    """The sampling state of a :class:`ReplicaExchange` step: the replicas, the ladder and its bookkeeping.

    Besides :class:`~pymc_rbm.step_methods.base.RBMStepState`: ``betas`` and
    ``barrier`` (the ladder), ``replica_visible`` / ``replica_hidden`` (shape
    ``(n_replicas, n_chains, n)``) and ``replica_rounds`` (rounds so far, whose
    parity picks the next swaps), ``replica_labels``, ``trip_ends``,
    ``trip_up`` and ``round_trips`` (round-trip counting), ``swap_sum`` and
    ``swap_n`` (swap statistics since the last adaptation), ``ladder_draw``,
    ``ladder_tune`` and ``ladder_adapt_at`` (where the chain is in its tuning),
    ``posterior_ladder`` (whether the ladder tempers the whole posterior), ``ladder_tilt`` (the hot
    rungs' frozen evidence), ``reference_in_use`` and the ``reference_trial*`` fields (the reference
    and, with ``reference="auto"``, where its choice stands: -1 none, 0 and 1 measuring the uniform and
    the mean-field reference, 2 chosen, 3 back to the uniform one after the mean-field ladder carried
    nothing; the uniform reference's barrier, ladder and rejection rates),
    ``rung_sweeps`` (the explorers' sweeps per round, one per replica; frozen after tuning) and
    ``rung_energy_sums`` / ``rung_energy_n`` (the energy moments their adaptation measures, since the
    last adaptation), ``mixture`` (the mixture reference in use), ``mixture_refit`` (-1 none, 0 planned,
    1 keeping states, 2 refitted), ``mixture_states`` and ``mixture_states_start`` (the top rung's states kept
    for the refit, or for the restart of a product's ladder, from that draw on) and ``ladder_carries`` (False
    where the last adaptation found that the ladder carries almost no replica across and gave the cold replica
    the sweeps the explorers leave).
    """

    betas: np.ndarray | None = None
    barrier: float = np.nan
    replica_visible: np.ndarray | None = None
    replica_hidden: np.ndarray | None = None
    replica_rounds: int = 0
    replica_labels: np.ndarray | None = None
    trip_ends: np.ndarray | None = None
    trip_up: np.ndarray | None = None
    round_trips: int = 0
    swap_sum: np.ndarray | None = None
    swap_n: np.ndarray | None = None
    ladder_draw: int = 0
    ladder_tune: int = 0
    ladder_adapt_at: list | None = None
    posterior_ladder: bool = False
    ladder_tilt: np.ndarray | None = None
    reference_in_use: str = "zero"
    reference_trial: int = -1
    reference_trial_barrier: float = np.nan
    reference_trial_ladder: np.ndarray | None = None
    reference_trial_rejection: np.ndarray | None = None
    rung_sweeps: np.ndarray | None = None
    rung_energy_sums: np.ndarray | None = None
    rung_energy_n: np.ndarray | None = None
    mixture: ProductMixture | None = None
    mixture_refit: int = -1
    mixture_states: np.ndarray | None = None
    mixture_states_start: int = 0
    ladder_carries: bool = True


class ReplicaExchange(ReplicaRounds, ColdReplicaMoves, LadderTuning, RBMStep):
    """Replica exchange (parallel tempering) for one RBM variable, with informed moves of the cold replica.

    What ``pm.sample`` assigns to RBM variables with constant parameters.
    See the module docstring for the invariant target and the tuning.

    Parameters
    ----------
    vars : RBM variable or list of them, optional
    operator : {"flip", "gibbs"} or float in [0, 1], default "flip"
        The sweep of every replica: flip-the-state (Brügge, Fischer & Igel
        2013), block Gibbs, or their per-unit mixture weight α.
    betas : array_like, optional
        A fixed ladder of the RBM, strictly increasing and ending at 1 (with
        other model terms on ``v`` the cold replica is added above it; a
        one-rung ladder ``[1.0]`` is the cold replica alone). Default: start
        from ``INITIAL_TEMPERATURES`` evenly spaced rungs from 0 to 1 and
        adapt it during tuning.
    adapt : bool or LadderAdaptation, default True
        Adapt the ladder (number and spacing of rungs) during tuning; a
        :class:`~pymc_rbm.step_methods.ladder.LadderAdaptation` also sets the
        most replicas it may use (``max_temperatures``, 32) and the barrier
        under which it drops every hot replica (``collapse_below``, 1.5). A
        fixed ladder (``betas``) always has room for its own rungs.
    reference : {"auto", "mean_field", "zero", "mixture"}, array_like or ProductMixture, default "auto"
        Where the ladder starts at ``β = 0``: the RBM's naive mean-field
        product on both layers (its visible magnetisations alone where
        several fixed points are about as good), the uniform distribution
        (``"zero"``), independent visible units with these biases, shape
        ``(n_visible,)`` (e.g. the base rate of data,
        :func:`~pymc_rbm.estimators.base_rate.base_rate_vbias`), (``"auto"``)
        whichever of the first two tuning measures to have the lower barrier
        (the uniform one where the ladder cannot be adapted), or
        a mixture of products, one per mode of the model, each replica
        carrying its component's label (not with per-unit evidence): given,
        or (``"mixture"``) :func:`~pymc_rbm.estimators.base_rate.mixture_reference`
        of the model alone, refitted in tuning to the states the chain visits.
        A product's ladder that carries almost no replica across (RBM alone,
        one row, automatic sweeps) is restarted in tuning from the mixture of
        the modes its cold replica visited (``explorer_sweeps``).
        Module docstring, "The reference".
    informed : bool, default True
        With other model terms on ``v``, propose the cold replica's visible
        units by the operator's update on their logits tilted by those terms
        (exact flip differences, one vectorised evaluation of the terms per
        proposal; flip-the-state weight at most ``INFORMED_MAX_ALPHA``);
        where those terms are per-unit evidence, every replica carries it in
        its logits and no move needs correcting (module docstring).
        ``False`` uses the RBM's own update, accepted by the likelihood ratio.
    sweeps : int or "auto", default "auto"
        Rounds (the sweeps of every replica and a swap round) per draw;
        ``"auto"``: as many as the ladder has rungs, so that a replica can
        cross the ladder between two draws (one when it collapsed; without
        other terms on ``v`` the step is then
        :class:`~pymc_rbm.step_methods.FlipTheState`); where the explorers
        make more than one sweep (``explorer_sweeps``), ``round(K² / Σ_r n_r)``
        rounds, so that a draw still makes about ``K²`` sweeps and costs what
        it did (``rounds_per_draw``).
    explorer_sweeps : {"auto"} or int or array_like of int of shape (n_rungs,), default "auto"
        Sweeps each replica makes in a round before the swaps (its explorer;
        each sweep leaves the rung's target invariant, so the round stays
        exact). An integer: that many at every rung. An array: one per rung
        of the given ``betas`` (needs ``betas``; with other terms on ``v`` the
        cold replica's own move stays one per round). ``"auto"``: one per
        rung, adapted at each adaptation of the ladder from the lag-one
        autocorrelation ``ρ_r`` of the energy ``E(v, h)`` across one of the
        rung's sweeps measured since the last one: where ``ρ_r`` exceeds
        ``EXPLORER_STICKY`` (the rung does not relax in one sweep), to
        ``⌈log ρ* / log ρ_r⌉`` sweeps (at most ``EXPLORER_MAX_SWEEPS``,
        ``ρ* = EXPLORER_TARGET``: a round takes the rung's energy to a
        correlation of about ``ρ*``), elsewhere one,
        within a budget of ``EXPLORER_BUDGET`` sweeps per rung on average
        (:mod:`pymc_rbm.step_methods.ladder`), and frozen with the ladder
        when tuning ends. Where every rung decorrelates within one sweep the
        result is all ones, the round of one sweep per replica (so too without
        adaptation, ``adapt=False`` or fewer than 32 tuning draws). With
        ``sweeps="auto"`` too, the RBM alone, the last adaptation also sets the
        cold replica's sweeps: from a product reference, where the ladder made
        fewer than ``CARRY_MIN_SHARE`` of the round trips its barrier predicts,
        one sweep per hot rung and the rest of the draw's ``K²`` for the cold
        replica, a draw being one round (``ladder_carries`` False), and a
        single row first restarts its ladder from the modes the cold replica
        visited; from a mixture, as many as the hot rungs together
        (:mod:`pymc_rbm.step_methods.ladder`).
    model, rng, initial_point, compile_kwargs, blocked, compiled, random_start, record_hidden
        As for every RBM step method (:class:`~pymc_rbm.step_methods.base.RBMStep`).

    Notes
    -----
    Sampler stats, besides those of :class:`~pymc_rbm.step_methods.FlipTheState`
    (for the cold replica): ``n_temperatures``, ``swap_accept`` (mean swap
    acceptance probability of the pairs attempted in the draw),
    ``swap_accept_pairs`` and ``betas`` (per pair and per replica, padded
    with NaN to ``max_temperatures``; the cold replica last), ``round_trips`` (cumulative replica round
    trips between ``β_0`` and 1, counted anew after tuning), ``barrier``
    (the last estimate of ``Λ``) and ``ladder_carries`` (False once tuning found that the ladder carries almost
    no replica across, restarted it from the modes the cold replica visited where the RBM is one row, and gave
    the cold replica the rest of each draw's sweeps; see :mod:`~pymc_rbm.step_methods.ladder`). The step's
    ``rung_sweeps`` holds the explorers' sweeps per rung.

    Examples
    --------
    >>> import pymc as pm
    >>> from pymc_rbm import RBM, RBMParams, ReplicaExchange
    >>> p = RBMParams.random(6, 4, scale=3.0, rng=0)
    >>> with pm.Model():
    ...     v = RBM("v", p.W, p.vbias, p.hbias)
    ...     idata = pm.sample(draws=100, tune=100, chains=1, step=ReplicaExchange([v], betas=[0.0, 0.5, 1.0]),
    ...                       progressbar=False, compute_convergence_checks=False, random_seed=1)
    >>> int(idata.sample_stats["n_temperatures"].max())
    3
    """

    name = "replica_exchange"
    _state_class = ReplicaExchangeState

    def __init__(
        self,
        vars=None,
        *,
        operator="flip",
        betas=None,
        adapt: bool | LadderAdaptation = True,
        informed: bool = True,
        reference="auto",
        sweeps="auto",
        explorer_sweeps="auto",
        **kwargs,
    ):
        if isinstance(reference, str):
            if reference not in REFERENCES:
                raise ValueError(f"reference must be one of {REFERENCES}, visible biases or a ProductMixture, got "
                                 f"{reference!r}")
        elif not isinstance(reference, ProductMixture):  # (a mixture holds read-only copies of its arrays)
            reference = np.array(reference, dtype=np.float64)  # a copy: the caller's array is not kept
            if reference.ndim != 1 or not np.all(np.isfinite(reference)):
                raise ValueError(f"reference biases must be a vector of finite numbers, got shape {reference.shape}")
        self.reference = reference
        self.auto_sweeps = isinstance(sweeps, str) and sweeps == "auto"
        if isinstance(sweeps, str) and not self.auto_sweeps:
            raise ValueError(f'sweeps must be "auto" or an integer >= 1, got {sweeps!r}')
        self.alpha = operator_alpha(operator)
        self.informed_alpha = min(self.alpha, INFORMED_MAX_ALPHA)
        self.operator = operator
        self.keeps_hidden = not (isinstance(operator, str) and operator == "gibbs")
        self._sweep_kernel = build_operator(operator)
        self.rule = operator_rule(operator)
        if not isinstance(adapt, (bool, np.bool_, LadderAdaptation)) or not isinstance(informed, (bool, np.bool_)):
            raise ValueError("adapt must be True, False or a LadderAdaptation, and informed True or False")
        tuning = adapt if isinstance(adapt, LadderAdaptation) else LadderAdaptation()
        self.adapt = adapt is tuning or bool(adapt)
        self.informed = bool(informed)
        self.max_temperatures, self.collapse_below = tuning.max_temperatures, tuning.collapse_below
        if betas is None:
            ladder = uniform_ladder(INITIAL_TEMPERATURES) if self.adapt else np.array([1.0])
        else:
            ladder = check_ladder(betas)
            if ladder[-1] != 1.0:
                raise ValueError(f"the ladder must end at beta = 1 (the model itself), got {ladder}")
            self.max_temperatures = max(self.max_temperatures, ladder.size + 1)  # room for its rungs and the cold one
        self._fixed_ladder = betas is not None
        self.explorer_auto, self._explorer_given = self._check_explorer_sweeps(explorer_sweeps, ladder)
        if isinstance(self._explorer_given, np.ndarray) and betas is None:
            raise ValueError("explorer_sweeps one per rung needs the rungs: pass betas too, or an integer or \"auto\"")
        super().__init__(vars, sweeps=1 if self.auto_sweeps else sweeps, **kwargs)
        if self._param_fn is not None:
            raise ValueError(
                f"ReplicaExchange needs the weights and biases of {self._name!r} to be constants or data: the "
                "hot replicas' targets would otherwise depend on other random variables through log Z. "
                "Use FlipTheState or BlockGibbs for an RBM with random parameters."
            )
        # the whole posterior of v can be tempered when the other terms depend on nothing else that is free
        # compiled rounds loop over replicas and rows; for many chains of a large RBM BLAS products win
        small = self._n_chains == 1 or self.n_visible * self.n_hidden <= 2**17
        self.refits_mixture = isinstance(self.reference, str) and self.reference == "mixture"
        if self.refits_mixture:  # the model's own fixed points, refitted in tuning
            self.reference = mixture_reference(self._rbm)
        self.mixture = self._reference_mixture
        # a mixture's hidden fields differ by replica: one per rung in the compiled rounds, so one chain
        self.compiled_rounds = bool(self.compiled and small and (self.mixture is None or self._n_chains == 1))
        if self.mixture is not None:
            self._check_mixture()
        elif not isinstance(self.reference, str) and self.reference.shape != (self.n_visible,):
            raise ValueError(f"reference biases must have shape ({self.n_visible},), got {self.reference.shape}")
        self.tilted = self.evidence_draws
        if self.tilted and self.mixture is not None:
            raise ValueError(
                f"a mixture reference runs the ladder of {self._name!r} on the RBM alone, but the model's other "
                "terms on it are per-unit evidence, which every replica carries: use a product reference "
                '("auto", "mean_field", "zero" or visible biases)'
            )
        self.tilt_frozen = self.tilted and self.other_terms.input_names != [self._name]
        self.row_wise = bool(
            self.corrected and self.informed and self._n_chains > 1 and not self.tilted
            and self.other_terms.structure is not None and len(self._shape) == 2
        )
        self.can_temper_likelihood = bool(
            self.corrected and self.informed and self._n_chains == 1 and self.other_terms.input_names == [self._name]
            and not self.tilted and self.mixture is None
        )
        self.posterior_ladder = False
        self._initial_betas = self._with_cold(ladder)
        self._extend_stats()
        self._reset_ladder()

    # ------------------------------------------------------------ set-up
    @staticmethod
    def competence(var, has_grad=None):
        """``IDEAL`` for RBM variables with constant parameters, ``INCOMPATIBLE`` otherwise."""
        return Competence.IDEAL if has_constant_parameters(var) else Competence.INCOMPATIBLE

    def _set_params(self, W, vbias, hbias, *, validate: bool) -> None:
        super()._set_params(W, vbias, hbias, validate=validate)
        self._rbm = RBMParams(self.params.W, self.params.vbias, self.params.hbias)
        self._path = None
        self._path_evidence = self._path_hidden = None

    @property
    def _reference_mixture(self) -> ProductMixture | None:
        """The mixture the step was made with (given, or the model's own), before any refit; None for a product."""
        return self.reference if isinstance(self.reference, ProductMixture) else None

    def _check_mixture(self) -> None:
        """Refuse a mixture reference of the wrong width or with entries that are not finite."""
        m = self.mixture
        if m.visible_logits.shape[1:] != (self.n_visible,) or m.hidden_logits.shape[1:] != (self.n_hidden,):
            raise ValueError(
                f"the mixture reference has {m.visible_logits.shape[1:]} visible and {m.hidden_logits.shape[1:]} "
                f"hidden units per component; the RBM {self._name!r} has {self.n_visible} and {self.n_hidden}"
            )
        if not all(np.all(np.isfinite(x)) for x in (m.visible_logits, m.hidden_logits, m.log_weights)):
            raise ValueError("the mixture reference's logits and log weights must be finite")

    def _extend_stats(self) -> None:
        m = self.max_temperatures
        extra = {
            "n_temperatures": (np.int64, []),
            "swap_accept": (np.float64, []),
            "swap_accept_pairs": (object, [m - 1]),  # the NDArray trace stores vectors as objects
            "betas": (object, [m]),
            "round_trips": (np.int64, []),
            "barrier": (np.float64, []),
            "ladder_carries": (bool, []),
        }
        self.stats_dtypes_shapes = {**self.stats_dtypes_shapes, **extra}
        self.stats_dtypes = [{k: d for k, (d, _) in self.stats_dtypes_shapes.items()}]

    def _with_cold(self, ladder: np.ndarray) -> np.ndarray:
        """Replica β's: the RBM's ladder, and above it the cold replica when other terms involve ``v``.

        With other terms the last two replicas are both at ``β = 1``: the RBM
        alone, then the model's full conditional. A one-rung ladder is the
        cold replica alone.
        """
        return np.append(ladder, 1.0) if self.separate_cold and ladder.size > 1 else ladder

    @staticmethod
    def _check_explorer_sweeps(explorer_sweeps, ladder):
        """``(auto, given)``: whether the explorers' sweeps are adapted, else the sweeps per rung of ``ladder``."""
        if isinstance(explorer_sweeps, str):
            if explorer_sweeps not in EXPLORER_SWEEPS:
                raise ValueError(f'explorer_sweeps must be "auto", an integer >= 1 or one per rung, got '
                                 f"{explorer_sweeps!r}")
            return True, None
        if isinstance(explorer_sweeps, (bool, np.bool_)):
            raise ValueError(f"explorer_sweeps must be \"auto\", an integer >= 1 or one per rung, got {explorer_sweeps!r}")
        if isinstance(explorer_sweeps, numbers.Integral):
            if explorer_sweeps < 1:
                raise ValueError(f"explorer_sweeps must be at least 1, got {explorer_sweeps}")
            return False, int(explorer_sweeps)
        given = np.asarray(explorer_sweeps)
        if given.dtype.kind not in "iu" or given.shape != ladder.shape or np.any(given < 1):
            raise ValueError(f"explorer_sweeps must be integers >= 1, one per rung of betas ({ladder.size}), got "
                             f"{explorer_sweeps!r}")
        return False, given.astype(np.int64)

    def _initial_explorer_sweeps(self, k: int) -> np.ndarray:
        """Sweeps per replica of a ladder of ``k`` replicas before any adaptation."""
        given = self._explorer_given
        if given is None:
            return np.ones(k, dtype=np.int64)
        if isinstance(given, int):
            return np.full(k, given, dtype=np.int64)
        out = np.ones(k, dtype=np.int64)
        out[: given.size] = given  # a separate cold replica (moved by its own step) last
        return out

    @property
    def separate_cold(self) -> bool:
        """Whether the cold replica sits above the ladder's top rung (both at ``β = 1``, other targets)."""
        if self.tilted:
            return self.tilt_frozen
        return self.corrected and not self.posterior_ladder

    def _reset_ladder(self) -> None:
        auto = isinstance(self.reference, str) and self.reference == "auto"
        if isinstance(self.reference, str):
            self.reference_in_use = "zero" if auto else self.reference
        else:
            self.reference_in_use = "mixture" if self.mixture is not None else "given"
        # the uniform reference is measured first, then the mean-field one (only where the ladder tempers the RBM)
        self.reference_trial = 0 if auto and self.adapt and not self.can_temper_likelihood else -1
        self.reference_trial_barrier = np.nan
        self.reference_trial_ladder = self.reference_trial_rejection = None
        self.mixture = self._reference_mixture
        self.mixture_refit, self.mixture_states, self.mixture_states_start = -1, None, 0
        self.ladder_carries = True
        self._path = None
        self.posterior_ladder = False
        self.betas = self._initial_betas.copy()
        self.rung_sweeps = self._initial_explorer_sweeps(self.betas.size)
        self.barrier = np.nan
        self._replicas = None  # TemperedState of (K, B, ·), the cold replica last
        self._tilt = None  # the informed move's tilt at the cold state (a single chain only)
        self.ladder_tilt = None  # the hot rungs' per-unit evidence (tilted mode): frozen with the ladder
        self.ladder_draw = 0
        self.ladder_tune = 0
        self.ladder_adapt_at: list[int] = []
        self._reset_counters()

    def _reset_counters(self) -> None:
        """Forget swap acceptance, round trips and the kept label weights (after a new ladder, and when tuning
        ends)."""
        self._path_evidence = self._path_hidden = None
        k = self.betas.size
        self.swap_sum = np.zeros(max(k - 1, 0))
        self.swap_n = np.zeros(max(k - 1, 0))
        self.round_trips = 0
        self._label_weights = None  # a mixture's label weights of the states after the last swaps
        self.trip_ends = np.zeros((k, self._n_chains), dtype=np.int8)  # per label and row: 0 -, 1 bottom, 2 top
        self.trip_up = np.zeros((k, self._n_chains), dtype=bool)  # reached the top since the bottom
        self.replica_labels = np.repeat(np.arange(k)[:, None], self._n_chains, axis=1)
        self.rung_energy_sums = np.zeros((5, k, self._n_chains))  # Σ x, Σ y, Σ x², Σ y², Σ xy: E before, after
        self.rung_energy_n = np.zeros(k)

    def setup_chain(self, rng, tune: int, draws: int) -> None:
        """Take the chain's generator, start a fresh ladder and plan its adaptation."""
        super().setup_chain(rng, tune, draws)
        self._reset_ladder()
        self.ladder_tune = int(tune)
        if self.adapt and tune >= 32:
            self.ladder_adapt_at = sorted({max(int(tune * f), 1) for f in ADAPT_AT})
        if self._plans_mixture_refit(tune):
            self.mixture_refit = 0

    @property
    def replica_visible(self):
        """Visible states of the replicas, shape (n_replicas, n_chains, n_visible); None before a draw."""
        return None if self._replicas is None else self._replicas.v

    @replica_visible.setter
    def replica_visible(self, value) -> None:
        self._set_replicas(v=value)

    @property
    def replica_hidden(self):
        """Hidden states of the replicas, shape (n_replicas, n_chains, n_hidden); None before a draw."""
        return None if self._replicas is None else self._replicas.h

    @replica_hidden.setter
    def replica_hidden(self, value) -> None:
        self._set_replicas(h=value)

    @property
    def replica_rounds(self) -> int:
        """Rounds made so far by the replicas (its parity picks the next swap pairs)."""
        return 0 if self._replicas is None else int(self._replicas.n_rounds)

    @replica_rounds.setter
    def replica_rounds(self, value) -> None:
        self._set_replicas(n_rounds=int(value))

    def _set_replicas(self, **parts) -> None:
        """Set parts of the replicas (a resumed state sets them one by one; see ``sampling_state``)."""
        current = self._replicas if self._replicas is not None else TemperedState(None, None, 0)
        self._replicas = current._replace(**parts)

    @RBMStep.sampling_state.setter
    def sampling_state(self, state) -> None:
        """Resume from a stored state: the replicas, the ladder and the tuning continue where they were."""
        RBMStep.sampling_state.fset(self, state)
        if self._replicas is not None and (self._replicas.v is None or self._replicas.h is None):
            self._replicas = None
        self._tilt = None

    # ------------------------------------------------------------ the draw
    @property
    def n_temperatures(self) -> int:
        """Number of rungs of the current ladder (1: the cold replica alone)."""
        return int(self.betas.size)

    @property
    def rounds_per_draw(self) -> int:
        """Rounds in a draw: ``sweeps``, or with ``sweeps="auto"`` as many as the ladder has rungs, fewer where
        the explorers make more than one sweep, so that a draw makes about ``K²`` sweeps as with one each."""
        if not self.auto_sweeps:
            return int(self.sweeps)
        k = self.n_temperatures
        total = int(self.rung_sweeps[:k].sum())
        return k if total <= k else max(1, int(round(k * k / total)))

    def _product_rows(self) -> int:
        return self._n_chains * self.max_temperatures

    def _step(self, point):
        """One draw: ``sweeps`` rounds of replica sweeps and swaps (stochastic); adapts while tuning."""
        point = self._chain_start(point)
        self.ladder_draw += 1
        if self.n_temperatures == 1 and not (self.corrected and self.informed):
            out, stats = super()._step(point)  # the local step's own fast path
            swap = np.full(self.max_temperatures - 1, np.nan)
        elif self.tilted:
            out, stats, swap = self._tilted_step(point)
        else:
            out, stats, swap = self._tempered_step(point)
        stats[0].update(self._ladder_stats(swap))
        if self.mixture_refit == 1:
            self._record_top_state()
        if self.ladder_draw in self.ladder_adapt_at and self.ladder_draw <= self.ladder_tune:
            self._adapt_ladder()
        elif self.ladder_draw == self.ladder_tune:
            self._reset_counters()  # round trips and acceptance of the frozen ladder only
        return out, stats

    def _ladder_stats(self, swap) -> dict:
        m = self.max_temperatures
        betas = np.full(m, np.nan)
        betas[: self.betas.size] = self.betas
        attempted = swap[np.isfinite(swap)] if self.n_temperatures > 1 else swap[:0]
        return {
            "n_temperatures": self.n_temperatures,
            "swap_accept": float(attempted.mean()) if attempted.size else np.nan,
            "swap_accept_pairs": swap,
            "betas": betas,
            "round_trips": int(self.round_trips),
            "barrier": float(self.barrier),
            "ladder_carries": bool(self.ladder_carries),
        }
