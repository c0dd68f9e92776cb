"""The exact relaxation speed of a sampler on a tiny RBM (Brügge, Fischer & Igel 2013, §4.1)."""

from __future__ import annotations

import numpy as np

__all__ = ["exact_slem"]


def exact_slem(params, kernel="gibbs", *, beta: float = 1.0) -> float:
    """Second largest eigenvalue modulus of one sweep's exact transition matrix (Brügge, Fischer & Igel 2013, §4.1).

    The chain's distance to equilibrium shrinks like ``SLEM**k`` after ``k``
    sweeps ("the convergence speed [...] is governed by the second largest
    eigenvector modulus"); ``1 / (1 - SLEM)`` is its relaxation time in sweeps.

    Parameters
    ----------
    params : RBMParams
        A tiny RBM: at most :data:`pymc_rbm.testing.states.MAX_JOINT_UNITS` units
        in all (the matrix has ``2**(n_visible + n_hidden)`` rows).
    kernel : {"gibbs", "flip"} or float, default "gibbs"
        Block Gibbs ``G = G_h G_v``, flip-the-state ``T = T_h T_v``, or the
        α mixture ``α T_i + (1 - α) G_i`` for a float ``α`` in [0, 1].
    beta : float, default 1.0
        Inverse temperature.

    Returns
    -------
    float
        In [0, 1]; 1 for a reducible chain.

    Raises
    ------
    ValueError
        When the model is too large to enumerate (saying how large, and
        what to use instead) or the kernel is unknown.

    See Also
    --------
    pymc_rbm.testing.matrices.transition_matrix, pymc_rbm.testing.markov.slem

    Examples
    --------
    >>> from pymc_rbm import RBMParams
    >>> from pymc_rbm.diagnostics import exact_slem
    >>> params = RBMParams.random(3, 3, scale=6.0, bias_scale=0.0, rng=2)
    >>> exact_slem(params, "flip") < exact_slem(params, "gibbs")
    True
    """
    from pymc_rbm import testing

    n = params.n_visible + params.n_hidden
    if n > testing.MAX_JOINT_UNITS:
        raise ValueError(
            f"exact_slem builds the full transition matrix over 2**{n} joint states "
            f"({params.n_visible} visible + {params.n_hidden} hidden units); it handles at most "
            f"{testing.MAX_JOINT_UNITS} units in all. For larger models run the sampler and use "
            "integrated_autocorr_time or compare_samplers on the chains instead"
        )
    if isinstance(kernel, str) and kernel not in ("gibbs", "flip"):
        raise ValueError(f"kernel must be 'gibbs', 'flip' or a float alpha in [0, 1], got {kernel!r}")
    if not isinstance(kernel, str) and not isinstance(kernel, int | float | np.floating | np.integer):
        raise ValueError(f"kernel must be 'gibbs', 'flip' or a float alpha in [0, 1], got {kernel!r}")
    return testing.slem(testing.transition_matrix(params, kernel, beta))
