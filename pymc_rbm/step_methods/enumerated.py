"""Independent exact draws of an RBM variable whose smaller layer can be enumerated.

When the smaller layer of an RBM has ``k`` units with ``2**k`` small enough to
list, summing the larger layer out analytically gives the exact marginal of
the smaller one (:func:`pymc_rbm.estimators.exact.enumerated_log_weights`,
one enumeration shared with ``log Z``). A draw of it by inversion of its
cumulative distribution, then of the other layer from its conditional, is an
exact draw of the joint ``p(v, h)``: draws are independent, there is nothing
to mix and no chain to tune.

**Alone**, :class:`ExactDraws` returns those draws: every draw of every chain
(and of every row of a batched variable) is independent and exactly
distributed.

**Inside a larger model**, let the model's density as a function of the
visible units be ``p_RBM(v) L(v)``, ``L`` collecting every other model term
that involves ``v`` (:class:`~pymc_rbm.step_methods.terms.OtherTerms`). The
exact draw ``(v', h') ~ p_RBM`` is then an independence proposal (Tierney
1994) for ``π(v, h) ∝ p_RBM(v, h) L(v)``: its Metropolis-Hastings ratio is

    π(v', h') p_RBM(v, h) / (π(v, h) p_RBM(v', h')) = L(v') / L(v),

so accepting with ``min(1, L(v') / L(v))`` leaves ``π``, and so the full
conditional of ``v``, invariant. For a batched variable (``K`` rows) the rows
are visited in turn: row ``k``'s proposal is accepted with ``L`` evaluated
at the batch where only row ``k`` changed, each update reversible for
``π(v_k | v_{-k})``, which is exact whether or not ``L`` factorises over
rows (where it does, all rows are decided in one vectorised call: the
correction of every RBM step, :meth:`~pymc_rbm.step_methods.base.RBMStep._correct`).
A rejected row keeps its ``v`` and draws a fresh ``h ~ p(h | v)``, so
the hidden state is never stale (it is auxiliary: nothing reads it).

The proposal ignores ``L``: where ``L`` is informative it is rarely accepted,
which is why ``pm.sample`` picks this step by itself only where no other
term involves ``v`` (:meth:`ExactDraws.competence`).
"""

from __future__ import annotations

import numpy as np
from pymc.step_methods.compound import Competence

from pymc_rbm.energy import hidden_activation, sigmoid, softplus, visible_activation
from pymc_rbm.estimators.exact import enumerated_log_weights, enumeration_cost, states_at
from pymc_rbm.kernels.activations import count_changes
from pymc_rbm.params import RBMParams
from pymc_rbm.random_variable import layer_sizes, rbm_params_of
from pymc_rbm.step_methods.base import RBMStep, has_constant_parameters
from pymc_rbm.step_methods.terms import free_in_model, other_terms_involve

__all__ = ["ExactDraws", "EXACT_DRAWS_MAX_BITS", "EXACT_DRAWS_MAX_SECONDS", "exact_draws_pay"]

#: Largest smaller layer for which ``pm.sample`` picks :class:`ExactDraws` by itself (``2**22`` states: 64 MiB
#: of log weights and cumulative probabilities). The step itself enumerates up to the estimators' limit.
EXACT_DRAWS_MAX_BITS = 22

#: Longest estimated one-off enumeration (:func:`~pymc_rbm.estimators.exact.enumeration_cost`, in seconds) for
#: which ``pm.sample`` picks :class:`ExactDraws` by itself. On two threads 784 x 20 (``2**20`` states) is
#: estimated at 1.4 s and took 2.8 s; 784 x 21 and 784 x 22, estimated at 2.7 and 5.5 s, took 11 and 22 s on a
#: machine loaded by other jobs (load 3 on 2 cores): still well under what replica exchange needs on such
#: models, and paid once.
EXACT_DRAWS_MAX_SECONDS = 10.0


