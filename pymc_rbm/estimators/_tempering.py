"""The annealing path shared by AIS, RTS and SAMS: intermediate RBMs, schedules, pilot runs.

Private: :mod:`pymc_rbm.estimators.ais`, :mod:`~pymc_rbm.estimators.rts` and
:mod:`~pymc_rbm.estimators.sams` build on it, and the public names are
re-exported by :mod:`pymc_rbm.estimators.ais`.

The path of Salakhutdinov & Murray (2008) runs from a *base-rate model* ``A``
whose ``log Z_A`` is known in closed form to the target RBM ``B`` through

    p_k(v) ∝ p*_k(v) = Σ_{h_A, h_B} exp(-(1 - β_k) E_A(v, h_A) - β_k E_B(v, h_B)),   0 = β_0 < ... < β_K = 1.

The base-rate model has no couplings, only visible biases ``b_A`` (its
hidden units, if it had any, would only contribute a known constant), so the
intermediate model ``p_k`` is itself an RBM:

    W_k = β_k W_B,   vbias_k = (1 - β_k) b_A + β_k vbias_B,   hbias_k = β_k hbias_B,

with the hidden units summed out in closed form,

    log p*_k(v) = ((1 - β_k) b_A + β_k vbias_B)·v + Σ_j softplus(β_k (hbias_B + v·W_B)_j).

At ``β = 0`` that is ``b_A·v + n_hidden log 2`` and ``log Z_0 = Σ_i softplus(b_A,i) + n_hidden log 2``.

Why the transition is built from the path's own logits
------------------------------------------------------
The transition at ``β_k`` must leave ``p_k`` invariant. The kernels'
``beta`` argument multiplies the *whole* energy of one RBM, so
``gibbs_sweep(rng, state, target, beta=β_k)`` samples
``exp(-β_k E_B)``, whose visible bias is ``β_k vbias_B``, not
``(1 - β_k) b_A + β_k vbias_B``: it is the wrong distribution unless
``b_A = 0`` (and no other RBM can be passed instead, since with ``beta``
the visible bias would have to be ``vbias_k / β_k``, undefined at
``β = 0``). Building an :class:`~pymc_rbm.RBMParams` of the intermediate
model every step (:meth:`AnnealingPath.intermediate`) would be correct but
copies and validates ``W`` thousands of times, and cannot give each chain its
own β, which RTS and SAMS need. So a point of the path is a target of the
kernels' sweep (:meth:`AnnealingPath.at`, a :class:`PathPoint`) that computes
the intermediate model's tempered logits directly, for a β that is a scalar or
one per chain,

    hidden:  β (hbias_B + v·W_B)          visible:  b_A + β (vbias_B - b_A + W_B·h),

and :func:`pymc_rbm.kernels.sweep.sweep` applies the kernels' own layer rule
to them: the Gibbs rule (``α = 0``) or flip-the-state mixed with Gibbs
(``α > 0``). The tests check, exactly,
that these logits are those of :meth:`AnnealingPath.intermediate` and that
the resulting transition matrix leaves ``p_k`` invariant, and that a
transition with the target's ``beta`` alone does not.

One sweep draws ``h ~ p_k(h | v)`` afresh and then updates ``v`` given
``h`` with the flip-the-state operator mixed with Gibbs by ``α``
(``operator="gibbs"`` is ``α = 0``, plain block Gibbs). The hidden layer
is redrawn rather than flipped because the parameters change at every step
(DESIGN: a stale ``h`` breaks invariance), and because the weights are
Rao-Blackwellized over ``h`` (they use ``p*_k(v)`` with ``h`` summed out, as
Salakhutdinov & Murray do), which needs a kernel on ``v`` alone. The sweep
``v → h → v'`` is reversible with respect to ``p_k(v)``, so the same kernel
serves the reverse annealing of :func:`~pymc_rbm.estimators.ais.reverse_ais`.

The path generalises to several RBMs on the same visible units (SAMS
bridges them): the intermediate distributions are RBMs whose hidden layer is
the concatenation of the models' hidden layers, each model's part scaled by
its own coefficient (Zhang 2016, eq. 2.4.4).
"""

from __future__ import annotations

import inspect
import warnings
from typing import NamedTuple

import numpy as np
from scipy.special import logsumexp

from pymc_rbm._runtime import blas_threads, map_blocks
from pymc_rbm.estimators.mean_field import log_partition_mean_field
from pymc_rbm.kernels.activations import FULL_EVERY
from pymc_rbm.kernels.operators import operator_alpha, operator_rule
from pymc_rbm.kernels.state import RBMState
from pymc_rbm.kernels.sweep import sweep
from pymc_rbm.params import RBMParams
from pymc_rbm.validation import check_binary, check_positive_int, check_sampling_dtype

__all__ = [
    "default_schedule",
    "check_schedule",
    "base_rate_vbias",
    "AnnealingPath",
    "PathPoint",
    "annealing_path",
    "as_path",
    "single_model_path",
    "PilotRun",
    "pilot_run",
    "count_moves",
    "log_mean_exp",
    "thermodynamic_length",
    "COLLAPSED_SHARE",
    "check_occupancy",
    "spread_stderr",
]

