"""Tests of the Bethe approximation by message passing (pymc_rbm.estimators.bethe, seed 001)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import logsumexp

from pymc_rbm import RBMParams
from pymc_rbm.estimators import (
    LOG_PARTITION_METHODS,
    MOMENT_METHODS,
    binary_states,
    log_partition,
    log_partition_exact,
    moments,
    moments_exact,
)
from pymc_rbm.estimators.bethe import (
    bethe_free_energy,
    bethe_message_passing,
    bethe_moments,
    bethe_stability,
    log_partition_bethe,
    moments_bethe,
)
from pymc_rbm.params import SpinRBMParams

MNIST_EXACT = {"mnist_h10": 226.1132, "mnist_h20": 221.0668}
FACTORS = ["gaussian", "exact"]


def _paper_instance(n, alpha, g, v, seed):
    """Seed 001's ensemble: w ~ N(0, g/N), fields ~ N(0, v), M = αN hidden spins."""
    rng = np.random.default_rng(seed)
    m = max(1, round(alpha * n))
    return SpinRBMParams(
        rng.normal(0.0, np.sqrt(g / n), (n, m)), rng.normal(0.0, np.sqrt(v), n), rng.normal(0.0, np.sqrt(v), m)
    )


def _spin_log_z(spin: SpinRBMParams) -> float:
    """Brute force over all visible spins of seed 001 eq. (1): Σ_σ Π_a 2cosh(w_a·σ + h_a) Π_i e^{φ_i σ_i}."""
    s = 2.0 * binary_states(spin.n_visible) - 1.0
    x = s @ spin.J + spin.hfield
    return float(logsumexp(s @ spin.vfield + (np.logaddexp(x, -x)).sum(axis=1)))


# ------------------------------------------------------------ trees are exact
@pytest.mark.parametrize("shape", [(9, 1), (1, 7), (12, 1)])
@pytest.mark.parametrize("scale", [0.5, 2.0, 50.0])
def test_exact_factors_are_exact_on_trees(shape, scale):
    """One hidden (or one visible) unit: the factor graph is a tree, so belief propagation is exact."""
    p = RBMParams.random(*shape, scale=scale, rng=shape[0] + 3 * shape[1])
    est = log_partition_bethe(p, factor="exact")
    assert est.log_z == pytest.approx(log_partition_exact(p).log_z, abs=1e-9, rel=1e-12)
    m, e = moments_bethe(p, factor="exact"), moments_exact(p)
    for a, b in zip(m, e):
        np.testing.assert_allclose(a, b, atol=1e-7)
    assert est.diagnostics["stability"] == 0.0  # no loops: nothing feeds back


def test_gaussian_factors_exact_with_one_visible_unit():
    """With N = 1 the cavity sum is empty and the central-limit form is exact too."""
    p = RBMParams.random(1, 6, scale=2.0, rng=1)
    assert log_partition_bethe(p).log_z == pytest.approx(log_partition_exact(p).log_z, abs=1e-10)


# ------------------------------------------------------------ accuracy and the spin map
@pytest.mark.parametrize("factor", FACTORS)
@pytest.mark.parametrize("scale, tol", [(0.1, 1e-6), (0.5, 5e-4)])
def test_weak_coupling_close_to_exact(factor, scale, tol):
    p = RBMParams.random(8, 6, scale=scale, rng=11)
    est = log_partition_bethe(p, factor=factor)
    assert est.diagnostics["converged"]
    assert abs(est.log_z - log_partition_exact(p).log_z) < tol


@pytest.mark.parametrize("factor", FACTORS)
def test_spin_map(factor):
    """The paper's spin model: F of eq. (4) against brute force over σ, and log_offset back to the binary form."""
    spin = _paper_instance(10, 0.6, 1.0, 0.05, seed=2)
    binary = spin.to_binary()
    log_z_spin = _spin_log_z(spin)
    assert log_partition_exact(binary).log_z == pytest.approx(log_z_spin + spin.log_offset, abs=1e-9)
    est = log_partition_bethe(binary, factor=factor)
    assert est.diagnostics["log_offset"] == pytest.approx(spin.log_offset, abs=1e-12)
    assert -est.diagnostics["free_energy_spin"] == pytest.approx(est.log_z - spin.log_offset, abs=1e-9)
    assert abs(-est.diagnostics["free_energy_spin"] - log_z_spin) / spin.n_visible < 0.02  # |Δf| per spin


def test_fig2_inset_regime():
    """Seed 001 Fig. 2 inset: N = 20, α = 0.6, g = 1, v = 0.05: |Δf| of the Bethe free energy density is small.

    (We measure |Δf| of about 0.005 to 0.01 on these instances, f itself being about -1.5.)
    """
    for seed in range(3):
        spin = _paper_instance(20, 0.6, 1.0, 0.05, seed=seed)
        sol = bethe_message_passing(spin, np.tile(np.tanh(spin.vfield)[:, None], (1, 1, 12)))
        assert sol.converged[0]
        exact = log_partition_exact(spin.to_binary()).log_z - spin.log_offset
        assert abs(sol.log_z[0] - exact) / 20 < 0.02


