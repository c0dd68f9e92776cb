"""Tests of pymc_rbm.datasets.modes: the Artificial Modes, their noisy draws and the nearest mode."""

from __future__ import annotations

import numpy as np
import pytest

from pymc_rbm.datasets import AMBIGUOUS, artificial_mode_prototypes, artificial_modes, classify_modes


def test_mode_prototypes():
    protos = artificial_mode_prototypes()
    assert protos.shape == (4, 16) and protos.dtype == np.uint8
    imgs = protos.reshape(4, 4, 4)
    assert np.all(imgs[0] == 0)
    assert np.all(imgs[1] == 1)
    np.testing.assert_array_equal(imgs[2], np.repeat([[0, 0, 1, 1]], 4, axis=0))
    np.testing.assert_array_equal(imgs[3], 1 - imgs[2])
    # pairwise Hamming distances: 16 between complements, 8 otherwise
    dist = (protos[:, None, :] != protos[None, :, :]).sum(-1)
    np.testing.assert_array_equal(dist, [[0, 16, 8, 8], [16, 0, 8, 8], [8, 8, 0, 16], [8, 8, 16, 0]])
    protos[0, 0] = 1  # a fresh copy each call
    assert artificial_mode_prototypes()[0, 0] == 0


@pytest.mark.parametrize("p_flip", [0.1, 0.01])
def test_artificial_modes_flip_rate_and_mode_frequencies(p_flip):
    n = 20_000
    v, labels = artificial_modes(n, p_flip=p_flip, rng=1, return_labels=True)
    assert v.shape == (n, 16) and v.dtype == np.uint8 and labels.shape == (n,)
    assert set(np.unique(v)) <= {0, 1}
    flips = v != artificial_mode_prototypes()[labels]
    se = np.sqrt(p_flip * (1 - p_flip) / flips.size)
    assert abs(flips.mean() - p_flip) < 4 * se
    # flips independent across pixels: per-sample count is Binomial(16, p_flip)
    per_sample = flips.sum(axis=1)
    assert abs(per_sample.var() - 16 * p_flip * (1 - p_flip)) < 0.1 * 16 * p_flip * (1 - p_flip)
    freq = np.bincount(labels, minlength=4) / n
    assert np.all(np.abs(freq - 0.25) < 4 * np.sqrt(0.25 * 0.75 / n))


def test_artificial_modes_weights():
    n = 20_000
    _, labels = artificial_modes(n, weights=[1, 0, 0, 3], rng=2, return_labels=True)
    counts = np.bincount(labels, minlength=4)
    assert counts[1] == counts[2] == 0
    assert abs(counts[3] / n - 0.75) < 4 * np.sqrt(0.75 * 0.25 / n)


def test_artificial_modes_extremes_and_reproducibility():
    v, labels = artificial_modes(50, p_flip=0.0, rng=3, return_labels=True)
    np.testing.assert_array_equal(v, artificial_mode_prototypes()[labels])
    v1, labels1 = artificial_modes(50, p_flip=1.0, rng=3, return_labels=True)
    np.testing.assert_array_equal(v1, 1 - artificial_mode_prototypes()[labels1])
    np.testing.assert_array_equal(artificial_modes(30, rng=7), artificial_modes(30, rng=np.random.default_rng(7)))
    assert not np.array_equal(artificial_modes(30, rng=7), artificial_modes(30, rng=8))
    assert artificial_modes(0, rng=0).shape == (0, 16)
    assert isinstance(artificial_modes(3, rng=0), np.ndarray)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        (dict(n_samples=-1), "n_samples"),
        (dict(n_samples=10, p_flip=-0.1), "p_flip"),
        (dict(n_samples=10, p_flip=1.5), "p_flip"),
        (dict(n_samples=10, p_flip=float("nan")), "p_flip"),
        (dict(n_samples=10, weights=[1, 1, 1]), "weights"),
        (dict(n_samples=10, weights=[1, -1, 1, 1]), "weights"),
        (dict(n_samples=10, weights=[0, 0, 0, 0]), "weights"),
    ],
)
def test_artificial_modes_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        artificial_modes(**kwargs)


def test_classify_modes_round_trip_and_shapes():
    protos = artificial_mode_prototypes()
    np.testing.assert_array_equal(classify_modes(protos), [0, 1, 2, 3])
    np.testing.assert_array_equal(classify_modes(protos.astype(bool)), [0, 1, 2, 3])
    chain = np.broadcast_to(protos, (5, 4, 16))
    assert classify_modes(chain).shape == (5, 4)
    np.testing.assert_array_equal(classify_modes(protos[2]), 2)
    # one flipped pixel keeps the class
    noisy = protos.copy()
    noisy[:, 5] ^= 1
    np.testing.assert_array_equal(classify_modes(noisy), [0, 1, 2, 3])


def test_classify_modes_agrees_with_brute_force():
    v, labels = artificial_modes(2000, p_flip=0.3, rng=4, return_labels=True)
    protos = artificial_mode_prototypes()
    dist = (v[:, None, :] != protos[None]).sum(-1)
    best = dist.min(axis=1)
    unique = (dist == best[:, None]).sum(axis=1) == 1
    expected = np.where(unique, dist.argmin(axis=1), AMBIGUOUS)
    np.testing.assert_array_equal(classify_modes(v), expected)
    assert np.any(~unique)  # the test does see ties
    # with rare flips almost every sample is classified as its mode
    v, labels = artificial_modes(2000, p_flip=0.01, rng=5, return_labels=True)
    assert np.mean(classify_modes(v) == labels) > 0.99


def test_classify_modes_ambiguous():
    top_half = np.zeros((4, 4), dtype=np.uint8)
    top_half[:2] = 1  # distance 8 to all four modes
    assert classify_modes(top_half.ravel()) == AMBIGUOUS == -1


@pytest.mark.parametrize("bad", [np.zeros(15), np.full(16, 2), np.full(16, 0.5), np.array(1)])
def test_classify_modes_bad_input(bad):
    with pytest.raises(ValueError, match="v must"):
        classify_modes(bad)

