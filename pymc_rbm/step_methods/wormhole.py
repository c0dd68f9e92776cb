"""Wormhole Metropolis moves (Hinton, Welling & Mnih 2003) as a PyMC step: long-range jumps suggested by data.

:class:`WormholeMetropolis` is a thin adapter over
:mod:`pymc_rbm.kernels.wormhole`: the move only proposes, and
:func:`~pymc_rbm.kernels.wormhole_step` accepts with the log density of the
**whole model** as a function of the step's variables (the others held at
their current values), so the step leaves the full conditional of its
variables invariant in any model and can sit in a compound step next to
NUTS, :class:`~pymc_rbm.FlipTheState` or any other step.
"""

from __future__ import annotations

import numpy as np
import pytensor
from pymc.blocking import DictToArrayBijection, RaveledVars
from pymc.model import modelcontext
from pymc.pytensorf import CallableTensor, compile, join_nonshared_inputs, make_shared_replacements
from pymc.step_methods.arraystep import ArrayStepShared
from pymc.step_methods.compound import Competence, StepMethodState
from pymc.step_methods.state import dataclass_state
from pymc.util import get_value_vars_from_user_vars
from pymc.vartypes import discrete_types

from pymc_rbm.kernels.wormhole import (
    OptimizationWormholes,
    PointWormholes,
    RegionWormholes,
    wormhole_step,
)
from pymc_rbm.validation import check_bool

__all__ = ["WormholeMetropolis", "WormholeMetropolisState"]

KINDS = ("point", "optimization", "region")


@dataclass_state
class WormholeMetropolisState(StepMethodState):
    """The sampling state of :class:`WormholeMetropolis`: its generator (the moves hold no state)."""