def exact_draws_pay(var, model=None) -> bool:
    """Whether ``pm.sample`` should sample ``var`` by :class:`ExactDraws` rather than replica exchange.

    True for a free :class:`~pymc_rbm.RBM` variable whose parameters are
    constants or data, whose smaller layer has at most
    :data:`EXACT_DRAWS_MAX_BITS` units and is estimated to enumerate within
    :data:`EXACT_DRAWS_MAX_SECONDS` (in the memory available), and that no
    other term of the model involves (independent draws are then exact and
    need no correction).

    Parameters
    ----------
    var : TensorVariable
        A random variable of the model.
    model : pymc.Model, optional
        Taken from the context; without a model (none given, none on the
        context stack) the answer is False, since the other terms cannot be
        checked.

    Returns
    -------
    bool
    """
    if not has_constant_parameters(var):
        return False
    model = free_in_model(var, model)
    if model is None:
        return False
    sizes = layer_sizes(rbm_params_of(var).W)
    if sizes is None or min(sizes) > EXACT_DRAWS_MAX_BITS:
        return False
    cost = enumeration_cost(min(sizes), max(sizes))
    if cost.seconds > EXACT_DRAWS_MAX_SECONDS:
        return False
    if cost.available_bytes is not None and 2 * cost.bytes > cost.available_bytes:
        return False
    return not other_terms_involve(model, var)


