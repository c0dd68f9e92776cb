"""Tests of pymc_rbm.datasets: generated data sets and the local MNIST loaders."""

from __future__ import annotations

import gzip
import io
import struct
import zipfile
from pathlib import Path

import numpy as np
import pytest
from scipy.special import logsumexp
from scipy.stats import multivariate_normal, norm

from pymc_rbm.datasets import (
    AMBIGUOUS,
    MNIST,
    artificial_mode_prototypes,
    artificial_modes,
    bars_and_stripes,
    classify_modes,
    load_mnist,
    read_idx,
    two_ridges,
    two_ridges_logpdf,
)

SHARED_MNIST = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "mnist"


def _is_bar_or_stripe(row: np.ndarray, n: int) -> bool:
    img = row.reshape(n, n)
    bars = bool(np.all(img == img[0]))  # all rows equal: whole columns on
    stripes = bool(np.all(img == img[:, :1]))  # all columns equal: whole rows on
    return bars or stripes


# ---------------------------------------------------------- bars and stripes
@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_bars_and_stripes_distinct_counts(n):
    data = bars_and_stripes(n)
    assert data.shape == (2 ** (n + 1) - 2, n * n)
    assert data.dtype == np.uint8
    assert len(np.unique(data, axis=0)) == len(data)
    assert all(_is_bar_or_stripe(row, n) for row in data)
    # every bar-or-stripe image of size n is present
    assert set(map(bytes, data)) == {bytes(r) for r in bars_and_stripes(n, variant="mackay")}


def test_bars_and_stripes_4x4_both_variants():
    distinct = bars_and_stripes()
    mackay = bars_and_stripes(4, variant="mackay")
    assert distinct.shape == (30, 16)
    assert mackay.shape == (32, 16)
    assert all(_is_bar_or_stripe(row, 4) for row in mackay)
    values, counts = np.unique(mackay, axis=0, return_counts=True)
    assert len(values) == 30
    doubled = values[counts == 2]
    assert sorted(map(int, doubled.sum(axis=1))) == [0, 16]  # all zero and all one, twice each
    assert set(counts.tolist()) == {1, 2}


def test_bars_and_stripes_order():
    mackay = bars_and_stripes(4, variant="mackay")
    bars, stripes = mackay[:16].reshape(16, 4, 4), mackay[16:].reshape(16, 4, 4)
    assert np.all(bars == bars[:, :1, :])  # bars: columns on
    assert np.all(stripes == stripes[:, :, :1])  # stripes: rows on
    # bars pattern k switches on column j when bit 3 - j of k is set
    k = np.arange(16)
    expected_lines = (k[:, None] >> np.arange(3, -1, -1)) & 1
    np.testing.assert_array_equal(bars[:, 0, :], expected_lines)
    np.testing.assert_array_equal(stripes[:, :, 0], expected_lines)
    distinct = bars_and_stripes(4)
    np.testing.assert_array_equal(distinct[:16], mackay[:16])
    np.testing.assert_array_equal(distinct[16:], mackay[17:31])


@pytest.mark.parametrize("bad", [1, 0, -3, 2.5, "4", True])
def test_bars_and_stripes_bad_n(bad):
    with pytest.raises(ValueError, match="n must be an integer of at least 2"):
        bars_and_stripes(bad)


def test_bars_and_stripes_bad_variant():
    with pytest.raises(ValueError, match="variant"):
        bars_and_stripes(4, variant="MacKay32")


# ---------------------------------------------------------- artificial modes
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


# --------------------------------------------------------------- two ridges
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


# -------------------------------------------------------------------- MNIST
def _write_idx(path: Path, array: np.ndarray, *, compress: bool = False) -> None:
    code = {np.dtype(np.uint8): 0x08, np.dtype(np.int32): 0x0C, np.dtype(np.float64): 0x0E}[array.dtype]
    header = struct.pack(">BBBB", 0, 0, code, array.ndim) + struct.pack(f">{array.ndim}I", *array.shape)
    payload = header + array.astype(array.dtype.newbyteorder(">")).tobytes()
    path.write_bytes(gzip.compress(payload) if compress else payload)


@pytest.fixture
def tiny_mnist():
    rng = np.random.default_rng(14)
    return {
        "train": (rng.integers(0, 256, size=(7, 28, 28), dtype=np.uint8), rng.integers(0, 10, 7).astype(np.uint8)),
        "test": (rng.integers(0, 256, size=(3, 28, 28), dtype=np.uint8), rng.integers(0, 10, 3).astype(np.uint8)),
    }


