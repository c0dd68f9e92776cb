"""Tests of pymc_rbm.datasets.ridges: the two ridges of Hinton, Welling & Mnih (2003) and their density."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import logsumexp
from scipy.stats import multivariate_normal, norm

from pymc_rbm.datasets import two_ridges, two_ridges_logpdf
from pymc_rbm.datasets.ridges import ridge_geometry


def _ridge_axes(angle_deg: float) -> np.ndarray:
    """Unit vectors of axis 0 and axis 1 after the rotation, shape (2, 2)."""
    a = np.deg2rad(angle_deg)
    return np.array([[np.cos(a), np.sin(a)], [-np.sin(a), np.cos(a)]])


@pytest.mark.parametrize("profile", ["uniform", "gaussian"])
def test_two_ridges_moments(profile):
    n, n_dim = 20_000, 5
    length, width, offset, noise = 3.0, 0.2, 2.0, 0.05
    x, labels = two_ridges(
        n, n_dim, length=length, width=width, offset=offset, noise_std=noise,
        profile=profile, rng=6, return_labels=True,
    )  # fmt: skip
    assert x.shape == (n, n_dim) and labels.shape == (n,)
    assert np.sum(labels == 0) == np.sum(labels == 1) == n // 2
    e0, e1 = _ridge_axes(45.0)
    centers = [offset * e1, offset * e0]
    along = [e0, e1]
    for k in (0, 1):
        pts = x[labels == k, :2]
        m = len(pts)
        np.testing.assert_allclose(pts.mean(axis=0), centers[k], atol=5 * length / np.sqrt(12 * m))
        var_along = np.var(pts @ along[k])
        var_across = np.var(pts @ along[1 - k])
        np.testing.assert_allclose(var_along, length**2 / 12, rtol=0.05)
        np.testing.assert_allclose(var_across, width**2 / 12, rtol=0.05)
        if profile == "uniform":
            assert np.max(np.abs((pts - centers[k]) @ along[k])) <= length / 2 + 1e-12
            assert np.max(np.abs((pts - centers[k]) @ along[1 - k])) <= width / 2 + 1e-12
    np.testing.assert_allclose(x[:, 2:].std(axis=0), noise, rtol=0.05)
    np.testing.assert_allclose(x[:, 2:].mean(axis=0), 0.0, atol=5 * noise / np.sqrt(n))


def test_two_ridges_labels_and_reproducibility():
    x1, l1 = two_ridges(1025, 2, rng=9, return_labels=True)
    x2, l2 = two_ridges(1025, 2, rng=np.random.default_rng(9), return_labels=True)
    np.testing.assert_array_equal(x1, x2)
    np.testing.assert_array_equal(l1, l2)
    assert abs(int(l1.sum()) - 512) <= 1
    assert not np.array_equal(l1[:512], np.zeros(512))  # shuffled, not blocked
    _, l3 = two_ridges(4000, 2, balanced=False, rng=9, return_labels=True)
    assert abs(l3.mean() - 0.5) < 4 * 0.5 / np.sqrt(4000)
    assert two_ridges(0, 3, rng=0).shape == (0, 3)


def test_two_ridges_logpdf_gaussian_matches_scipy_mixture():
    n_dim, length, width, offset, angle, noise = 3, 2.0, 0.1, 1.5, 30.0, 0.02
    kw = dict(length=length, width=width, offset=offset, angle=angle, noise_std=noise, profile="gaussian")
    a = np.deg2rad(angle)
    rot = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
    comps = []
    for center, sides in [((0.0, offset), (length, width)), ((offset, 0.0), (width, length))]:
        mean = np.r_[rot @ np.array(center), 0.0]
        cov = np.zeros((3, 3))
        cov[:2, :2] = rot @ np.diag(np.square(sides) / 12) @ rot.T
        cov[2, 2] = noise**2
        comps.append(multivariate_normal(mean, cov))
    x = np.concatenate([two_ridges(200, n_dim, rng=10, **kw), np.random.default_rng(11).normal(size=(50, 3))])
    expected = logsumexp([c.logpdf(x) for c in comps], axis=0) - np.log(2)
    np.testing.assert_allclose(two_ridges_logpdf(x, n_dim, **kw), expected, rtol=1e-10, atol=1e-8)
    # batch shape kept
    assert two_ridges_logpdf(x.reshape(10, 25, 3), n_dim, **kw).shape == (10, 25)


def test_two_ridges_logpdf_uniform_values():
    n_dim, noise = 4, 0.02
    x = two_ridges(500, n_dim, rng=12)
    expected = np.log(0.5 / (2.0 * 0.1)) + norm.logpdf(x[:, 2:], scale=noise).sum(axis=1)
    np.testing.assert_allclose(two_ridges_logpdf(x, n_dim), expected, rtol=1e-12)
    # just off a ridge, across it and beyond its end; and the origin, between the ridges
    e0, e1 = _ridge_axes(45.0)
    c0 = 1.5 * e1
    off = np.array([c0 + 0.06 * e1, c0 + 1.01 * e0, c0 - 1.01 * e0, np.zeros(2)])
    on = np.array([c0 + 0.049 * e1, c0 + 0.99 * e0])
    assert np.all(np.isneginf(two_ridges_logpdf(off, 2)))
    assert np.all(np.isfinite(two_ridges_logpdf(on, 2)))


def test_two_ridges_logpdf_uniform_integrates_to_one():
    # Monte Carlo over the box [-3, 3]^2 that holds both ridges
    rng = np.random.default_rng(13)
    n, side = 400_000, 6.0
    u = rng.uniform(-side / 2, side / 2, size=(n, 2))
    p = np.exp(two_ridges_logpdf(u, 2))
    estimate = side**2 * p.mean()
    se = side**2 * p.std() / np.sqrt(n)
    assert abs(estimate - 1.0) < 4 * se
    # each ridge holds half the mass
    e0, _ = _ridge_axes(45.0)
    in_ridge0 = np.abs((u - 1.5 * _ridge_axes(45.0)[1]) @ e0) <= 1.0
    assert abs(side**2 * np.mean(p * in_ridge0) - 0.5) < 4 * se


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        (dict(n_samples=-5, n_dim=2), "n_samples"),
        (dict(n_samples=5, n_dim=1), "n_dim"),
        (dict(n_samples=5, n_dim=2.0), "n_dim"),
        (dict(n_samples=5, n_dim=2, length=0.0), "length"),
        (dict(n_samples=5, n_dim=2, width=-1.0), "width"),
        (dict(n_samples=5, n_dim=3, noise_std=0.0), "noise_std"),
        (dict(n_samples=5, n_dim=2, profile="cauchy"), "profile"),
        (dict(n_samples=5, n_dim=2, offset=float("inf")), "offset"),
    ],
)
def test_two_ridges_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        two_ridges(**kwargs)


def test_two_ridges_logpdf_bad_arguments():
    with pytest.raises(ValueError, match="shape"):
        two_ridges_logpdf(np.zeros((3, 4)), 3)
    with pytest.raises(ValueError, match="n_dim"):
        two_ridges_logpdf(np.zeros((3, 1)), 1)



def test_ridge_geometry_is_what_the_points_follow():
    g = ridge_geometry(3.0, 0.2, 2.0, 30.0)
    np.testing.assert_array_equal(g.centers, [[0.0, 2.0], [2.0, 0.0]])
    np.testing.assert_array_equal(g.scales, [[3.0, 0.2], [0.2, 3.0]])
    np.testing.assert_allclose(g.rotation.T, _ridge_axes(30.0))
    x, labels = two_ridges(2000, 2, length=3.0, width=0.2, offset=2.0, angle=30.0, rng=1, return_labels=True)
    plane = x @ g.rotation  # back to the axis-aligned ridges
    for k in (0, 1):
        assert np.all(np.abs(plane[labels == k] - g.centers[k]) <= g.scales[k] / 2 + 1e-12)
    with pytest.raises(ValueError, match="angle"):
        ridge_geometry(3.0, 0.2, 2.0, "north")