class WormholeMetropolis(ArrayStepShared):
    """Wormhole jumps (Hinton, Welling & Mnih 2003) of some model variables, Metropolis-accepted.

    With probability ``jump_probability`` per draw, a wormhole move proposes a
    long-range jump of the step's variables and the jump is accepted with
    ``min(1, exp(log_alpha))``, ``log_alpha = log p(x') - log p(x) + log_q_ratio``
    where ``p`` is the model's joint density as a function of these
    variables. The step is never chosen by ``pm.sample`` on its own (it needs
    data); add it next to the step that explores each mode locally::

        pm.sample(step=[FlipTheState([v]), WormholeMetropolis([v], data=X, kind="region", n_regions=4)])
        pm.sample(step=[pm.NUTS([x]), WormholeMetropolis([x], data=X, kind="point")])

    When it moves the visible units of an :class:`~pymc_rbm.RBM` variable,
    the RBM steps see the change and redraw their hidden state.

    Parameters
    ----------
    vars : variable or list of them
        The variables to jump (random variables or value variables). Their
        values, raveled and concatenated in this order, are the units of a
        data point. A single variable of shape ``batch + (n_units,)`` whose
        last axis matches the data (e.g. a batch of RBM chains) has each row
        jumped in turn, each accepted with the whole model's density
        (a Metropolis-within-Gibbs scan, exact for any coupling of the rows).
    data : array_like of shape (n_data, n_units)
        Data suggesting where the modes are, in the space of the value
        variables (for bounded variables that is the transformed space,
        e.g. ``log σ``). Binary (0/1) for discrete variables.
    kind : {"point", "optimization", "region"}, default "point"
        :class:`~pymc_rbm.kernels.PointWormholes` (offsets between data points),
        :class:`~pymc_rbm.kernels.OptimizationWormholes` (continuous only;
        uses the model's gradient), or :class:`~pymc_rbm.kernels.RegionWormholes`
        fitted to ``data`` with ``n_regions`` mixture components.
    jump_probability : float in [0, 1], default 1.0
        Probability of attempting a jump at each draw (per row).
    n_regions : int, default 2
        ``kind="region"`` only: mixture components fitted by EM.
    fit_seed : int, default 0
        ``kind="region"`` only: seed of the EM initialisation, fixed so that
        the regions (and so the traces for a given ``random_seed``) do not
        depend on chance at construction.
    proposal : object, optional
        A ready-made move with ``propose(rng, x) -> WormholeProposal`` and an
        ``n_units`` attribute (e.g. a :class:`~pymc_rbm.kernels.RegionWormholes`
        built by hand); then ``data`` and ``kind`` are ignored.
    binary : bool, optional
        Binary (XOR) or continuous moves; by default binary exactly when the
        variables are discrete.
    model, rng, initial_point, compile_kwargs, blocked
        As for every PyMC step method.
    **move_kwargs
        Passed to the move: ``alpha`` or ``radius`` (and EM options) for
        :meth:`RegionWormholes.fit <pymc_rbm.kernels.RegionWormholes.fit>`,
        ``n_descent``, ``step_size``, ``min_curvature`` for
        :class:`~pymc_rbm.kernels.OptimizationWormholes`.

    Notes
    -----
    Sampler stats (per row for a batched variable): ``attempted`` (a jump was
    tried this draw), ``accepted``, ``region_changed`` (region wormholes: the
    target region differs from the departure region; point and optimization
    wormholes: a non-zero offset was proposed) and ``log_alpha`` (NaN when no
    jump was tried). Accepted jumps are ``accepted & region_changed``.

    Jumps alone do not make an irreducible chain: they reach only the states
    that their offsets connect (on a 6-unit RBM with point wormholes from a
    few data points, 16 of the 64 states). ``pm.sample`` warns
    (``alone_warning``) when it is given no other step for some of the
    variables.

    Examples
    --------
    >>> import numpy as np, pymc as pm
    >>> from pymc_rbm import WormholeMetropolis
    >>> data = np.concatenate([np.full((5, 1), -10.0), np.full((5, 1), 10.0)])
    >>> with pm.Model():
    ...     x = pm.NormalMixture("x", w=[0.5, 0.5], mu=[-10, 10], sigma=1.0, shape=1)
    ...     idata = pm.sample(200, tune=100, chains=1, progressbar=False, random_seed=0,
    ...                       compute_convergence_checks=False,
    ...                       step=[pm.NUTS([x]), WormholeMetropolis([x], data=data)])
    >>> bool((idata.posterior["x"] > 0).any() and (idata.posterior["x"] < 0).any())
    True
    """

    name = "wormhole_metropolis"
    default_blocked = True
    _state_class = WormholeMetropolisState
    #: What ``pm.sample`` warns (``{names}``: the variables) when it is given no other step for some of this
    #: step's variables (:func:`pymc_rbm.step_methods.convergence.lone_step_warnings`).
    alone_warning = (
        "WormholeMetropolis: no other step moved {names} (pm.sample was given no other step for them): wormhole "
        "jumps alone reach only the states their offsets connect, so the chain is reducible and its draws are not "
        "from the model; sample these variables with a local step too, e.g. "
        "step=[FlipTheState([v]), WormholeMetropolis([v], ...)]"
    )

    stats_dtypes_shapes = {
        "attempted": (bool, []),
        "accepted": (bool, []),
        "region_changed": (bool, []),
        "log_alpha": (np.float64, []),
    }

    def __init__(
        self,
        vars,
        *,
        data=None,
        kind: str = "point",
        jump_probability: float = 1.0,
        n_regions: int = 2,
        fit_seed: int = 0,
        proposal=None,
        binary: bool | None = None,
        model=None,
        rng=None,
        initial_point=None,
        compile_kwargs: dict | None = None,
        blocked: bool = True,
        **move_kwargs,
    ):
        model = modelcontext(model)
        if initial_point is None:
            initial_point = model.initial_point()
        value_vars = get_value_vars_from_user_vars(vars if isinstance(vars, (list, tuple)) else [vars], model)
        observed = {model.rvs_to_values.get(rv) for rv in model.observed_RVs}
        if any(v in observed for v in value_vars):
            raise ValueError("WormholeMetropolis samples free variables only")
        if not (0.0 <= float(jump_probability) <= 1.0):
            raise ValueError(f"jump_probability must be in [0, 1], got {jump_probability!r}")
        self.jump_probability = float(jump_probability)

        discrete = [v.dtype in discrete_types for v in value_vars]
        if any(discrete) and not all(discrete):
            raise ValueError("WormholeMetropolis jumps discrete or continuous variables, not a mix of both")
        self.binary = all(discrete) if binary is None else check_bool(binary, "binary")
        if self.binary and not all(discrete):
            raise ValueError("binary wormholes need discrete (0/1) variables")

        shapes = [np.shape(initial_point[v.name]) for v in value_vars]
        size = int(sum(np.prod(s, dtype=np.int64) for s in shapes))
        self._dtype = np.result_type(*[np.dtype(v.dtype) for v in value_vars])
        n_units = self._units(proposal, data, size, shapes)
        self._n_rows = size // n_units
        self._n_units = n_units

        shared = make_shared_replacements(initial_point, value_vars, model)
        compile_kwargs = dict(compile_kwargs or {})
        [logp], joined = join_nonshared_inputs(initial_point, [model.logp()], value_vars, shared)
        q = joined.type("q")
        logp_q = CallableTensor(logp)(q)
        self._logp = compile([q], logp_q, **compile_kwargs)
        self._logp.trust_input = True
        self._logp_grad = None

        if proposal is None:
            self.kind = kind
            q_start = DictToArrayBijection.map({v.name: initial_point[v.name] for v in value_vars}).data
            proposal = self._make_move(kind, data, n_regions, fit_seed, q, logp_q, q_start, compile_kwargs,
                                       move_kwargs)
        else:
            self.kind = "custom"
            if move_kwargs:
                raise TypeError(f"unexpected options {sorted(move_kwargs)} with a ready-made proposal")
            if not callable(getattr(proposal, "propose", None)):
                raise TypeError("proposal must have a method propose(rng, x) -> WormholeProposal")
        self.proposal = proposal

        super().__init__(value_vars, shared, blocked=blocked, rng=rng)
        self._setup_stats()

    # ------------------------------------------------------------ set-up
    def _units(self, proposal, data, size: int, shapes) -> int:
        """Units of one data point: the whole raveled block, or the last axis of one batched variable."""
        if proposal is not None:
            n_units = getattr(proposal, "n_units", None)
            if n_units is None:
                raise TypeError("a ready-made proposal must say its n_units")
        else:
            if data is None:
                raise ValueError("WormholeMetropolis needs data (n_data, n_units) or a ready-made proposal")
            arr = np.asarray(data)
            if arr.ndim != 2:
                raise ValueError(f"data must have shape (n_data, n_units), got shape {arr.shape}")
            n_units = arr.shape[1]
        if n_units == size:
            return n_units
        if len(shapes) == 1 and len(shapes[0]) >= 2 and shapes[0][-1] == n_units:
            return n_units
        raise ValueError(
            f"data points have {n_units} units, but the variables have {size} values in all "
            f"(shapes {shapes}); give data of width {size}, or of the last axis of a single batched variable"
        )

    def _make_move(self, kind, data, n_regions, fit_seed, q, logp_q, q_start, compile_kwargs, move_kwargs):
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
        if kind == "point":
            if move_kwargs:
                raise TypeError(f"point wormholes take no options, got {sorted(move_kwargs)}")
            return PointWormholes(data, binary=self.binary)
        if kind == "region":
            return RegionWormholes.fit(data, n_regions, binary=self.binary, rng=fit_seed, **move_kwargs)
        if self.binary:
            raise ValueError("optimization wormholes need continuous variables (they descend the gradient)")
        grad = pytensor.grad(logp_q, q)
        self._logp_grad = compile([q], [logp_q, grad], **compile_kwargs)
        self._logp_grad.trust_input = True
        # the target of row 0 at the initial point; each jump binds the row it moves (_row_proposal)
        return OptimizationWormholes(data, self._rows_logp_grad(q_start, 0), **move_kwargs)

    def _setup_stats(self) -> None:
        if self._n_rows == 1:
            return
        batch = [self._n_rows]
        # the NDArray trace stores one scalar per draw and stat: vectors go in as objects
        self.stats_dtypes_shapes = {k: (object, batch) for k in type(self).stats_dtypes_shapes}
        self.stats_dtypes = [{k: object for k in self.stats_dtypes_shapes}]

    # --------------------------------------------------- log density of a row
    def _with_row(self, base: np.ndarray, k: int, x: np.ndarray) -> np.ndarray:
        q = base.reshape(self._n_rows, self._n_units).copy()
        q[k] = x
        return q.reshape(-1).astype(self._dtype, copy=False)

    def _rows_logp(self, base, k):
        """``x -> log p`` of the model with row ``k`` of ``base`` replaced by each row of ``x``."""

        def log_density(x):
            return np.array([self._logp(self._with_row(base, k, row)) for row in np.asarray(x)], dtype=np.float64)

        return log_density

    def _rows_logp_grad(self, base, k):
        """``x -> (log p, grad)`` of the model with row ``k`` of ``base`` replaced by each row of ``x``, the
        gradient in that row's units."""

        def log_density_and_grad(x):
            out = [self._logp_grad(self._with_row(base, k, row)) for row in np.asarray(x)]
            log_p = np.array([float(o[0]) for o in out])
            grad = np.stack([np.asarray(o[1]).reshape(self._n_rows, self._n_units)[k] for o in out])
            return log_p, grad

        return log_density_and_grad

    def _row_proposal(self, base, k):
        """The moves for a jump of row ``k`` of ``base``: optimization wormholes descend that row's density."""
        if self._logp_grad is None:
            return self.proposal
        return self.proposal.for_target(self._rows_logp_grad(base, k))

    # ---------------------------------------------------------- PyMC API
    @staticmethod
    def competence(var, has_grad=None):
        """``INCOMPATIBLE``: the step needs data, so it is only used when asked for."""
        return Competence.INCOMPATIBLE

    def astep(self, q0: RaveledVars) -> tuple[RaveledVars, list[dict]]:
        """Try a jump of each row with probability ``jump_probability`` (stochastic)."""
        q = q0.data.copy()
        n = self._n_rows
        attempted = self.rng.random(n) < self.jump_probability
        accepted = np.zeros(n, dtype=bool)
        changed = np.zeros(n, dtype=bool)
        log_alpha = np.full(n, np.nan)
        for k in np.flatnonzero(attempted):
            rows = q.reshape(n, self._n_units)
            new, info = wormhole_step(self.rng, rows[k : k + 1], self._rows_logp(q, k), self._row_proposal(q, k))
            accepted[k], changed[k], log_alpha[k] = info.accepted[0], info.region_changed[0], info.log_alpha[0]
            if info.accepted[0]:
                q = self._with_row(q, k, new[0])
        if n == 1:
            stats = {
                "attempted": bool(attempted[0]),
                "accepted": bool(accepted[0]),
                "region_changed": bool(changed[0]),
                "log_alpha": float(log_alpha[0]),
            }
        else:
            stats = {"attempted": attempted, "accepted": accepted, "region_changed": changed, "log_alpha": log_alpha}
        return RaveledVars(q.astype(q0.data.dtype, copy=False), q0.point_map_info), [stats]
