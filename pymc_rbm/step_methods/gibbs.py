"""Block Gibbs sampling of an RBM variable inside ``pm.sample``."""

from __future__ import annotations

from pymc.step_methods.compound import Competence

from pymc_rbm.step_methods.base import RBMStep, is_rbm_variable

__all__ = ["BlockGibbs"]


class BlockGibbs(RBMStep):
    """Block Gibbs sweeps ``G = G_h G_v`` of an :class:`~pymc_rbm.RBM` variable.

    Each sweep draws ``h ~ p(h | v)`` and then ``v' ~ p(v | h)`` with the layer
    sampler of :mod:`pymc_rbm.kernels.gibbs`; when other model terms ``L(v)``
    involve the visible units, ``v'`` is accepted with probability
    ``min(1, L(v') / L(v))`` (see :mod:`pymc_rbm.step_methods.base` for why
    that is exact). Gibbs needs no stored hidden state (``G_h`` ignores it), so
    nothing has to be refreshed when another step moves ``v``.

    Parameters
    ----------
    vars : RBM variable or list of them, optional
        Free RBM variables to sample; by default all of the model's.
    sweeps : int, default 1
        Sweeps per recorded draw.
    record_hidden : bool, default False
        Record the hidden state of each draw as the sampler stat ``hidden``.
    model, rng, initial_point, compile_kwargs, blocked
        As for every PyMC step method (see :class:`~pymc_rbm.step_methods.base.RBMStep`).

    Notes
    -----
    Sampler stats, per chain of the batch (shape of the variable without its
    last axis): ``free_energy`` F(v) of the draw, ``n_changed`` and
    ``n_hidden_changed`` (units that changed during the draw), ``accept``
    (mean acceptance probability of the correction, 1 without one),
    ``accept_rate`` (fraction of accepted sweeps), and ``refreshed`` (whether
    the point had changed since the last draw). ``pm.sample`` never picks
    Gibbs by itself (for RBMs with constant parameters it picks
    :class:`~pymc_rbm.step_methods.ReplicaExchange` or exact draws, for RBMs
    with random parameters :class:`~pymc_rbm.step_methods.FlipTheState`);
    pass ``step=BlockGibbs(...)`` for Gibbs.

    Examples
    --------
    >>> import pymc as pm
    >>> from pymc_rbm import RBM, RBMParams, BlockGibbs
    >>> p = RBMParams.random(6, 4, rng=0)
    >>> with pm.Model():
    ...     v = RBM("v", p.W, p.vbias, p.hbias)
    ...     idata = pm.sample(draws=50, tune=10, chains=1, step=BlockGibbs(), progressbar=False,
    ...                       compute_convergence_checks=False, random_seed=1)
    >>> idata.posterior["v"].shape
    (1, 50, 6)
    """

    name = "block_gibbs"
    keeps_hidden = False

    @staticmethod
    def competence(var, has_grad=None):
        """``PREFERRED`` for RBM variables, else ``INCOMPATIBLE`` (``FlipTheState``, registered first, wins the tie)."""
        return Competence.PREFERRED if is_rbm_variable(var) else Competence.INCOMPATIBLE