def _write_idx_dir(directory: Path, data, *, compress: bool) -> None:
    suffix = ".gz" if compress else ""
    for split, prefix in (("train", "train"), ("test", "t10k")):
        images, labels = data[split]
        _write_idx(directory / f"{prefix}-images-idx3-ubyte{suffix}", images, compress=compress)
        _write_idx(directory / f"{prefix}-labels-idx1-ubyte{suffix}", labels, compress=compress)


def test_read_idx_round_trip(tmp_path):
    for arr in [np.arange(24, dtype=np.uint8).reshape(2, 3, 4), np.array([-1, 7, 2**30], dtype=np.int32),
                np.linspace(0, 1, 6).reshape(3, 2)]:  # fmt: skip
        for compress in (False, True):
            path = tmp_path / f"a{arr.dtype}{compress}"
            _write_idx(path, arr, compress=compress)
            out = read_idx(path)
            assert out.dtype == arr.dtype.newbyteorder("=") and out.shape == arr.shape
            np.testing.assert_array_equal(out, arr)


def test_read_idx_bad_files(tmp_path):
    bad = tmp_path / "bad"
    bad.write_bytes(b"\x01\x02\x08\x01" + b"\x00" * 8)
    with pytest.raises(ValueError, match="not an idx file"):
        read_idx(bad)
    bad.write_bytes(b"")
    with pytest.raises(ValueError, match="not an idx file"):
        read_idx(bad)
    truncated = tmp_path / "truncated"
    _write_idx(truncated, np.zeros((2, 3), np.uint8))
    truncated.write_bytes(truncated.read_bytes()[:-1])
    with pytest.raises(ValueError, match="data bytes"):
        read_idx(truncated)


@pytest.mark.parametrize("compress", [False, True])
def test_load_mnist_idx_directory(tmp_path, tiny_mnist, compress):
    _write_idx_dir(tmp_path, tiny_mnist, compress=compress)
    for split in ("train", "test"):
        images, labels = tiny_mnist[split]
        data = load_mnist(tmp_path, split=split)
        assert isinstance(data, MNIST)
        assert data.images.shape == (len(images), 784) and data.images.dtype == np.float64
        np.testing.assert_allclose(data.images, images.reshape(len(images), -1) / 255.0)
        np.testing.assert_array_equal(data.labels, labels)
        assert data.labels.dtype == np.int64


def test_load_mnist_idx_missing_file(tmp_path, tiny_mnist):
    _write_idx_dir(tmp_path, tiny_mnist, compress=False)
    (tmp_path / "t10k-labels-idx1-ubyte").unlink()
    assert load_mnist(tmp_path, split="train").images.shape == (7, 784)
    with pytest.raises(FileNotFoundError, match="t10k-labels-idx1-ubyte"):
        load_mnist(tmp_path, split="test")
    with pytest.raises(ValueError, match="'train' or 'test'"):
        load_mnist(tmp_path, split="valid")


def test_load_mnist_uint8_npz_and_binarize(tmp_path, tiny_mnist):
    path = tmp_path / "mnist.npz"
    (xtr, ytr), (xte, yte) = tiny_mnist["train"], tiny_mnist["test"]
    np.savez(path, x_train=xtr, y_train=ytr, x_test=xte, y_test=yte)
    data = load_mnist(path, split="test", dtype=np.float32)
    assert data.images.dtype == np.float32
    np.testing.assert_allclose(data.images, xte.reshape(3, -1) / 255.0, rtol=1e-6)
    np.testing.assert_array_equal(data.labels, yte)

    thr = load_mnist(path, binarize="threshold", threshold=0.3)
    assert thr.images.dtype == np.uint8
    np.testing.assert_array_equal(thr.images, (xtr.reshape(7, -1) / 255.0 > 0.3).astype(np.uint8))

    s1 = load_mnist(path, binarize="stochastic", rng=15).images
    s2 = load_mnist(path, binarize="stochastic", rng=np.random.default_rng(15)).images
    np.testing.assert_array_equal(s1, s2)
    assert set(np.unique(s1)) <= {0, 1}
    assert np.all(s1[xtr.reshape(7, -1) == 0] == 0) and np.all(s1[xtr.reshape(7, -1) == 255] == 1)


def test_load_mnist_stochastic_binarization_rate(tmp_path):
    path = tmp_path / "gray.npz"
    x = np.full((50, 28, 28), 64, dtype=np.uint8)  # P(1) = 64 / 255
    np.savez(path, x_train=x, y_train=np.zeros(50, np.uint8), x_test=x[:1], y_test=np.zeros(1, np.uint8))
    images = load_mnist(path, binarize="stochastic", rng=16).images
    p = 64 / 255
    assert abs(images.mean() - p) < 4 * np.sqrt(p * (1 - p) / images.size)