class ExactDraws(RBMStep):
    """Independent exact draws of an :class:`~pymc_rbm.RBM` variable by enumerating its smaller layer.

    The smaller layer (``k`` units) is drawn from its exact marginal, whose
    ``2**k`` probabilities are enumerated once (with ``log Z``, cached), and
    the other layer from its conditional given it; every row of a batched
    variable gets its own draw, all in one vectorised call. When other model
    terms ``L(v)`` involve the visible units, the draw is an independence
    proposal accepted with probability ``min(1, L(v') / L(v))``, row by row
    (exact for any ``L``; see :mod:`pymc_rbm.step_methods.enumerated`).

    ``pm.sample`` picks this step by itself (competence ``IDEAL``, ahead of
    :class:`~pymc_rbm.step_methods.ReplicaExchange`) where that pays: see
    :func:`exact_draws_pay`. Options reach the automatic step by its name:
    ``pm.sample(exact_draws={"record_hidden": True})``.

    Parameters
    ----------
    vars : RBM variable or list of them, optional
        Free RBM variables to sample; by default all of the model's. Their
        weights and biases must be constants or data.
    max_bits : int, optional
        Largest smaller layer to enumerate (default
        :data:`~pymc_rbm.estimators.exact.MAX_ENUMERATION_BITS`); larger ones,
        and enumerations that would need more memory or time than allowed,
        are refused with :class:`~pymc_rbm.estimators.exact.EnumerationTooLarge`.
    record_hidden : bool, default False
        Record the hidden state of each draw as the sampler stat ``hidden``.
    model, rng, initial_point, compile_kwargs, blocked, random_start
        As for every RBM step method (:class:`~pymc_rbm.step_methods.base.RBMStep`).

    Notes
    -----
    Sampler stats are those of :class:`~pymc_rbm.step_methods.BlockGibbs`
    (``accept`` and ``accept_rate`` are 1 without other terms) and
    ``n_states``, the number of enumerated states. The enumeration is made
    when the step is built (and again per chain when parameters that are
    data changed); about 3 s for 784 x 20 units on two threads, a
    millisecond for 784 x 10. A draw then costs a binary search in ``2**k``
    cumulative probabilities and one conditional draw of the other layer.

    Examples
    --------
    >>> import pymc as pm
    >>> from pymc_rbm import RBM, RBMParams, ExactDraws
    >>> p = RBMParams.random(6, 4, rng=0)
    >>> with pm.Model():
    ...     v = RBM("v", p.W, p.vbias, p.hbias, shape=(3, 6))  # three independent rows
    ...     idata = pm.sample(draws=50, tune=10, chains=1, step=ExactDraws(), progressbar=False,
    ...                       compute_convergence_checks=False, random_seed=1)
    >>> int(idata.sample_stats["n_states"].max())
    16
    """

    name = "exact_draws"
    keeps_hidden = False

    def __init__(self, vars=None, *, max_bits: int | None = None, record_hidden: bool = False, **kwargs):
        for option in ("sweeps", "compiled"):
            if option in kwargs:
                raise TypeError(f"ExactDraws has no option {option!r}: every draw is independent and exact")
        self.max_bits = max_bits
        self._log_weights = None
        super().__init__(vars, record_hidden=record_hidden, **kwargs)
        if self._param_fn is not None:
            raise ValueError(
                f"ExactDraws needs the weights and biases of {self._name!r} to be constants or data: the "
                "enumeration would otherwise be redone whenever they change. Use FlipTheState or BlockGibbs "
                "for an RBM with random parameters."
            )
        self.stats_dtypes_shapes = {**self.stats_dtypes_shapes, "n_states": (np.int64, [])}
        self.stats_dtypes = [{k: d for k, (d, _) in self.stats_dtypes_shapes.items()}]

    @staticmethod
    def competence(var, has_grad=None):
        """``IDEAL`` where exact draws pay (:func:`exact_draws_pay`); otherwise ``COMPATIBLE`` for RBM variables
        with constant parameters (usable, never picked) and ``INCOMPATIBLE`` for everything else.

        Registered ahead of :class:`~pymc_rbm.step_methods.ReplicaExchange`,
        which is also ``IDEAL`` there: ``pm.sample`` keeps the first of equally
        competent steps.
        """
        if exact_draws_pay(var):
            return Competence.IDEAL
        return Competence.COMPATIBLE if has_constant_parameters(var) else Competence.INCOMPATIBLE

    # ------------------------------------------------------------ set-up
    def _set_params(self, W, vbias, hbias, *, validate: bool) -> None:
        """Take the parameters and their enumeration (cached: the same model is enumerated once)."""
        super()._set_params(W, vbias, hbias, validate=validate)
        p = self.params
        log_w, log_z, layer = enumerated_log_weights(RBMParams(p.W, p.vbias, p.hbias), max_bits=self.max_bits)
        if log_w is not self._log_weights:
            self._log_weights = log_w
            self._cdf = np.cumsum(np.exp(log_w - log_z))
            self._cdf_total = float(self._cdf[-1])
        self.enumerated_layer = layer
        self.n_states = int(log_w.size)
        self._k = int(log_w.size).bit_length() - 1

    # ------------------------------------------------------------ the draw
    def _exact_draws(self) -> tuple[np.ndarray, np.ndarray]:
        """``(v, h) ~ p_RBM`` for every row, independently (stochastic).

        Returns
        -------
        v : ndarray of float64 of shape (n_chains, n_visible)
        h : ndarray of float64 of shape (n_chains, n_hidden)
        """
        n = self._n_chains
        u = self.rng.random(n) * self._cdf_total
        idx = np.minimum(np.searchsorted(self._cdf, u, side="right"), self.n_states - 1)
        states = states_at(idx, self._k)
        if self.enumerated_layer == "hidden":
            h = states
            v = (self.rng.random((n, self.n_visible)) < sigmoid(visible_activation(h, self.params))).astype(np.float64)
        else:
            v = states
            h = self._draw_hidden(hidden_activation(v, self.params))
        return v, h

    def step(self, point):
        """One draw: an independent exact draw of every row, accepted by ``L(v') / L(v)`` with other terms."""
        point = self._chain_start(point)
        c, n = self.carried, self._n_chains
        v_in = point[self._name].reshape(n, self._shape[-1])
        moved = not self._is_left(v_in)
        if moved:
            c.rest = None  # log L of the state this step left
        h_prev = None if moved else c.hidden_state
        v, h = self._exact_draws()
        accept = accepted = self._ones
        if self.corrected:
            proposal = v.copy()
            v, accept, accepted = self._accept_rows(point, v_in.astype(np.float64), v)
            rejected = np.flatnonzero((v != proposal).any(axis=-1))
            if rejected.size:  # a rejected row keeps its v and gets a fresh h ~ p(h | v)
                h[rejected] = self._draw_hidden(hidden_activation(v[rejected], self.params))
        a_h = hidden_activation(v, self.params)
        free_energy = -(v @ self.params.vbias) - softplus(a_h).sum(axis=-1)
        v_out = v.astype(self._out_dtype)
        c.visible_state, c.hidden_state, c.hidden_input, c.visible_input = v, h, a_h, None
        self._leave(v_out)
        n_hidden_changed = self._all_hidden if h_prev is None else count_changes(h, h_prev)
        stats = self._chain_stats(free_energy, count_changes(v_out, v_in), n_hidden_changed, accept, accepted, moved)
        stats["n_states"] = self.n_states
        if self.record_hidden:
            stats["hidden"] = h.astype(np.int8).reshape(-1)  # flat for a batch, as RBMStep records it
        out = point.copy()
        out[self._name] = v_out.reshape(self._shape)
        return out, [stats]