def test_fixed_point_satisfies_equations_3a_3b():
    spin = _paper_instance(12, 0.5, 1.0, 0.05, seed=4)
    sol = bethe_message_passing(spin, np.zeros((1, 12, 6)), tol=1e-13)
    m = sol.m[0]
    J, phi, h = spin.J, spin.vfield, spin.hfield
    G = (J * m).sum(axis=0)  # G_a
    u = np.zeros_like(J)
    for i in range(12):
        for a in range(6):
            Gc = G[a] - J[i, a] * m[i, a]
            u[i, a] = 0.5 * np.log(np.cosh(h[a] + Gc + J[i, a]) / np.cosh(h[a] + Gc - J[i, a]))
    for i in range(12):
        for a in range(6):
            assert m[i, a] == pytest.approx(np.tanh(phi[i] + u[i].sum() - u[i, a]), abs=1e-11)


def test_free_energy_eq4_by_hand():
    spin = _paper_instance(5, 0.6, 1.0, 0.3, seed=5)
    m = np.random.default_rng(0).uniform(-0.9, 0.9, (5, 3))
    J, phi, h = spin.J, spin.vfield, spin.hfield
    Xi2 = lambda a, skip=None: sum(J[j, a] ** 2 * (1 - m[j, a] ** 2) for j in range(5) if j != skip)  # noqa: E731
    Gf = lambda a, skip=None: sum(J[j, a] * m[j, a] for j in range(5) if j != skip)  # noqa: E731
    mu = lambda a, i, s: 2 * np.exp(Xi2(a, i) / 2) * np.cosh(h[a] + Gf(a, i) + J[i, a] * s)  # noqa: E731
    ln_zi = [np.log(np.exp(phi[i]) * np.prod([mu(a, i, 1) for a in range(3)]) + np.exp(-phi[i]) * np.prod([mu(a, i, -1) for a in range(3)])) for i in range(5)]
    ln_za = [np.log(2 * np.exp(Xi2(a) / 2) * np.cosh(h[a] + Gf(a))) for a in range(3)]
    F = -sum(ln_zi) + (5 - 1) * sum(ln_za)
    assert bethe_free_energy(spin, m) == pytest.approx(-F, abs=1e-10)


# ------------------------------------------------------------ stability, eq. (5)
def test_stability_grows_with_coupling():
    lams = []
    for g in (0.25, 1.0, 2.5):
        spin = _paper_instance(40, 0.5, g, 0.05, seed=1)
        est = log_partition_bethe(spin.to_binary())
        lams.append(est.diagnostics["stability"])
    assert lams[0] < lams[1] < lams[2]
    assert lams[0] < 1.0


def test_stability_by_hand():
    """One step of eq. (5) from V = 1 on a small instance, against loops."""
    spin = _paper_instance(6, 0.5, 1.0, 0.05, seed=3)
    m = np.random.default_rng(1).uniform(-0.8, 0.8, (6, 3))
    J, h = spin.J, spin.hfield
    G = (J * m).sum(axis=0)
    V0 = np.full((6, 3), 1.0 / 18)
    V1 = np.zeros((6, 3))
    for i in range(6):
        for a in range(3):
            tot = 0.0
            for b in range(3):
                if b == a:
                    continue
                P = sum(J[j, b] ** 2 * V0[j, b] for j in range(6) if j != i)
                Gam = h[b] + G[b] - J[i, b] * m[i, b] + J[i, b]
                tot += P * (np.tanh(Gam) - np.tanh(Gam - 2 * J[i, b])) ** 2
            V1[i, a] = (1 - m[i, a] ** 2) ** 2 / 4 * tot
    lam, ratios = bethe_stability(spin, m, max_iter=1)
    assert ratios[0] == pytest.approx(V1.sum() / V0.sum(), rel=1e-12)


# ------------------------------------------------------------ moments, eq. (6)
@pytest.mark.parametrize("factor", FACTORS)
def test_moments_close_to_exact(factor):
    p = RBMParams.random(8, 5, scale=0.4, rng=2)
    m, e = moments_bethe(p, factor=factor), moments_exact(p)
    for a, b in zip(m, e):
        np.testing.assert_allclose(a, b, atol=1e-3)


