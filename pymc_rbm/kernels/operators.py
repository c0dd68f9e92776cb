"""The sweep operators by name: ``"gibbs"``, ``"flip"`` or a mixture weight ``α``.

Every user that lets its caller choose the operator (training's negative
phase, the estimators' transitions, moments by sampling) reads the choice
here, so the names and their checks exist once.
"""

from __future__ import annotations

import numbers

from pymc_rbm.kernels import flip, gibbs
from pymc_rbm.kernels.layer import GIBBS, LayerRule, check_alpha

__all__ = ["operator_alpha", "operator_rule", "build_operator"]


def operator_alpha(operator) -> float:
    """The flip/Gibbs mixture weight ``α`` that ``operator`` names.

    Parameters
    ----------
    operator : {"gibbs", "flip"} or float in [0, 1]
        Block Gibbs (``α = 0``), flip-the-state (``α = 1``, Brügge, Fischer & Igel 2013) or the
        per-unit mixture ``α T + (1 - α) G`` (Brügge, Fischer & Igel 2013, §5.2).

    Returns
    -------
    float

    Raises
    ------
    ValueError
        For any other name or a weight outside [0, 1].

    Examples
    --------
    >>> operator_alpha("flip"), operator_alpha("gibbs"), operator_alpha(0.25)
    (1.0, 0.0, 0.25)
    """
    if isinstance(operator, str) and operator in ("gibbs", "flip"):
        return 0.0 if operator == "gibbs" else 1.0
    if isinstance(operator, numbers.Real) and not isinstance(operator, bool):
        try:
            return check_alpha(operator)
        except ValueError:
            pass
    raise ValueError(f'operator must be "gibbs", "flip" or a mixture weight alpha in [0, 1], got {operator!r}')


def operator_rule(operator) -> LayerRule:
    """The layer rule that ``operator`` names (:mod:`pymc_rbm.kernels.layer`).

    ``"gibbs"`` is the Gibbs rule ``x' = [u < sigmoid(a)]``; ``"flip"`` and a
    weight ``α`` are flip-the-state mixed with Gibbs by ``α`` (``α = 0`` is
    Gibbs in distribution, moving from the current state).

    Examples
    --------
    >>> operator_rule("gibbs").gibbs, operator_rule("flip").alpha, operator_rule(0.5).alpha
    (True, 1.0, 0.5)
    """
    alpha = operator_alpha(operator)
    return GIBBS if isinstance(operator, str) and operator == "gibbs" else LayerRule(alpha)


def build_operator(operator):
    """The sweep kernel that ``operator`` names.

    Parameters
    ----------
    operator : {"gibbs", "flip"} or float in [0, 1]
        See :func:`operator_alpha`. ``"gibbs"`` is the block Gibbs kernel
        itself (cheaper than the ``α = 0`` mixture, equal in distribution).

    Returns
    -------
    callable
        ``kernel(rng, state, params, beta=None) -> (state, info)``.
    """
    alpha = operator_alpha(operator)
    if isinstance(operator, str) and operator == "gibbs":
        return gibbs.build_kernel()
    return flip.build_kernel(alpha=alpha)
