"""A mixture of products as the reference of a ladder in β, each replica carrying its component's label.

From one product reference (independent units) the ladder of an RBM trained on
clustered data meets a first-order transition: the replicas below it look like
the reference, those above it like the data, and a replica coming up does not
turn into a digit within the rungs near the transition (Béreux, Decelle,
Furtlehner & Seoane 2025). A mixture of products

    q(v, h) = Σ_z w_z q_z(v, h),      q_z(v, h) = Π_i Bern(v_i; σ(f_zi)) Π_j Bern(h_j; σ(g_zj)),

whose components sit in the model's modes (mean-field fixed points,
:func:`~pymc_rbm.estimators.base_rate.mixture_reference`) lets each mode grow
out of its own component. The ladder runs on the states ``(v, h, z)``:

    p_β(v, h, z) ∝ exp(-β E(v, h)) [w_z q_z(v, h)]^(1 - β).

At ``β = 1`` its marginal in ``(v, h)`` is the RBM's (``z`` uniform and
independent); at ``β = 0`` it is the mixture with its labels, which a round
draws exactly and independently (:meth:`ProductMixture.draw`: with sharp
components, alternating ``z | v, h`` and ``(v, h) | z`` would stay in one).
Given ``z`` both layers' conditionals are products (:class:`MixturePoint`, a
target of :func:`~pymc_rbm.kernels.sweep.sweep`):
``h | v, z`` has the logits ``β (c + vW) + (1 - β) g_z``,
``v | h, z`` ``β (b + W h) + (1 - β) f_z``; and ``z | v, h ∝ [w_z q_z(v, h)]^(1 - β)``
(:meth:`ProductMixture.draw_labels`).

Neighbours exchange their states ``(v, h)`` with the labels summed out
(:func:`swap_log_ratio`): the ratio of the marginals
``p_β(v, h) ∝ exp(-β E) Σ_z [w_z q_z(v, h)]^(1 - β)``, after which each
replica's label is redrawn from its conditional at its new rung. The swap
leaves the product of the marginals invariant and the redraw restores each
label's conditional, so the round leaves the product of the ``p_β(v, h, z)``
invariant. Carrying the labels along instead would be exact too, but the top
rung's label is uniform (it enters no target at ``β = 1``) and, with sharp
components, almost never fits the state it would carry down.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from pymc_rbm.kernels.sweep import RBMAtBeta
from pymc_rbm.layers import draw_index
from pymc_rbm.primitives import sigmoid, softplus

__all__ = ["MixturePoint", "ProductMixture", "swap_log_ratio"]


@dataclass(frozen=True, eq=False)
class ProductMixture:
    """A mixture of products of Bernoullis on both layers of an RBM.

    It holds read-only float64 copies of the arrays it is given, and with them the constant
    ``log w_z + log q_z(0, 0)`` of each component, which every label weight needs.

    Attributes
    ----------
    visible_logits : ndarray of shape (n_components, n_visible)
        ``f_z``: component ``z``'s visible units are on with probability ``σ(f_zi)``.
    hidden_logits : ndarray of shape (n_components, n_hidden)
        ``g_z``, likewise for the hidden units.
    log_weights : ndarray of shape (n_components,)
        ``log w_z``, normalised (``Σ_z w_z = 1``).
    """

    visible_logits: np.ndarray
    hidden_logits: np.ndarray
    log_weights: np.ndarray
    _log_base: np.ndarray = field(init=False, repr=False)
    _probabilities: tuple = field(init=False, repr=False)

    def __post_init__(self):
        for name in ("visible_logits", "hidden_logits", "log_weights"):
            a = np.array(getattr(self, name), dtype=np.float64)
            a.flags.writeable = False
            object.__setattr__(self, name, a)
        f, g, lw = self.visible_logits, self.hidden_logits, self.log_weights
        if f.ndim != 2 or g.ndim != 2 or lw.shape != (f.shape[0],) or g.shape[0] != f.shape[0]:
            raise ValueError(f"visible_logits (n_components, n_visible), hidden_logits (n_components, n_hidden) and "
                             f"log_weights (n_components,) must agree, got {f.shape}, {g.shape} and {lw.shape}")
        base = lw - softplus(f).sum(axis=1) - softplus(g).sum(axis=1)  # log w_z + log q_z(0, 0)
        base.flags.writeable = False
        object.__setattr__(self, "_log_base", base)
        probabilities = (sigmoid(f), sigmoid(g))  # each component's units, for its draws
        for a in probabilities:
            a.flags.writeable = False
        object.__setattr__(self, "_probabilities", probabilities)

    @classmethod
    def from_probabilities(cls, m_v, m_h, weights=None, *, clip: float = 1e-3) -> "ProductMixture":
        """The mixture whose components have the unit probabilities ``m_v``, ``m_h``, clipped to ``[clip, 1 - clip]``.

        Parameters
        ----------
        m_v : array_like of shape (n_components, n_visible)
        m_h : array_like of shape (n_components, n_hidden)
        weights : array_like of shape (n_components,), optional
            Positive component weights (normalised here); equal by default.
        clip : float, default 1e-3
            Keeps every state possible under every component (logits within ``±log((1 - clip) / clip)``).

        Raises
        ------
        ValueError
            For shapes that do not match, probabilities outside [0, 1], non-positive weights or a clip outside
            (0, 0.5).
        """
        m_v = np.asarray(m_v, dtype=np.float64)
        m_h = np.asarray(m_h, dtype=np.float64)
        if m_v.ndim != 2 or m_h.ndim != 2 or m_v.shape[0] != m_h.shape[0] or m_v.shape[0] < 1:
            raise ValueError(f"m_v and m_h must be (n_components, n_units) with the same number of components, got "
                             f"{m_v.shape} and {m_h.shape}")
        if not (np.all((m_v >= 0) & (m_v <= 1)) and np.all((m_h >= 0) & (m_h <= 1))):
            raise ValueError("component probabilities must lie in [0, 1]")
        if not 0.0 < clip < 0.5:
            raise ValueError(f"clip must lie in (0, 0.5), got {clip}")
        k = m_v.shape[0]
        w = np.full(k, 1.0 / k) if weights is None else np.asarray(weights, dtype=np.float64)
        if w.shape != (k,) or not np.all(np.isfinite(w)) or np.any(w <= 0):
            raise ValueError(f"weights must be {k} positive numbers, got {weights!r}")

        def logits(m):
            m = np.clip(m, clip, 1.0 - clip)
            return np.log(m) - np.log1p(-m)

        return cls(logits(m_v), logits(m_h), np.log(w / w.sum()))

    @property
    def n_components(self) -> int:
        return self.log_weights.shape[0]

    def label_log_weights(self, v: np.ndarray, h: np.ndarray) -> np.ndarray:
        """``log w_z + log q_z(v, h)`` of every state and component, (n, n_components).

        Parameters
        ----------
        v : ndarray of shape (n, n_visible)
        h : ndarray of shape (n, n_hidden)
        """
        return self._log_base + v @ self.visible_logits.T + h @ self.hidden_logits.T

    def draw_labels(self, rng: np.random.Generator, v: np.ndarray, h: np.ndarray, beta, *,
                    label_log_weights: np.ndarray | None = None) -> np.ndarray:
        """``z ~ p_β(z | v, h) ∝ [w_z q_z(v, h)]^(1 - β)`` for each state (stochastic).

        Parameters
        ----------
        rng : numpy.random.Generator
            One uniform per state (inverse CDF, :func:`~pymc_rbm.layers.draw_index`).
        v : ndarray of shape (n, n_visible)
        h : ndarray of shape (n, n_hidden)
        beta : ndarray of shape (n,)
        label_log_weights : ndarray of shape (n, n_components), optional
            :meth:`label_log_weights` of these states when the caller has them (``v`` and ``h`` are then
            not read).

        Returns
        -------
        ndarray of int64 of shape (n,)
        """
        ell = self.label_log_weights(v, h) if label_log_weights is None else label_log_weights
        lw = (1.0 - np.asarray(beta, dtype=np.float64))[:, None] * ell
        p = np.exp(lw - lw.max(axis=1, keepdims=True))
        return draw_index(rng.random(p.shape[0]) * p.sum(axis=1), p)

    def draw(self, rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``n`` independent draws ``z ~ w``, ``(v, h) ~ q_z`` (stochastic): the ladder's bottom rung exactly.

        Returns
        -------
        v : ndarray of shape (n, n_visible)
        h : ndarray of shape (n, n_hidden)
        z : ndarray of int64 of shape (n,)
        """
        z = draw_index(rng.random(n), np.exp(self.log_weights))
        v, h = self.sample(rng, z)
        return v, h, z

    def sample(self, rng: np.random.Generator, z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(v, h) ~ q_z`` for each label of ``z`` (n,), float 0/1 arrays (n, n_visible), (n, n_hidden)."""
        z = np.asarray(z)
        p_v, p_h = self._probabilities
        v = rng.random((z.size, p_v.shape[1])) < p_v[z]
        h = rng.random((z.size, p_h.shape[1])) < p_h[z]
        return v.astype(np.float64), h.astype(np.float64)

    def at(self, params, beta: np.ndarray, z: np.ndarray) -> "MixturePoint":
        """The target of :func:`~pymc_rbm.kernels.sweep.sweep` of states with labels ``z`` (n,) at ``beta`` (n,)."""
        b = np.asarray(beta, dtype=np.float64)[:, None]
        return MixturePoint(RBMAtBeta(params, b), (1.0 - b) * self.visible_logits[z], (1.0 - b) * self.hidden_logits[z])


class MixturePoint(NamedTuple):
    """``p_β(v, h | z)`` of :class:`ProductMixture`'s ladder as a target of :func:`~pymc_rbm.kernels.sweep.sweep`:
    the RBM at ``β`` (:class:`~pymc_rbm.kernels.sweep.RBMAtBeta`) plus each state's label's fields.

    Attributes
    ----------
    rbm : RBMAtBeta
        The RBM at ``β``, one per state: ``beta`` of shape (n, 1).
    visible_fields : ndarray of shape (n, n_visible)
        ``(1 - β) f_z`` of each state's label.
    hidden_fields : ndarray of shape (n, n_hidden)
        ``(1 - β) g_z``.
    """

    rbm: RBMAtBeta
    visible_fields: np.ndarray
    hidden_fields: np.ndarray

    @property
    def W(self) -> np.ndarray:
        return self.rbm.W

    def hidden_input(self, v: np.ndarray) -> np.ndarray:
        return self.rbm.hidden_input(v)

    def hidden_logits(self, a: np.ndarray) -> np.ndarray:
        """``β a + (1 - β) g_z`` from the hidden input ``a`` (not modified)."""
        return self.rbm.hidden_logits(a) + self.hidden_fields

    def visible_logits(self, h: np.ndarray) -> np.ndarray:
        """``β (vbias + W·h) + (1 - β) f_z``, (n, n_visible)."""
        return self.rbm.visible_logits(h) + self.visible_fields


def swap_log_ratio(betas: np.ndarray, e: np.ndarray, label_log_weights: np.ndarray, pairs=None) -> np.ndarray:
    """Log Metropolis ratio of exchanging neighbouring replicas' ``(v, h)`` on a mixture's ladder, labels summed out.

    With ``M_β(x) = log Σ_z exp((1 - β) ℓ_z(x))`` and ``ℓ_z = log w_z + log q_z``, the pair ``(r, r + 1)``
    has ``(β_{r+1} - β_r)(E_{r+1} - E_r) + M_{β_r}(x_{r+1}) - M_{β_r}(x_r) - M_{β_{r+1}}(x_{r+1})
    + M_{β_{r+1}}(x_r)``.

    Parameters
    ----------
    betas : ndarray of shape (k,)
    e : ndarray of shape (k, n)
        ``E(v, h)`` of each replica of ``n`` chains.
    label_log_weights : ndarray of shape (k, n, n_components)
        ``ℓ_z`` of each replica's state (:meth:`ProductMixture.label_log_weights`).
    pairs : ndarray of int, optional
        The lower rungs of the pairs wanted (a round's, :func:`~pymc_rbm.kernels.tempering.swap_pairs`); the
        other rows are NaN. Default: every pair.

    Returns
    -------
    ndarray of shape (k - 1, n)
    """
    def marginal(beta, ell):  # M_β of states ℓ (..., n_components) at β (..., 1)
        a = (1.0 - beta) * ell
        top = a.max(axis=-1, keepdims=True)
        return (top + np.log(np.exp(a - top).sum(axis=-1, keepdims=True)))[..., 0]

    b = np.asarray(betas, dtype=np.float64)
    lower = np.arange(b.size - 1) if pairs is None else np.asarray(pairs, dtype=np.int64)
    upper = lower + 1
    lo, hi = label_log_weights[lower], label_log_weights[upper]
    b_lo, b_hi = b[lower][:, None, None], b[upper][:, None, None]
    out = np.full((b.size - 1, e.shape[1]), np.nan)
    out[lower] = ((b[upper] - b[lower])[:, None] * (e[upper] - e[lower])
                  + marginal(b_lo, hi) - marginal(b_lo, lo) - marginal(b_hi, hi) + marginal(b_hi, lo))
    return out