def test_spin_moments_by_eq6():
    from scipy.integrate import quad

    spin = _paper_instance(10, 0.5, 0.5, 0.05, seed=8)
    sol = bethe_message_passing(spin, np.zeros((1, 10, 5)), tol=1e-12)
    mom = bethe_moments(spin, sol.m[0])
    J, h, phi = spin.J, spin.hfield, spin.vfield
    # (6a) from the converged messages
    m = sol.m[0]
    G = (J * m).sum(axis=0)
    Gc = h + G - J * m
    u = 0.5 * (np.log(np.cosh(Gc + J)) - np.log(np.cosh(Gc - J)))
    np.testing.assert_allclose(mom.m, np.tanh(phi + u.sum(axis=1)), atol=1e-12)
    # (6b), (6c) by quadrature
    Gt = mom.m @ J + h
    Xi = np.sqrt((J**2 * (1 - mom.m[:, None] ** 2)).sum(axis=0))
    dens = lambda x: np.exp(-x * x / 2) / np.sqrt(2 * np.pi)  # noqa: E731
    for a in range(5):
        m_hat = quad(lambda x: dens(x) * np.tanh(Xi[a] * x + Gt[a]), -np.inf, np.inf)[0]
        A = 1 - quad(lambda x: dens(x) * np.tanh(Xi[a] * x + Gt[a]) ** 2, -np.inf, np.inf)[0]
        assert mom.m_hat[a] == pytest.approx(m_hat, abs=1e-10)
        np.testing.assert_allclose(mom.C[a], m_hat * mom.m + J[:, a] * (1 - mom.m**2) * A, atol=1e-10)
    # and roughly the exact spin moments (N = 10 is small for the central limit)
    s = 2.0 * binary_states(10) - 1.0
    x = s @ J + h
    logw = s @ phi + np.logaddexp(x, -x).sum(axis=1)
    p = np.exp(logw - logsumexp(logw))
    assert np.abs(mom.m - p @ s).max() < 0.03
    assert np.abs(mom.m_hat - p @ np.tanh(x)).max() < 0.03
    assert np.abs(mom.C - (np.tanh(x) * p[:, None]).T @ s).max() < 0.2
    assert mom.C.shape == (5, 10)


# ------------------------------------------------------------ options, diagnostics, dispatch
def test_diagnostics_and_starts():
    p = RBMParams.random(7, 4, scale=0.5, rng=0)
    data = (np.random.default_rng(0).random((10, 7)) < 0.5).astype(bool)
    est = log_partition_bethe(p, n_starts=3, data=data, n_data_starts=2)
    d = est.diagnostics
    assert est.stderr == 0.0 and est.method == "bethe"
    assert d["n_starts"] == 5 and d["n_converged"] == 5 and d["converged"]
    assert d["iterations"] >= 1 and d["residual"] < 1e-9 and 0.0 <= d["stability"] < 1.0 and d["stable"]
    assert d["factor"] == "gaussian" and d["values"].shape == (5,) and d["damping"] == 0.0
    assert np.isnan(log_partition_bethe(p, stability=False).diagnostics["stability"])


def test_bad_input():
    p = RBMParams.random(4, 3, rng=0)
    with pytest.raises(ValueError, match="factor"):
        log_partition_bethe(p, factor="cavity")
    with pytest.raises(ValueError, match="damping"):
        log_partition_bethe(p, damping=-0.1)
    with pytest.raises(ValueError, match="binary"):
        log_partition_bethe(p, data=np.full((2, 4), 2))
    with pytest.raises(ValueError, match="m0"):
        bethe_message_passing(p.to_spin(), np.zeros((1, 3, 4)))
    with pytest.raises(TypeError, match="RBMParams"):
        log_partition_bethe(p.to_spin())


def test_dispatcher_entries():
    p = RBMParams.random(5, 4, scale=0.5, rng=0)
    assert LOG_PARTITION_METHODS["bethe"] is log_partition_bethe and MOMENT_METHODS["bethe"] is moments_bethe
    assert log_partition(p, "bethe", rng=1).log_z == pytest.approx(log_partition_bethe(p).log_z, abs=1e-9)
    assert log_partition(p, "bethe", factor="exact").diagnostics["factor"] == "exact"
    np.testing.assert_allclose(moments(p, "bethe").vh, moments_bethe(p).vh)


# ------------------------------------------------------------ MNIST models
@pytest.mark.parametrize("name", ["mnist_h10", "mnist_h20"])
def test_mnist_models(mnist_model, name):
    """Exact factors: 226.16 (h10) and 217.26 (h20) against 226.11 and 221.07; Gaussian: 213.57 and 217.22."""
    p = mnist_model(name)
    for factor, tol in (("exact", 5.0), ("gaussian", 14.0)):
        est = log_partition_bethe(p, factor=factor)
        assert est.diagnostics["converged"]
        assert abs(est.log_z - MNIST_EXACT[name]) < tol
    if name == "mnist_h20":
        assert est.diagnostics["damping"] > 0.0  # undamped messages oscillate on this model
