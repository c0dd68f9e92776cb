"""Learning a fully connected Boltzmann machine over ±1 spins (Lawrence, Bishop & Jordan 1998, §3, §5.1).

Lawrence, Bishop & Jordan (1998) learn a general Boltzmann machine
``E(s) = -½ sᵀJs - b·s`` (:class:`~pymc_rbm.estimators.boltzmann_machine.BoltzmannMachine`)
by "simple gradient ascent learning, with gradients evaluated using (20) or
(28)": the gradient of the mean log-likelihood is
``∂/∂J_ij = ⟨s_i s_j⟩_data - ⟨s_i s_j⟩_model`` and ``∂/∂b_i = ⟨s_i⟩_data - ⟨s_i⟩_model``,
with the model correlations exact (enumeration), from naive mean field
(``m_i m_j``, eq. 20) or from the mixture (``Σ_l α_l m_li m_lj``, eq. 28-29).

This is not an RBM (the couplings are not bipartite), which is why it has its
own small loop instead of :func:`~pymc_rbm.training.fitting.fit`; the moments come
from :mod:`pymc_rbm.estimators.mean_field`, the same code that estimates
``log Z`` of RBMs. Its §5.1 toy problem (two units, data ``{(1,1), (1,1), (-1,-1)}``)
is ``benchmarks/mixture_learning_seed003.py``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from pymc_rbm.estimators.boltzmann_machine import BoltzmannMachine
from pymc_rbm.estimators.mixture_mean_field import mean_field_bm, mixture_mean_field_bm

__all__ = ["BMFit", "bm_model_moments", "bm_kl_divergence", "fit_boltzmann_machine"]

BM_METHODS = ("exact", "mean_field", "mixture_mean_field")


class BMFit(NamedTuple):
    """The trajectory of :func:`fit_boltzmann_machine`.

    Attributes
    ----------
    machine : BoltzmannMachine
        The final machine.
    J : ndarray of shape (n_updates + 1, n_units, n_units)
        Couplings before the first update and after each update.
    b : ndarray of shape (n_updates + 1, n_units)
        Biases, likewise.
    kl : ndarray of shape (n_updates + 1,)
        Exact ``KL(data ‖ model)`` at each of those points (enumeration).
    """

    machine: BoltzmannMachine
    J: np.ndarray
    b: np.ndarray
    kl: np.ndarray


def _check_spins(data) -> np.ndarray:
    s = np.asarray(data)
    if s.ndim != 2 or s.shape[0] == 0 or s.dtype.kind not in "biuf":
        raise ValueError(f"data must be a numeric array of shape (n_samples, n_units), got shape {s.shape}")
    if not np.all((s == 1) | (s == -1)):
        raise ValueError("data must hold spins, values in {-1, +1}")
    return s.astype(np.float64)


def bm_model_moments(bm: BoltzmannMachine, method: str = "exact", **options) -> tuple[np.ndarray, np.ndarray]:
    """``⟨s⟩`` and ``⟨s sᵀ⟩`` of a Boltzmann machine, exact or variational.

    Parameters
    ----------
    bm : BoltzmannMachine
    method : {"exact", "mean_field", "mixture_mean_field"}, default "exact"
    **options
        Passed to :func:`~pymc_rbm.estimators.mixture_mean_field.mean_field_bm` or
        :func:`~pymc_rbm.estimators.mixture_mean_field.mixture_mean_field_bm` (e.g.
        ``n_components``, ``temperatures``, ``tol``, ``max_iter``).

    Returns
    -------
    m : ndarray of shape (n_units,)
    C : ndarray of shape (n_units, n_units)
        Ones on the diagonal.
    """
    if method == "exact":
        mom = bm.moments_exact(**options)
        return mom.m, mom.C
    if method == "mean_field":
        sol = mean_field_bm(bm, **options)
    elif method == "mixture_mean_field":
        sol = mixture_mean_field_bm(bm, **options)
    else:
        raise ValueError(f"unknown method {method!r}; choose one of {BM_METHODS}")
    return sol.magnetizations()[0], sol.correlations()[0]


def bm_kl_divergence(data, bm: BoltzmannMachine) -> float:
    """Exact ``KL(p_data ‖ p_model)`` in nats, by enumerating the machine's states.

    Parameters
    ----------
    data : array_like of shape (n_samples, n_units)
        Spins in {-1, +1}; the empirical distribution of the rows is ``p_data``.
    bm : BoltzmannMachine

    Returns
    -------
    float
    """
    s = _check_spins(data)
    if s.shape[1] != bm.n_units:
        raise ValueError(f"data have {s.shape[1]} units per row, the machine {bm.n_units}")
    rows, counts = np.unique(s, axis=0, return_counts=True)
    p_data = counts / counts.sum()
    log_model = -bm.energy(rows) - bm.log_partition_exact()
    return float(np.sum(p_data * (np.log(p_data) - log_model)))


def fit_boltzmann_machine(
    data,
    *,
    machine: BoltzmannMachine | None = None,
    method: str = "exact",
    learning_rate: float = 0.25,
    n_updates: int = 80,
    init_scale: float = 0.1,
    rng=None,
    moment_options: dict | None = None,
) -> BMFit:
    """Full-batch gradient ascent on the log-likelihood of a Boltzmann machine (Lawrence, Bishop & Jordan 1998, §5).

    Parameters
    ----------
    data : array_like of shape (n_samples, n_units)
        Spins in {-1, +1}; not modified.
    machine : BoltzmannMachine, optional
        Starting machine; default couplings and biases from
        ``N(0, init_scale²)`` (Lawrence, Bishop & Jordan 1998, §5.1: "a zero-mean Gaussian
        distribution having a standard deviation of 0.1").
    method : {"exact", "mean_field", "mixture_mean_field"}, default "exact"
        Where the model correlations come from (Lawrence, Bishop & Jordan 1998, eq. 20 or 28).
    learning_rate : float, default 0.25
        The value of Lawrence, Bishop & Jordan (1998, §5.1).
    n_updates : int, default 80
    init_scale : float, default 0.1
    rng : numpy.random.Generator or seed, optional
        For the starting machine (stochastic).
    moment_options : dict, optional
        Passed to :func:`bm_model_moments`.

    Returns
    -------
    BMFit

    Examples
    --------
    >>> import numpy as np
    >>> from pymc_rbm.training import fit_boltzmann_machine
    >>> data = np.array([[1, 1], [1, 1], [-1, -1]])
    >>> out = fit_boltzmann_machine(data, n_updates=40, rng=0)
    >>> bool(out.kl[-1] < out.kl[0])
    True
    """
    s = _check_spins(data)
    n = s.shape[1]
    if method not in BM_METHODS:
        raise ValueError(f"unknown method {method!r}; choose one of {BM_METHODS}")
    if isinstance(n_updates, bool) or not isinstance(n_updates, (int, np.integer)) or n_updates < 0:
        raise ValueError(f"n_updates must be an integer >= 0, got {n_updates!r}")
    if not (np.isfinite(learning_rate) and learning_rate > 0):
        raise ValueError(f"learning_rate must be > 0, got {learning_rate!r}")
    if machine is None:
        rng = np.random.default_rng(rng)
        upper = np.triu(rng.normal(0.0, init_scale, (n, n)), k=1)
        machine = BoltzmannMachine(upper + upper.T, rng.normal(0.0, init_scale, n))
    elif not isinstance(machine, BoltzmannMachine) or machine.n_units != n:
        raise ValueError(f"machine must be a BoltzmannMachine with {n} units")
    m_data = s.mean(axis=0)
    C_data = s.T @ s / s.shape[0]
    off = ~np.eye(n, dtype=bool)
    Js, bs, kls = [machine.J.copy()], [machine.b.copy()], [bm_kl_divergence(s, machine)]
    for _ in range(int(n_updates)):
        m, C = bm_model_moments(machine, method, **(moment_options or {}))
        J = machine.J + learning_rate * np.where(off, C_data - C, 0.0)
        machine = BoltzmannMachine(J, machine.b + learning_rate * (m_data - m))
        Js.append(machine.J.copy())
        bs.append(machine.b.copy())
        kls.append(bm_kl_divergence(s, machine))
    return BMFit(machine, np.stack(Js), np.stack(bs), np.asarray(kls))