#: A label (temperature) that got less than this fraction of its share of the draws counts as
#: collapsed: the chains did not reach it, and no estimate built on it is supported by draws there.
COLLAPSED_SHARE = 0.1

#: Salakhutdinov & Murray's schedule: 0 → 0.5 in 500 steps, → 0.9 in 4000, → 1 in 10000.
DEFAULT_SCHEDULE_SEGMENTS = ((0.5, 500), (0.9, 4000), (1.0, 10000))


# ------------------------------------------------------------------ schedule
def default_schedule(n_steps: int = 14500) -> np.ndarray:
    """Salakhutdinov & Murray's β schedule, or the same shape with ``n_steps`` steps.

    Uniform steps from 0 to 0.5, 0.5 to 0.9 and 0.9 to 1, with 500, 4000 and
    10000 of the 14500 steps (the defaults) or the same proportions of
    ``n_steps``.

    Parameters
    ----------
    n_steps : int, default 14500
        Number of annealing steps (transitions between β values); at least 3.

    Returns
    -------
    ndarray of shape (n_steps + 1,)
        Nondecreasing, from exactly 0 to exactly 1.

    Examples
    --------
    >>> from pymc_rbm.estimators.ais import default_schedule
    >>> b = default_schedule()
    >>> b.shape, float(b[500]), float(b[4500]), float(b[-1])
    ((14501,), 0.5, 0.9, 1.0)
    """
    n_steps = int(n_steps)
    if n_steps < 3:
        raise ValueError(f"n_steps must be at least 3, got {n_steps}")
    total = sum(n for _, n in DEFAULT_SCHEDULE_SEGMENTS)
    counts = [max(1, round(n_steps * n / total)) for _, n in DEFAULT_SCHEDULE_SEGMENTS]
    counts[-1] = n_steps - sum(counts[:-1])
    parts, start = [np.zeros(1)], 0.0
    for (stop, _), n in zip(DEFAULT_SCHEDULE_SEGMENTS, counts):
        parts.append(np.linspace(start, stop, n + 1)[1:])
        start = stop
    out = np.concatenate(parts)
    out[-1] = 1.0
    return out


def check_schedule(schedule, *, name: str = "schedule") -> np.ndarray:
    """A validated copy of an annealing schedule.

    Parameters
    ----------
    schedule : None, int or array_like
        ``None``: :func:`default_schedule`; an int ``K``: ``K`` uniform steps
        from 0 to 1; an array: the β values themselves.
    name : str, default "schedule"
        How error messages call the argument.

    Returns
    -------
    ndarray of float64 of shape (K + 1,)

    Raises
    ------
    ValueError
        Unless the schedule is one-dimensional with at least two values, all
        finite, nondecreasing, starting at exactly 0 and ending at exactly 1.
    """
    if schedule is None:
        return default_schedule()
    if isinstance(schedule, (int, np.integer)) and not isinstance(schedule, bool):
        if schedule < 1:
            raise ValueError(f"a schedule given as a number of steps needs at least 1 step, got {schedule}")
        return np.linspace(0.0, 1.0, int(schedule) + 1)
    try:
        b = np.array(schedule, dtype=np.float64, copy=True)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be None, an int or an array of β values, got {schedule!r}") from None
    if b.ndim != 1 or b.size < 2:
        raise ValueError(f"{name} must be a 1-D array of at least 2 β values, got shape {b.shape}")
    if not np.all(np.isfinite(b)):
        raise ValueError(f"{name} contains non-finite values")
    if b[0] != 0.0 or b[-1] != 1.0:
        raise ValueError(f"{name} must start at β = 0 and end at β = 1, got {b[0]!r} ... {b[-1]!r}")
    if np.any(np.diff(b) < 0.0):
        i = int(np.argmax(np.diff(b) < 0.0))
        raise ValueError(f"{name} must be nondecreasing; β[{i}] = {b[i]!r} > β[{i + 1}] = {b[i + 1]!r}")
    return b


