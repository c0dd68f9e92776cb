"""Block Gibbs sampling of an RBM (units of any layer type of :mod:`pymc_rbm.layers`).

One sweep is the periodic scheme of Brügge, Fischer & Igel (2013,
§2): "we visit all hidden and all visible variables alternately in a
block-wise fashion and update them according to their conditional
probability given the state of the other layer [...] Thus, the Gibbs
transition operator G can be decomposed into two operators G_h and G_v
(with G = G_h G_v)". With transition matrices acting on row vectors,
``G = G_h G_v`` means: first the hidden layer given ``v``, then the visible
layer given the new ``h``.
"""

from __future__ import annotations

import numpy as np
from pymc_rbm.kernels.layer import GIBBS
from pymc_rbm.kernels.state import RBMState, SweepInfo
from pymc_rbm.kernels.sweep import at_beta, sweep

__all__ = ["sample_hiddens", "sample_visibles", "gibbs_sweep", "init_state", "build_kernel"]


def sample_hiddens(rng: np.random.Generator, v: np.ndarray, params, beta=None) -> np.ndarray:
    """Draw ``h ~ p_β(h | v)`` for a batch of chains (stochastic).

    Parameters
    ----------
    rng : numpy.random.Generator
    v : ndarray of shape (n_chains, n_visible)
        Visible states (values in {0, 1} for Bernoulli units).
    params : RBMParams or SpinRBMParams
    beta : float or ndarray of shape (n_chains,), optional
        Inverse temperature; ``p_β(h_j = 1 | v) = sigmoid(β (hbias_j + (v·W)_j))`` for Bernoulli units.

    Returns
    -------
    ndarray of shape (n_chains, n_hidden)
        Values of the hidden layer type, in the floating type of ``params``.
    """
    target = at_beta(params, beta, v.shape[0])
    return params.hidden.update(rng, None, target.hidden_logits(target.hidden_input(v)), GIBBS)[0]


def sample_visibles(rng: np.random.Generator, h: np.ndarray, params, beta=None) -> np.ndarray:
    """Draw ``v ~ p_β(v | h)`` for a batch of chains (stochastic).

    Parameters
    ----------
    rng : numpy.random.Generator
    h : ndarray of shape (n_chains, n_hidden)
        Hidden states (values in {0, 1} for Bernoulli units).
    params : RBMParams or SpinRBMParams
    beta : float or ndarray of shape (n_chains,), optional
        Inverse temperature; ``p_β(v_i = 1 | h) = sigmoid(β (vbias_i + (W·h)_i))`` for Bernoulli units.

    Returns
    -------
    ndarray of shape (n_chains, n_visible)
        Values of the visible layer type, in the floating type of ``params``.
    """
    return params.visible.update(rng, None, at_beta(params, beta, h.shape[0]).visible_logits(h), GIBBS)[0]


def gibbs_sweep(rng: np.random.Generator, state: RBMState, params, beta=None) -> tuple[RBMState, SweepInfo]:
    """One block Gibbs sweep ``G = G_h G_v``: hidden layer given v, then visible layer given h (stochastic).

    Parameters
    ----------
    rng : numpy.random.Generator
    state : RBMState
        ``v`` of shape (n_chains, n_visible); ``state.h`` is not used (it is
        redrawn from ``p_β(h | v)``) except to count the hidden changes.
    params : RBMParams
    beta : float or ndarray of shape (n_chains,), optional
        Inverse temperature, one per chain or shared.

    Returns
    -------
    state : RBMState
        The new ``(v, h)``, 0/1 values in the dtypes of the old state (``h``
        in the floating type of ``params`` when ``state.h`` is None).
    info : SweepInfo
        Numbers of visible and hidden units that changed, shape (n_chains,).

    Examples
    --------
    >>> import numpy as np
    >>> from pymc_rbm import RBMParams
    >>> from pymc_rbm.kernels import init_state, gibbs_sweep
    >>> rng = np.random.default_rng(0)
    >>> params = RBMParams.random(6, 4, rng=1)
    >>> state = init_state(rng, np.zeros((10, 6)), params)
    >>> state, info = gibbs_sweep(rng, state, params)
    >>> state.v.shape, info.n_changed.shape
    ((10, 6), (10,))
    """
    return sweep(rng, state, at_beta(params, beta, state.v.shape[0]), GIBBS)


def init_state(rng: np.random.Generator, v, params, beta=None) -> RBMState:
    """A validated state for visible values ``v``, with ``h ~ p_β(h | v)`` (stochastic).

    This is also how a step method refreshes a stale hidden state: whenever
    ``v`` or the parameters changed since the last sweep, ``h`` must be
    redrawn from ``p(h | v)`` before a flip-the-state sweep uses it.

    Parameters
    ----------
    rng : numpy.random.Generator
    v : array_like of shape (n_chains, n_visible) or (n_visible,)
        Visible values of the visible layer type ({0, 1} for Bernoulli
        units, {-1, +1} for spins); a single state is taken as one chain.
        It is copied, never modified.
    params : RBMParams or SpinRBMParams
    beta : float or ndarray of shape (n_chains,), optional

    Returns
    -------
    RBMState
        ``v`` as a float copy of shape (n_chains, n_visible), ``h`` drawn.

    Raises
    ------
    ValueError
        For non-binary values or a wrong number of visible units.
    """
    v = params.visible.check(v, params.n_visible, name="v", dtype=params.dtype)
    if v.ndim == 1:
        v = v[None, :]
    elif v.ndim != 2:
        raise ValueError(f"v must have shape (n_chains, n_visible), got {v.shape}")
    return RBMState(v, sample_hiddens(rng, v, params, beta))


def build_kernel():
    """The block Gibbs kernel ``kernel(rng, state, params, beta=None) -> (state, info)``.

    Gibbs has no options; this exists so that every kernel is built the
    same way (compare :func:`pymc_rbm.kernels.flip.build_kernel`). It is
    :func:`~pymc_rbm.kernels.sweep.sweep` at the RBM at ``β`` with the Gibbs rule.
    """
    return gibbs_sweep
