"""The flip-the-state operator (Brügge, Fischer & Igel 2013) on an RBM variable inside ``pm.sample``."""

from __future__ import annotations

from pymc.step_methods.compound import Competence

from pymc_rbm.kernels.layer import LayerRule, check_alpha
from pymc_rbm.step_methods.base import RBMStep, is_rbm_variable

__all__ = ["FlipTheState"]


class FlipTheState(RBMStep):
    """Flip-the-state sweeps ``T = T_h T_v`` (Brügge et al. 2013) of an :class:`~pymc_rbm.RBM` variable.

    The hidden layer is updated given ``v`` and then the visible layer given
    the new ``h``, each unit flipping with the probability of
    :func:`~pymc_rbm.kernels.flip_probability`; ``alpha`` mixes the operator
    with Gibbs per unit (``α T_i + (1 - α) G_i``; ``alpha=0`` is Gibbs in
    distribution). The hidden state is kept between draws and redrawn from
    ``p(h | v)`` whenever another step changed ``v`` or the RBM's parameters.
    When other model terms ``L(v)`` involve the visible units, the visible
    update is accepted with probability ``min(1, L(v') / L(v))``, which is
    exact because ``T_v`` is reversible for ``p(v | h)`` (proof in
    :mod:`pymc_rbm.step_methods.base`).

    ``pm.sample`` assigns it by itself (competence ``PREFERRED``) to RBM
    variables whose weights or biases are random variables. Where they are
    constants or data, ``pm.sample`` picks
    :class:`~pymc_rbm.step_methods.ReplicaExchange` instead (``IDEAL``), or
    exact draws where the smaller layer can be enumerated and no other model
    term involves ``v``: flip-the-state alone can stay in one mode of a
    sharp RBM (the bundled model is one). The step methods are registered
    with ``pm.sample`` when :mod:`pymc_rbm.step_methods` is imported, which
    importing :mod:`pymc_rbm.distribution` (or using ``pymc_rbm.RBM``) does.
    Options reach the automatic step by its name:
    ``pm.sample(flip_the_state={"sweeps": 10})``.

    Parameters
    ----------
    vars : RBM variable or list of them, optional
        Free RBM variables to sample; by default all of the model's.
    alpha : float in [0, 1], default 1.0
        Weight of flip-the-state in the per-unit mixture with Gibbs.
    sweeps : int, default 1
        Sweeps per recorded draw.
    record_hidden : bool, default False
        Record the hidden state of each draw as the sampler stat ``hidden``.
    model, rng, initial_point, compile_kwargs, blocked
        As for every PyMC step method (see :class:`~pymc_rbm.step_methods.base.RBMStep`).

    Notes
    -----
    Sampler stats are those of :class:`~pymc_rbm.step_methods.BlockGibbs`.

    Examples
    --------
    >>> import pymc as pm
    >>> from pymc_rbm import RBM, RBMParams, FlipTheState
    >>> p = RBMParams.random(6, 4, rng=0)
    >>> with pm.Model():
    ...     v = RBM("v", p.W, p.vbias, p.hbias, shape=(3, 6))  # three chains in one variable
    ...     idata = pm.sample(draws=50, tune=10, chains=1, step=FlipTheState(sweeps=2),
    ...                       progressbar=False, compute_convergence_checks=False, random_seed=1)
    >>> idata.sample_stats["free_energy"].shape
    (1, 50, 3)
    """

    name = "flip_the_state"
    keeps_hidden = True

    def __init__(self, vars=None, *, alpha: float = 1.0, **kwargs):
        self.alpha = check_alpha(alpha)
        self.rule = LayerRule(self.alpha)
        super().__init__(vars, **kwargs)

    @staticmethod
    def competence(var, has_grad=None):
        """``PREFERRED`` for RBM variables, ``INCOMPATIBLE`` for everything else.

        :class:`~pymc_rbm.step_methods.ReplicaExchange` (``IDEAL``) is chosen
        instead where the RBM's parameters are constants or data.
        """
        return Competence.PREFERRED if is_rbm_variable(var) else Competence.INCOMPATIBLE