# ---------------------------------------------------------------- base model
def base_rate_vbias(params: RBMParams, data=None, *, base=None, smoothing: float = 0.005) -> np.ndarray:
    """Visible biases ``b_A`` of the base-rate model that annealing starts from.

    Parameters
    ----------
    params : RBMParams
        The target RBM.
    data : array_like of shape (n_samples, n_visible), optional
        Binary training data for the data-based base rate.
    base : {None, "data", "mean_field", "target", "zero"} or array_like of shape (n_visible,)
        ``"data"`` (the default when ``data`` is given): Salakhutdinov &
        Murray's base-rate model, independent units with the smoothed mean
        of the data, ``p_i = (mean_i + s) / (1 + 2 s)`` and
        ``b_A,i = log(p_i / (1 - p_i))``. ``"mean_field"`` (the default
        without data): the same with the visible magnetizations ``m_v`` of
        the model's naive mean-field solution
        (:func:`~pymc_rbm.estimators.log_partition_mean_field`) in place of
        the data means, a start that Prat Pou, Romero, Martí & Mazzanti (2025)
        recommend; docs/estimators.md has the measurements that made it the
        default. ``"target"``: the target's own visible biases with zero
        weights, so only the couplings and hidden biases are annealed.
        ``"zero"``: the uniform distribution (Salakhutdinov & Murray's
        fallback). An array: those biases.
    smoothing : float, default 0.005
        ``s`` above, in pseudo-counts per data row, split between "on" and
        "off" so that no bias is infinite (``0.005 <= p_i <= 0.995`` by
        default). Salakhutdinov & Murray's (2008) code adds ``lp = 5``
        pseudo-counts per mini-batch of 100 cases to the "on" count only,
        ``p_i = (mean_i + 0.05) / 1.05``, which is infinite for a unit on in
        every row. The default's lighter smoothing gave AIS log weights that
        spread less than theirs (``s = 0.05``) on the small MNIST models, and
        much heavier smoothing was worse; on large models the choice matters
        little, since the variance comes from near ``β = 1``
        (docs/estimators.md has the measurements).

    Returns
    -------
    ndarray of float64 of shape (n_visible,)
    """
    n = params.n_visible
    if base is None:
        base = "data" if data is not None else "mean_field"
    if isinstance(base, str):
        if base in ("data", "mean_field"):
            s = float(smoothing)
            if not (np.isfinite(s) and s > 0.0):
                raise ValueError(f"smoothing must be a positive number, got {smoothing!r}")
            if base == "mean_field":
                mean = log_partition_mean_field(params).diagnostics["m_v"]
            else:
                if data is None:
                    raise ValueError('base="data" needs data=')
                x = check_binary(data, n, name="data").reshape(-1, n)
                if x.shape[0] == 0:
                    raise ValueError("data has no rows")
                mean = x.mean(axis=0)
            p = (mean + s) / (1.0 + 2.0 * s)
            return np.log(p) - np.log1p(-p)
        if base == "target":
            return np.array(params.vbias, dtype=np.float64)
        if base == "zero":
            return np.zeros(n)
        raise ValueError(
            f'base must be "data", "mean_field", "target", "zero" or an array of {n} biases, got {base!r}'
        )
    b = np.array(base, dtype=np.float64, copy=True)
    if b.shape != (n,) or not np.all(np.isfinite(b)):
        raise ValueError(f"base biases must be {n} finite numbers, got shape {b.shape}")
    return b


# ----------------------------------------------------------------- numerics
def log_mean_exp(x, axis=None):
    """``log(mean(exp(x)))``, stable."""
    x = np.asarray(x, dtype=np.float64)
    n = x.size if axis is None else x.shape[axis]
    return logsumexp(x, axis=axis) - np.log(n)


def softplus_sum_(z: np.ndarray) -> np.ndarray:
    """``Σ softplus(z)`` over the last axis, summed in float64; overwrites ``z``."""
    pos = np.maximum(z, 0.0).sum(axis=-1, dtype=np.float64)
    np.abs(z, out=z)
    np.negative(z, out=z)
    np.exp(z, out=z)
    np.log1p(z, out=z)
    return pos + z.sum(axis=-1, dtype=np.float64)