def test_load_mnist_larochelle_npz(tmp_path):
    rng = np.random.default_rng(17)
    splits = {name: rng.integers(0, 2, size=(m, 784), dtype=np.uint8) for name, m in
              [("train", 5), ("valid", 2), ("test", 3)]}  # fmt: skip
    path = tmp_path / "binarized.npz"
    np.savez_compressed(path, **{k: np.packbits(v, axis=1) for k, v in splits.items()})
    for name, x in splits.items():
        for binarize in (None, "threshold", "stochastic"):
            data = load_mnist(path, split=name, binarize=binarize, rng=0)
            assert data.labels is None
            assert data.images.dtype == np.uint8
            np.testing.assert_array_equal(data.images, x)


def test_load_mnist_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="x_train"):
        load_mnist(tmp_path / "nowhere.npz")
    odd = tmp_path / "odd.npz"
    np.savez(odd, images=np.zeros((2, 784), np.uint8))
    with pytest.raises(ValueError, match="keys"):
        load_mnist(odd)
    good = tmp_path / "good.npz"
    x = np.zeros((2, 28, 28), np.uint8)
    np.savez(good, x_train=x, y_train=np.zeros(2, np.uint8), x_test=x, y_test=np.zeros(2, np.uint8))
    with pytest.raises(ValueError, match="split must be one of"):
        load_mnist(good, split="training")
    with pytest.raises(ValueError, match="not in"):
        load_mnist(good, split="valid")
    with pytest.raises(ValueError, match="binarize"):
        load_mnist(good, binarize="otsu")
    with pytest.raises(ValueError, match="threshold"):
        load_mnist(good, binarize="threshold", threshold=2.0)
    text = tmp_path / "notes.txt"
    text.write_text("not an archive")
    with pytest.raises(ValueError, match="npz"):
        load_mnist(text)
    empty_dir = tmp_path / "empty"
    empty_dir.mkdir()
    with pytest.raises(FileNotFoundError, match="train-images-idx3-ubyte"):
        load_mnist(empty_dir)


def test_load_mnist_reads_npz_files_as_parameter_files_are_read(tmp_path):
    """Empty, truncated and forged archives get the same clear errors as RBMParams.load, nothing allocated."""
    x = np.zeros((50, 28, 28), np.uint8)
    good = tmp_path / "good.npz"
    np.savez(good, x_train=x, y_train=np.zeros(50, np.uint8), x_test=x, y_test=np.zeros(50, np.uint8))
    raw = good.read_bytes()
    empty, truncated = tmp_path / "empty.npz", tmp_path / "truncated.npz"
    empty.write_bytes(b"")
    truncated.write_bytes(raw[: len(raw) // 2])
    for bad in (empty, truncated):
        with pytest.raises(ValueError, match="empty, truncated|corrupt|truncated"):
            load_mnist(bad)
    forged = tmp_path / "forged.npz"
    header = io.BytesIO()  # a uint8 array header that announces 7.8 TB, and no data
    np.lib.format.write_array_header_1_0(header, {"descr": "|u1", "fortran_order": False, "shape": (10**10, 28, 28)})
    with zipfile.ZipFile(forged, "w") as z:
        for key in ("x_train", "y_train", "x_test", "y_test"):
            z.writestr(f"{key}.npy", header.getvalue())
    with pytest.raises(ValueError, match="announces|corrupt"):
        load_mnist(forged)
    assert load_mnist(tmp_path / "good").images.shape == (50, 784)  # the name np.savez was given finds good.npz


# ------------------------------------------------------- real shared MNIST
def _shared(name: str) -> Path:
    path = SHARED_MNIST / name
    if not path.is_file():
        pytest.skip(f"shared MNIST file {path} is absent")
    return path


def test_shared_mnist_uint8():
    data = load_mnist(_shared("mnist_uint8.npz"), split="test")
    assert data.images.shape == (10000, 784)
    assert 0.0 <= data.images.min() and data.images.max() == 1.0
    assert np.array_equal(np.unique(data.labels), np.arange(10))
    np.testing.assert_array_equal(data.labels[:5], [7, 2, 1, 0, 4])  # the well-known first test digits


def test_shared_mnist_binarized():
    path = _shared("binarized_mnist_packed.npz")
    sizes = {"train": 50000, "valid": 10000, "test": 10000}
    for split in ("valid", "test"):
        data = load_mnist(path, split=split)
        assert data.images.shape == (sizes[split], 784) and data.labels is None
        assert set(np.unique(data.images)) == {0, 1}
        assert 0.1 < data.images.mean() < 0.16  # about 13 % of the pixels are on
