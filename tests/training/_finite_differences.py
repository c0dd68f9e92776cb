"""Central finite differences of an enumerated mean log-likelihood, for the exact-gradient tests of fit's families."""

import numpy as np


def log_likelihood_gradient_fd(params, data, log_prob, names=("W", "vbias", "hbias"), eps=1e-5):
    """``∂/∂θ mean(log_prob(data, params))`` for every entry of the arrays ``names``, by central differences.

    Parameters
    ----------
    params : a parameter class with ``ARRAY_NAMES`` (its constructor takes them in that order)
    data : ndarray of shape (n_samples, n_visible)
    log_prob : callable ``(data, params) -> ndarray of shape (n_samples,)``, exact (enumerated)
    names : tuple of str
    eps : float

    Returns
    -------
    list of ndarray
        One per name, of that array's shape.
    """
    base = {k: np.array(getattr(params, k), dtype=np.float64) for k in params.ARRAY_NAMES}

    def mean_ll(name, idx, step):
        arrays = {k: a.copy() for k, a in base.items()}
        arrays[name][idx] += step
        return float(np.mean(log_prob(data, type(params)(*(arrays[k] for k in params.ARRAY_NAMES)))))

    grads = []
    for name in names:
        g = np.zeros_like(base[name])
        for idx in np.ndindex(g.shape):
            g[idx] = (mean_ll(name, idx, eps) - mean_ll(name, idx, -eps)) / (2 * eps)
        grads.append(g)
    return grads
