"""Tests of pymc_rbm.datasets.mnist: the local MNIST loaders."""

from __future__ import annotations

import gzip
import io
import struct
import zipfile
from pathlib import Path

import numpy as np
import pytest

from pymc_rbm.datasets import MNIST, load_mnist, read_idx

SHARED_MNIST = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "mnist"


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
