"""Stuck-chain checks for RBM variables, run with PyMC's own convergence checks after ``pm.sample``.

PyMC checks R-hat and ESS of every variable after sampling, but an RBM
variable whose chains sit in one mode each can pass them (a constant chain
even makes ArviZ divide by zero) while its draws are far from its
distribution. :func:`rbm_convergence_checks` adds the checks of
:func:`pymc_rbm.diagnostics.mixing.mixing_problems` for every free RBM variable of
the model, as PyMC :class:`~pymc.stats.convergence.SamplerWarning` objects,
so they are logged, and stored, like PyMC's own.

Some steps cannot sample their variables alone (wormhole jumps reach only the
states their offsets connect): :func:`lone_step_warnings` says which variables
``pm.sample`` was given no other step for. That is judged from the steps, not
from the draws, because a local step on a sharp mode can leave its state
unchanged for hundreds of draws and still be needed, and present.

:func:`install` puts both into ``pm.sample``: the step check when it assigns
the steps, before sampling, and the chain checks next to PyMC's checks after
it (done when :mod:`pymc_rbm.step_methods` is imported, as the step methods
are registered).
"""

from __future__ import annotations

import functools
import warnings

import numpy as np
import pymc.sampling.mcmc as _mcmc
from pymc.step_methods.compound import CompoundStep
from pymc.stats.convergence import SamplerWarning, WarningType
from pytensor.graph.basic import Constant

from pymc_rbm.diagnostics import mixing_problems
from pymc_rbm.energy import RBMTensors, free_energy
from pymc_rbm.random_variable import rbm_params_of
from pymc_rbm.step_methods.base import is_rbm_variable

__all__ = ["rbm_convergence_checks", "lone_step_warnings", "install"]


def _stat(stats, key: str):
    """A sampler stat as a numeric array of shape (chain, draw, ...), or None."""
    if stats is None or key not in stats:
        return None
    values = stats[key].values
    if values.dtype == object:
        values = np.stack(values.ravel()).reshape(*values.shape, -1).astype(np.float64)
    return values


def rbm_convergence_checks(idata, model) -> list[SamplerWarning]:
    """Warnings about the chains of every free RBM variable of ``model`` in ``idata``.

    Parameters
    ----------
    idata : xarray.DataTree
        What ``pm.sample`` returned (a ``posterior`` group, and the
        ``sample_stats`` of the RBM step methods when they ran).
    model : pymc.Model

    Returns
    -------
    list of pymc.stats.convergence.SamplerWarning
        Of kind ``CONVERGENCE``, level ``"warn"``; empty when nothing is seen.
    """
    if "posterior" not in idata.children:
        return []
    post = idata["posterior"]
    stats = idata["sample_stats"] if "sample_stats" in idata.children else None
    rbm_vars = [rv for rv in model.free_RVs if is_rbm_variable(rv) and rv.name in post]
    out = []
    for rv in rbm_vars:
        draws = np.asarray(post[rv.name].values)
        graphs = rbm_params_of(rv)
        if all(isinstance(g, Constant) for g in graphs):
            params = RBMTensors(*(np.asarray(g.data, dtype=np.float64) for g in graphs))
            fe = free_energy(draws.astype(np.float64), params)
        else:  # the recorded F(v) at each draw's parameters, when one RBM step recorded it
            fe = _stat(stats, "free_energy") if len(rbm_vars) == 1 else None
        tempered = len(rbm_vars) == 1
        messages = mixing_problems(
            draws,
            fe,
            name=rv.name,
            swap_accept_pairs=_stat(stats, "swap_accept_pairs") if tempered else None,
            round_trips=_stat(stats, "round_trips") if tempered else None,
            n_temperatures=_stat(stats, "n_temperatures") if tempered else None,
            ladder_carries=_stat(stats, "ladder_carries") if tempered else None,
            tempered=tempered and stats is not None and "n_temperatures" in stats,
        )
        out += [SamplerWarning(WarningType.CONVERGENCE, m, "warn") for m in messages]
    return out


def _leaf_steps(steps):
    """The step methods in ``steps`` (a step, a compound step or a sequence of them), compound steps opened."""
    if isinstance(steps, CompoundStep):
        steps = steps.methods
    elif not isinstance(steps, list | tuple):
        steps = [steps]
    return [leaf for s in steps for leaf in (_leaf_steps(s) if isinstance(s, CompoundStep) else [s])]


def lone_step_warnings(steps) -> list[str]:
    """What to warn about the steps that cannot sample their variables alone and were given them alone.

    A step class says it needs another step by an ``alone_warning`` message
    (e.g. :class:`~pymc_rbm.WormholeMetropolis`); a variable of such a step
    that no step without one samples is sampled by jumps alone.

    Parameters
    ----------
    steps : step method, CompoundStep, sequence of them, or None
        The ``step`` given to ``pm.sample``.

    Returns
    -------
    list of str
        One message per such step, naming its variables that no other step
        samples; empty when every variable has another step.
    """
    if steps is None:
        return []
    leaves = _leaf_steps(steps)
    sampled = {var for s in leaves if getattr(s, "alone_warning", None) is None for var in s.vars}
    out = []
    for s in leaves:
        message = getattr(s, "alone_warning", None)
        alone = [var.name for var in s.vars if var not in sampled]
        if message is not None and alone:
            out.append(message.format(names=alone))
    return out


def install() -> None:
    """Run :func:`lone_step_warnings` and :func:`rbm_convergence_checks` in ``pm.sample`` (once).

    The first warns (``RuntimeWarning``) when ``pm.sample`` assigns the steps,
    the second adds to PyMC's convergence checks after sampling.
    """
    original = _mcmc.run_convergence_checks
    if getattr(original, "_pymc_rbm", False):
        return
    assign = _mcmc.assign_step_methods

    @functools.wraps(assign)
    def assign_step_methods(model, step=None, methods=None):
        for message in lone_step_warnings(step):
            warnings.warn(message, RuntimeWarning, stacklevel=3)  # at the caller of pm.sample
        return assign(model, step, methods)

    @functools.wraps(original)
    def run_convergence_checks(idata, model):
        if not any(is_rbm_variable(rv) for rv in model.free_RVs):
            return original(idata, model)
        # ArviZ's R-hat divides by a zero within-chain variance for units that never change (a constant
        # chain; PyMC then skips its NaN R-hat); that NumPy warning says nothing a user can act on, and the
        # checks below say what it means (stuck, or concentrated where all chains hold one value)
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", r"(invalid value|divide by zero) encountered in (scalar )?divide",
                                    RuntimeWarning)
            found = original(idata, model)
        return found + rbm_convergence_checks(idata, model)

    run_convergence_checks._pymc_rbm = True
    _mcmc.run_convergence_checks = run_convergence_checks
    _mcmc.assign_step_methods = assign_step_methods