# --------------------------------------------------------------------- path
class AnnealingPath:
    """Intermediate RBMs between a base-rate model and one or more target RBMs.

    A point of the path is a coefficient vector ``λ = (λ_0, λ_1, ..., λ_M)``
    on the base-rate model and the ``M`` models. Its unnormalised marginal is

        log f_λ(v) = (λ_0 b_A + Σ_m λ_m vbias_m)·v + Σ_m Σ_{j ∈ m} softplus(λ_m (hbias_m + v·W_m)_j),

    the marginal of the RBM with hidden layer ``[h_1, ..., h_M]``, couplings
    ``[λ_1 W_1, ..., λ_M W_M]`` and those biases (:meth:`intermediate`).
    With one model, ``λ = (1 - β, β)`` is the AIS path of Salakhutdinov &
    Murray. A hidden unit of a model with ``λ_m = 0`` contributes ``log 2``:
    :meth:`log_offset` gives that constant, so that
    ``log Z_λ - log_offset(λ)`` is the log partition function of the models
    with ``λ_m > 0`` alone.

    Parameters
    ----------
    models : RBMParams or sequence of RBMParams
        Target RBMs, all with the same number of visible units.
    base_vbias : array_like of shape (n_visible,)
        Visible biases ``b_A`` of the base-rate model (:func:`base_rate_vbias`).
    dtype : numpy dtype, default float64
        Floating type of the sampling arithmetic (log weights are always
        accumulated in float64).
    operator : {"gibbs", "flip"} or float in [0, 1], default "gibbs"
        The visible-layer update of every sweep along the path, bound once:
        block Gibbs or flip-the-state mixed with Gibbs by ``α``
        (:func:`~pymc_rbm.kernels.operator_alpha`); the hidden layer is
        always drawn afresh from ``p_λ(h | v)``.

    Notes
    -----
    :func:`annealing_path` builds one from a model, its base distribution and
    these options; AIS, reverse AIS, BAR, RTS and SAMS take either the model
    and the options or a path built once.
    """

    def __init__(self, models, base_vbias, *, dtype=np.float64, operator="gibbs"):
        if isinstance(models, RBMParams):
            models = [models]
        models = list(models)
        if not models or not all(isinstance(m, RBMParams) for m in models):
            raise TypeError("models must be an RBMParams or a non-empty sequence of RBMParams")
        nv = models[0].n_visible
        for i, m in enumerate(models):
            if m.n_visible != nv:
                raise ValueError(f"model {i} has {m.n_visible} visible units, model 0 has {nv}")
        b = np.asarray(base_vbias, dtype=np.float64)
        if b.shape != (nv,) or not np.all(np.isfinite(b)):
            raise ValueError(f"base_vbias must be {nv} finite numbers, got shape {b.shape}")
        self.dtype = check_sampling_dtype(dtype)
        #: the visible operator's mixture weight α (0 for Gibbs) and its layer rule
        self.alpha = operator_alpha(operator)
        self.rule = operator_rule(operator)
        self.models = models
        self.n_models = len(models)
        self.n_visible = nv
        self.hidden_sizes = np.array([m.n_hidden for m in models])
        self.n_hidden = int(self.hidden_sizes.sum())
        self.base_vbias = b
        #: (nv, H) couplings of all models side by side (C-contiguous: its rows are added to carried
        #: activations), and (H,) hidden biases
        self.W = np.ascontiguousarray(np.concatenate([m.W for m in models], axis=1), dtype=self.dtype)
        self.WT = np.ascontiguousarray(self.W.T)
        self.hbias = np.concatenate([m.hbias for m in models]).astype(self.dtype)
        #: (1 + M, nv) visible biases of the base and of each model
        self.vbiases = np.vstack([b] + [m.vbias for m in models]).astype(self.dtype)
        self._vb64 = np.vstack([b] + [m.vbias for m in models]).astype(np.float64)
        #: model (1..M) of each hidden unit
        self.model_of_hidden = np.repeat(np.arange(1, self.n_models + 1), self.hidden_sizes)

    # ---------------------------------------------------------- coefficients
    def coefficients(self, beta, model: int = 0) -> np.ndarray:
        """``λ`` of the point at ``β`` between the base (β = 0) and model ``model`` (β = 1).

        Parameters
        ----------
        beta : float or array_like of shape (n,)
        model : int, default 0
            Index of the target model in ``models``.

        Returns
        -------
        ndarray of shape (1 + M,) or (n, 1 + M)
        """
        b = np.asarray(beta, dtype=np.float64)
        out = np.zeros(b.shape + (1 + self.n_models,))
        out[..., 0] = 1.0 - b
        out[..., 1 + model] += b
        return out

    @property
    def log_z_base(self) -> float:
        """``log Z`` of the path at the base, ``λ = (1, 0, ..., 0)``: ``Σ softplus(b_A) + H log 2``."""
        return float(np.logaddexp(0.0, self.base_vbias).sum() + self.n_hidden * np.log(2.0))

    def log_offset(self, coef) -> np.ndarray:
        """``log 2`` times the number of hidden units of the models with ``λ_m = 0``.

        Parameters
        ----------
        coef : array_like of shape (..., 1 + M)

        Returns
        -------
        ndarray of shape (...)
        """
        c = np.asarray(coef, dtype=np.float64)
        return (c[..., 1:] == 0.0) @ self.hidden_sizes * np.log(2.0)

    def intermediate(self, coef) -> RBMParams:
        """The RBM of one point of the path (a copy; for tests and inspection).

        Parameters
        ----------
        coef : array_like of shape (1 + M,)

        Returns
        -------
        RBMParams
            ``n_visible`` × ``H`` with ``W = [λ_1 W_1, ...]``,
            ``vbias = λ_0 b_A + Σ λ_m vbias_m``, ``hbias = [λ_1 hbias_1, ...]``.
        """
        c = np.asarray(coef, dtype=np.float64)
        if c.shape != (1 + self.n_models,):
            raise ValueError(f"coef must have shape ({1 + self.n_models},), got {c.shape}")
        scale = c[self.model_of_hidden]
        return RBMParams(self.W * scale, c @ self._vb64, self.hbias * scale)

    def _hidden_scale(self, coef: np.ndarray) -> np.ndarray:
        """Per-hidden-unit coefficients: (..., 1) for one model, (..., H) for several."""
        if self.n_models == 1:
            return coef[..., 1:2]
        return coef[..., self.model_of_hidden]

    # ------------------------------------------------------------- sampling
    def start(self, v) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(v, a, vb)`` for states ``v``: activations ``a = hbias + v·W`` (n, H), ``vb = v·vbiasesᵀ`` (n, 1+M)."""
        v = np.asarray(v, dtype=self.dtype)
        return v, self.hidden_activation(v), self._visible_terms(v)

    def hidden_activation(self, v: np.ndarray) -> np.ndarray:
        """``hbias + v·W`` of states ``v`` (n, n_visible) in the sampling dtype, by one matrix product."""
        a = v @ self.W
        a += self.hbias
        return a

    def _visible_terms(self, v: np.ndarray) -> np.ndarray:
        return np.asarray(v, dtype=np.float64) @ self._vb64.T

    def sample_base(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` exact draws of ``v`` from the base-rate model (stochastic)."""
        p = 1.0 / (1.0 + np.exp(-self.base_vbias))
        return (rng.random((n, self.n_visible)) < p).astype(self.dtype)

    def hidden_logits(self, a: np.ndarray, coef) -> np.ndarray:
        """Tempered hidden logits ``λ_m(j) (hbias + v·W)_j`` from activations ``a`` (n, H)."""
        return self._hidden_scale(np.atleast_2d(np.asarray(coef, dtype=self.dtype))) * a

    def visible_logits(self, h: np.ndarray, coef) -> np.ndarray:
        """Visible logits ``λ_0 b_A + Σ_m λ_m (vbias_m + W_m·h_m)`` of hidden states ``h`` (n, H)."""
        c = np.atleast_2d(np.asarray(coef, dtype=self.dtype))
        return c @ self.vbiases + (h * self._hidden_scale(c)) @ self.WT

    def at(self, coef) -> "PathPoint":
        """The point ``λ = coef`` as a target of :func:`pymc_rbm.kernels.sweep.sweep`.

        Parameters
        ----------
        coef : array_like of shape (1 + M,) or (n, 1 + M)
            One point for all chains or one per chain.
        """
        return PathPoint(self, coef)

    def sweep(self, rng: np.random.Generator, v: np.ndarray, a: np.ndarray, coef, *, refresh: bool = True):
        """One transition that leaves ``p_λ(v)`` invariant (stochastic): the kernels' sweep at :meth:`at` ``(coef)``.

        Draws ``h ~ p_λ(h | v)``, then updates ``v`` given ``h`` by the path's
        rule (:attr:`rule`): the Gibbs rule for ``"gibbs"``, else
        flip-the-state mixed with Gibbs by ``alpha``. As a kernel on ``v`` it
        is reversible with respect to ``p_λ(v)``.

        Parameters
        ----------
        rng : numpy.random.Generator
        v : ndarray of shape (n, n_visible)
        a : ndarray of shape (n, H)
            Activations of ``v`` (from :meth:`start`).
        coef : array_like of shape (1 + M,) or (n, 1 + M)
            One point for all chains or one per chain.
        refresh : bool, default True
            Recompute the new activations by one matrix product. With
            ``False`` they are ``a`` updated by the rows of ``W`` of the
            visible units that changed (the sweep's carried hidden input);
            callers that carry activations pass ``False`` and refresh every
            :data:`~pymc_rbm.kernels.activations.FULL_EVERY` sweeps.

        Returns
        -------
        v, a, vb : the new state as :meth:`start` returns it.
        """
        state, _ = sweep(rng, RBMState(v, None, a), self.at(coef), self.rule, refresh=refresh)
        return state.v, state.hidden_input, self._visible_terms(state.v)

    # --------------------------------------------------------------- density
    def log_f(self, a: np.ndarray, vb: np.ndarray, coef) -> np.ndarray:
        """``log f_λ(v)`` of each chain at its own (or a shared) ``λ``.

        Parameters
        ----------
        a : ndarray of shape (n, H)
        vb : ndarray of shape (n, 1 + M)
        coef : array_like of shape (1 + M,) or (n, 1 + M)

        Returns
        -------
        ndarray of float64 of shape (n,)
        """
        c = np.asarray(coef, dtype=np.float64)
        lin = vb @ c if c.ndim == 1 else (vb * c).sum(axis=-1)
        z = self._hidden_scale(np.atleast_2d(c).astype(self.dtype)) * a
        return lin + softplus_sum_(z)

    def log_f_ladder(self, a: np.ndarray, vb: np.ndarray, coefs, *, max_block: int = 2**18) -> np.ndarray:
        """``log f_λ(v)`` of each chain at every point of a ladder.

        The sum of ``softplus`` over chains × labels × hidden units is the
        cost of a draw of RTS's β and of SAMS's global observation; it is
        formed in blocks of chains of at most ``max_block`` elements (small
        enough to stay in cache), spread over the cores
        (:func:`~pymc_rbm._runtime.map_blocks`). The blocks do not depend on
        the number of cores, so neither does the result.

        Parameters
        ----------
        a : ndarray of shape (n, H)
        vb : ndarray of shape (n, 1 + M)
        coefs : array_like of shape (L, 1 + M)
        max_block : int
            Largest ``chains × labels × H`` block formed at once.

        Returns
        -------
        ndarray of float64 of shape (n, L)
        """
        c = np.asarray(coefs, dtype=np.float64)
        out = vb @ c.T
        scale = self._hidden_scale(c.astype(self.dtype))  # (L, 1) or (L, H)
        n, H = a.shape
        L = c.shape[0]
        rows = max(1, max_block // max(1, L * H))  # chains per block
        labels = max(1, max_block // max(1, rows * H))  # labels per block (all of them unless one chain is too big)

        def fill(chains: slice) -> None:
            for s in range(0, L, labels):
                z = scale[None, s : s + labels, :] * a[chains, None, :]
                out[chains, s : s + labels] += softplus_sum_(z)

        map_blocks(fill, (slice(i, i + rows) for i in range(0, n, rows)))
        return out


class PathPoint(NamedTuple):
    """A point ``λ`` of an :class:`AnnealingPath` as a target of :func:`pymc_rbm.kernels.sweep.sweep`.

    Attributes
    ----------
    path : AnnealingPath
    coef : array_like of shape (1 + M,) or (n, 1 + M)
    """

    path: AnnealingPath
    coef: object

    @property
    def W(self) -> np.ndarray:
        """The couplings of all models side by side, (n_visible, H)."""
        return self.path.W

    def hidden_input(self, v: np.ndarray) -> np.ndarray:
        """``hbias + v·W`` (n, H), the same at every point."""
        return self.path.hidden_activation(v)

    def hidden_logits(self, a: np.ndarray) -> np.ndarray:
        """``λ_m(j) (hbias + v·W)_j`` from the hidden input ``a``."""
        return self.path.hidden_logits(a, self.coef)

    def visible_logits(self, h: np.ndarray) -> np.ndarray:
        """``λ_0 b_A + Σ_m λ_m (vbias_m + W_m·h_m)``."""
        return self.path.visible_logits(h, self.coef)


# ------------------------------------------------------------------- pilot
class PilotRun(NamedTuple):
    """What a short AIS run along a fine grid of path points measured.

    Attributes
    ----------
    log_z : ndarray of shape (G,)
        AIS estimates of ``log Z`` at every grid point (exact at the base).
    sd_increment : ndarray of shape (G - 1,)
        Standard deviation over chains of each log-weight increment
        ``log f_g(x) - log f_{g-1}(x)``: the local thermodynamic length of the step.
    states : ndarray of shape (n_chains, n_visible)
        Chain ``m`` stopped at grid point ``stop[m]`` (spread evenly over the grid).
    stop : ndarray of int of shape (n_chains,)
    """

    log_z: np.ndarray
    sd_increment: np.ndarray
    states: np.ndarray
    stop: np.ndarray


def pilot_run(path: AnnealingPath, rng, grid, n_chains: int, bar=None) -> PilotRun:
    """A short AIS run along the path points ``grid`` (stochastic; used to set up RTS and SAMS).

    Parameters
    ----------
    path : AnnealingPath
    rng : numpy.random.Generator
    grid : ndarray of shape (G, 1 + M)
        Path coefficients, starting at the base ``(1, 0, ..., 0)``.
    n_chains : int
    bar : optional progress bar, advanced once per grid point

    Returns
    -------
    PilotRun
    """
    grid = np.asarray(grid, dtype=np.float64)
    G = grid.shape[0]
    v, a, vb = path.start(path.sample_base(rng, n_chains))
    log_w = np.zeros(n_chains)
    log_z = np.empty(G)
    log_z[0] = path.log_z_base
    sd = np.empty(max(G - 1, 0))
    stop = np.linspace(0, G - 1, n_chains).round().astype(np.int64)
    states = v.copy()
    lf_prev = path.log_f(a, vb, grid[0])
    for g in range(1, G):
        inc = path.log_f(a, vb, grid[g]) - lf_prev
        sd[g - 1] = inc.std()
        log_w += inc
        log_z[g] = path.log_z_base + log_mean_exp(log_w)
        v, a, vb = path.sweep(rng, v, a, grid[g], refresh=g % FULL_EVERY == 0)
        lf_prev = path.log_f(a, vb, grid[g])
        here = stop == g
        states[here] = v[here]
        if bar is not None:
            bar.advance()
    return PilotRun(log_z, sd, states, stop)


def thermodynamic_length(sd_increment: np.ndarray, n_per_segment: int) -> np.ndarray:
    """Cumulative thermodynamic length along a pilot's grid.

    The standard deviation of the log-weight increment of one grid step
    measures how far apart two neighbouring distributions are; its running
    sum, smoothed over ``n_per_segment / 50`` steps against the pilot's noise,
    is the length.

    Parameters
    ----------
    sd_increment : ndarray of shape (G - 1,)
        :attr:`PilotRun.sd_increment`.
    n_per_segment : int
        Grid steps per segment of the path (sets the smoothing width).

    Returns
    -------
    ndarray of shape (G,)
        0 at the first grid point, nondecreasing.
    """
    x = np.asarray(sd_increment, dtype=np.float64)
    width = max(1, int(n_per_segment) // 50)
    if width > 1 and x.size > 2:
        pad = np.pad(x, (width // 2, width - 1 - width // 2), mode="edge")
        x = np.convolve(pad, np.ones(width) / width, mode="valid")
    return np.concatenate([[0.0], np.cumsum(x)])


# ------------------------------------------------------------------- setup
def annealing_path(
    models, data=None, *, base=None, base_smoothing: float = 0.005, dtype=np.float64, operator="gibbs"
) -> AnnealingPath:
    """The annealing path from a base distribution to ``models``, with its options bound once.

    Parameters
    ----------
    models : RBMParams or sequence of RBMParams
        The target(s); the base distribution is fitted against the first.
    data : array_like of shape (n_samples, n_visible), optional
        Binary training data for the data base rate.
    base : {None, "data", "mean_field", "target", "zero"} or array_like, optional
        The base distribution (:func:`base_rate_vbias`); default ``"data"``
        with data, else ``"mean_field"``.
    base_smoothing : float, default 0.005
    dtype : numpy dtype, default float64
        Floating type of the sampling arithmetic.
    operator : {"gibbs", "flip"} or float in [0, 1], default "gibbs"
        Visible-layer update of the sweeps.

    Returns
    -------
    AnnealingPath

    Examples
    --------
    >>> from pymc_rbm import RBMParams
    >>> from pymc_rbm.estimators import ais, annealing_path, bar
    >>> p = RBMParams.random(12, 6, rng=0)
    >>> path = annealing_path(p, operator="flip", dtype="float32")
    >>> round(ais(path, n_chains=50, n_steps=500, rng=0).log_z, 1)  # doctest: +SKIP
    """
    dtype = check_sampling_dtype(dtype)
    if isinstance(models, RBMParams):
        first = models
    elif isinstance(models, (list, tuple)) and models and all(isinstance(m, RBMParams) for m in models):
        first = models[0]
    else:
        raise TypeError(f"params must be an RBMParams or a non-empty sequence of them, got {type(models).__name__}")
    b_a = base_rate_vbias(first, data, base=base, smoothing=base_smoothing)
    return AnnealingPath(models, b_a, dtype=dtype, operator=operator)


def as_path(params, data=None, *, estimator=None, data_name: str = "data", **options) -> AnnealingPath:
    """``params`` itself when it is an :class:`AnnealingPath`, else :func:`annealing_path` of it.

    ``options`` are those of :func:`annealing_path` as ``estimator`` (the calling function) received
    them; with a path they must be left at the estimator's defaults (the path fixes them), and ``data``
    (the estimator's argument ``data_name``) None, else a ValueError names them.
    """
    if not isinstance(params, AnnealingPath):
        return annealing_path(params, data, **options)
    defaults = inspect.signature(estimator if estimator is not None else annealing_path).parameters
    given = [name for name, value in options.items() if not _is_default(value, defaults[name].default)]
    if data is not None:
        given.insert(0, data_name)
    if given:
        raise ValueError(
            f"{', '.join(given)}: these belong to the annealing path; pass them to annealing_path(...), "
            "not with a path"
        )
    return params


def single_model_path(params, data=None, *, estimator, **options) -> AnnealingPath:
    """:func:`as_path` for the estimators that anneal to one model (AIS, reverse AIS, BAR, RTS).

    Raises
    ------
    TypeError
        When ``params`` is neither an RBMParams nor an AnnealingPath.
    ValueError
        For a path to several models (:func:`~pymc_rbm.estimators.sams` takes those).
    """
    name = estimator.__name__
    if isinstance(params, AnnealingPath):
        if params.n_models != 1:
            raise ValueError(f"{name} anneals to one target model; sams estimates several in one run")
    elif not isinstance(params, RBMParams):
        raise TypeError(f"params must be an RBMParams or an AnnealingPath, got {type(params).__name__}")
    return as_path(params, data, estimator=estimator, **options)


def _is_default(value, default) -> bool:
    if isinstance(value, np.ndarray) or isinstance(default, np.ndarray):
        return False
    if isinstance(default, type) and issubclass(default, np.generic):  # a dtype
        try:
            return np.dtype(value) == np.dtype(default)
        except TypeError:
            return False
    return value is default or (type(value) is type(default) and value == default)


def count_moves(n_sweeps, sweeps_per_move) -> int:
    """Moves of the temperature (label) in ``n_sweeps`` sweeps, one after every ``sweeps_per_move``; checked.

    Raises
    ------
    ValueError
        Unless both are positive integers with ``n_sweeps >= sweeps_per_move``.
    """
    n_sweeps = check_positive_int(n_sweeps, "n_sweeps")
    sweeps_per_move = check_positive_int(sweeps_per_move, "sweeps_per_move")
    if n_sweeps < sweeps_per_move:
        raise ValueError(f"n_sweeps ({n_sweeps}) must be at least sweeps_per_move ({sweeps_per_move})")
    return n_sweeps // sweeps_per_move


def check_init(init, *, flat: str):
    """``init`` unchanged, or a ValueError unless it is ``"bar"``, ``"ais"``, ``flat`` or not a string (an array)."""
    if isinstance(init, str) and init not in ("bar", "ais", flat):
        raise ValueError(f'init must be "bar", "ais", "{flat}" or an array of log Z guesses, got {init!r}')
    return init


def initial_log_z(init, log_z_pilot: np.ndarray, *, flat: str) -> np.ndarray:
    """Initial guesses of ``log Z_k - log Z_0`` for the labels of a tempered sampler.

    Parameters
    ----------
    init : "bar", "ais", ``flat`` or array_like of shape (K,)
        ``"bar"`` or ``"ais"``: the ladder's estimates (from the BAR start or
        the pilot run); ``flat``: all zero (every label as probable as the
        base); an array: those values, shifted so that the first is 0.
    log_z_pilot : ndarray of shape (K,)
        The ladder's estimates of ``log Z_k``.
    flat : str
        The name the caller gives the flat start.

    Returns
    -------
    ndarray of float64 of shape (K,), first element 0
    """
    K = log_z_pilot.shape[0]
    if isinstance(check_init(init, flat=flat), str):
        return np.zeros(K) if init == flat else log_z_pilot - log_z_pilot[0]
    g = np.array(init, dtype=np.float64, copy=True)
    if g.shape != (K,) or not np.all(np.isfinite(g)):
        raise ValueError(
            f"init must hold {K} finite values (log Z guesses; the ladder has {K} labels), got shape {g.shape}"
        )
    return g - g[0]


def path_blas_threads(n_chains: int, path: "AnnealingPath"):
    """:func:`pymc_rbm._runtime.blas_threads` for ``n_chains`` chains on ``path``."""
    return blas_threads(n_chains, path.n_visible, path.n_hidden)


# ------------------------------------------------------------ error reporting
def check_occupancy(occupancy: np.ndarray, method: str, *, stacklevel: int = 3) -> bool:
    """Warn and return False when a label got less than :data:`COLLAPSED_SHARE` of its share of draws.

    Parameters
    ----------
    occupancy : ndarray of shape (n_labels,)
        Fraction of the draws at each label (RTS: of the last round; SAMS:
        after the first stage).
    method : str
        ``"RTS"`` or ``"SAMS"``, for the message.

    Returns
    -------
    bool
        True when every label got at least that share.
    """
    occupancy = np.asarray(occupancy, dtype=np.float64)
    share = float(occupancy.min() * occupancy.size) if occupancy.size else 1.0
    if share >= COLLAPSED_SHARE:
        return True
    warnings.warn(
        f"{method}: the chains are collapsed (a temperature got {share:.2g} of its share of the draws); the "
        "estimate is unreliable and its standard error is taken from the spread of the runs, which cannot "
        "measure what the chains never visited: use init='ais', more or longer runs, or compare with AIS",
        RuntimeWarning,
        stacklevel=stacklevel,
    )
    return False


def spread_stderr(nominal: float, batches, consistent: bool, *, floor: float = 0.0) -> tuple[float, str]:
    """The standard error RTS and SAMS report: never more precise than their batches agree.

    The rule. RTS's rounds and SAMS's runs are batches: independent
    estimates of one value when all is well. Then the mean of ``n`` of them
    has the ``nominal`` standard error of the method, but at least the
    standard deviation of the batches over ``sqrt(n)``. When a check says
    they are not (RTS: the rounds disagree beyond their errors, chi-square
    at 0.001; SAMS: the runs still move between the middle and the end;
    either: a collapsed ladder), they are not draws around one value and
    averaging them gains nothing: the standard error is then at least the
    standard deviation of the batches themselves (not divided by
    ``sqrt(n)``), and at least ``floor`` (SAMS: the mean move over the second
    half of the run).

    Parameters
    ----------
    nominal : float
        The method's own standard error.
    batches : array_like of shape (n,)
        The batches' estimates.
    consistent : bool
        Whether the method's checks passed.
    floor : float, default 0
        A further lower bound used when the checks failed.

    Returns
    -------
    stderr : float
    rule : {"nominal", "batch_means", "spread"}
        Which term set it: the method's own error, the spread over
        ``sqrt(n)``, or the spread itself (or ``floor``) after a failed check.
    """
    x = np.asarray(batches, dtype=np.float64)
    sd = float(x.std(ddof=1)) if x.size >= 2 else 0.0
    stderr, rule = float(nominal), "nominal"
    if x.size >= 2 and sd / np.sqrt(x.size) > stderr:
        stderr, rule = sd / np.sqrt(x.size), "batch_means"
    if not consistent and max(sd, floor) > stderr:
        stderr, rule = max(sd, float(floor)), "spread"
    return stderr, rule


def check_start(log_z: float, stderr: float, start, method: str, *, stacklevel: int = 3) -> tuple[float, bool]:
    """Compare a tempered estimate with the BAR start it came from; warn and widen when they disagree.

    RTS and SAMS started from BAR (``init="bar"``) estimate the same
    ``log Z`` as their start, by other means. When the two differ by more
    than three standard errors of the difference, the tempered chains have
    moved away from where they started, which on slowly mixing models means
    they have not reached their stationary distribution: the standard error
    is then at least the move.

    Parameters
    ----------
    log_z, stderr : float
        The tempered estimate and its standard error.
    start : LogPartitionEstimate or None
        BAR's estimate at the target (None: no BAR start, nothing to check).
    method : str
        ``"RTS"`` or ``"SAMS"``, for the message.

    Returns
    -------
    stderr : float
    agrees : bool
    """
    if start is None:
        return stderr, True
    gap = float(log_z - start.log_z)
    se = float(np.hypot(stderr, start.stderr))
    if abs(gap) <= 3.0 * se:
        return stderr, True
    warnings.warn(
        f"{method}: the estimate ({log_z:.3f}) moved {gap:+.2f} nats from its BAR start ({start.log_z:.3f}), "
        f"{abs(gap) / se:.1f} standard errors of the difference: the tempered chains have not reached their "
        "stationary distribution, and the standard error is at least that move",
        RuntimeWarning,
        stacklevel=stacklevel,
    )
    return max(float(stderr), abs(gap)), False
