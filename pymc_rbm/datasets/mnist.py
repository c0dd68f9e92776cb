"""MNIST from local files: an ``.npz`` file or a directory of the four idx files; nothing is downloaded."""

from __future__ import annotations

import gzip
import os
from pathlib import Path
from typing import NamedTuple

import numpy as np

from pymc_rbm.validation import check_real, open_npz, read_npz_array

__all__ = ["MNIST", "load_mnist", "read_idx"]


class MNIST(NamedTuple):
    """Images and labels of one MNIST split.

    Attributes
    ----------
    images : ndarray of shape (n_images, 784)
        Flattened 28×28 images: floats in [0, 1] or binary uint8 (see
        :func:`load_mnist`).
    labels : ndarray of shape (n_images,), dtype int64, or None
        Digit classes 0-9; None where the file holds none (the binarized
        file of Larochelle).
    """

    images: np.ndarray
    labels: np.ndarray | None


_N_PIXELS = 784
_SPLITS = ("train", "valid", "test")
_KEYS_UINT8 = {"x_train", "y_train", "x_test", "y_test"}
_KEYS_BINARIZED = {"train", "valid", "test"}
_IDX_PREFIX = {"train": "train", "test": "t10k"}
_IDX_DTYPES = {0x08: ">u1", 0x09: ">i1", 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}
_GZIP_MAGIC = b"\x1f\x8b"
_EXPECTED = (
    "an .npz file with keys x_train, y_train, x_test, y_test (uint8 images) or train, valid, test "
    "(Larochelle's binarization, packed with np.packbits(x, axis=1)), or a directory holding the idx "
    "files train-images-idx3-ubyte, train-labels-idx1-ubyte, t10k-images-idx3-ubyte and "
    "t10k-labels-idx1-ubyte (optionally gzipped, .gz)"
)


def read_idx(path) -> np.ndarray:
    """Read an array from a file in the idx format of MNIST (optionally gzipped).

    The format: two zero bytes, a type code (0x08 uint8, 0x09 int8, 0x0B
    int16, 0x0C int32, 0x0D float32, 0x0E float64), the number of dimensions,
    then each dimension as a big-endian uint32, then the data, big-endian,
    in C order. MNIST images have the magic number 2051 (0x00000803), labels
    2049 (0x00000801).

    Parameters
    ----------
    path : str or os.PathLike
        The file; gzip compression is recognized from its content.

    Returns
    -------
    ndarray
        The array, in native byte order, with the shape the file states.
    """
    path = Path(path)
    with open(path, "rb") as fh:
        raw = fh.read()
    if raw[:2] == _GZIP_MAGIC:
        raw = gzip.decompress(raw)
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0 or raw[2] not in _IDX_DTYPES:
        raise ValueError(
            f"{path} is not an idx file: its magic number {raw[:4].hex() or '(empty file)'} should be "
            "00 00 <type code> <number of dimensions>, e.g. 00000803 for MNIST images"
        )
    dtype = np.dtype(_IDX_DTYPES[raw[2]])
    ndim = raw[3]
    header = 4 + 4 * ndim
    if len(raw) < header:
        raise ValueError(f"{path} is truncated: the idx header of a {ndim}-dimensional array needs {header} bytes")
    shape = tuple(int(d) for d in np.frombuffer(raw, dtype=">u4", count=ndim, offset=4))
    n_bytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if len(raw) - header != n_bytes:
        raise ValueError(
            f"{path} holds {len(raw) - header} data bytes, but its header announces shape {shape} "
            f"of {dtype.name} ({n_bytes} bytes)"
        )
    data = np.frombuffer(raw, dtype=dtype, offset=header).reshape(shape)
    return data.astype(dtype.newbyteorder("="))


def _find_idx(directory: Path, prefix: str, kind: str, ndim: int) -> Path:
    """The idx file of ``prefix`` (train/t10k) and ``kind`` (images/labels) in ``directory``."""
    names = [f"{prefix}-{kind}-idx{ndim}-ubyte", f"{prefix}-{kind}.idx{ndim}-ubyte"]
    for name in names:
        for candidate in (directory / name, directory / f"{name}.gz"):
            if candidate.is_file():
                return candidate
    raise FileNotFoundError(
        f"no {kind} file for this split in directory {directory}: expected {names[0]} or {names[0]}.gz "
        f"(found: {sorted(p.name for p in directory.iterdir()) or 'nothing'}); it should hold {_EXPECTED}"
    )


def _load_idx_split(directory: Path, split: str) -> tuple[np.ndarray, np.ndarray]:
    """Raw uint8 images (N, 28, 28) and labels (N,) of one split from idx files."""
    if split not in _IDX_PREFIX:
        raise ValueError(f"split {split!r} is not in the idx files; choose 'train' or 'test'")
    prefix = _IDX_PREFIX[split]
    images_path = _find_idx(directory, prefix, "images", 3)
    labels_path = _find_idx(directory, prefix, "labels", 1)
    images, labels = read_idx(images_path), read_idx(labels_path)
    if images.dtype != np.uint8 or images.ndim != 3:
        raise ValueError(
            f"{images_path} should hold uint8 images of shape (N, 28, 28), got {images.dtype} {images.shape}"
        )
    if labels.dtype != np.uint8 or labels.ndim != 1:
        raise ValueError(f"{labels_path} should hold uint8 labels of shape (N,), got {labels.dtype} {labels.shape}")
    if len(images) != len(labels):
        raise ValueError(f"{images_path} holds {len(images)} images but {labels_path} {len(labels)} labels")
    return images, labels


def _load_npz_split(path: Path, split: str) -> tuple[np.ndarray, np.ndarray | None, bool]:
    """Images, labels (or None) and whether the images are already binary, from an .npz file.

    Read as :meth:`RBMParams.load <pymc_rbm.params.RBMParams.load>` reads its files
    (:func:`~pymc_rbm.validation.open_npz`): no pickle, and a clear error for an
    empty, truncated or corrupt file or for a header that announces more data
    than the file holds.
    """
    with open_npz(path, _EXPECTED) as archive:
        keys = set(archive.files)
        if _KEYS_UINT8 <= keys:
            if split not in ("train", "test"):
                raise ValueError(f"split {split!r} is not in {path} (keys {sorted(keys)}); choose 'train' or 'test'")
            images, labels = (read_npz_array(archive, f"{k}_{split}", path) for k in ("x", "y"))
            if images.dtype != np.uint8:
                raise ValueError(f"{path}: x_{split} should hold uint8 images, got dtype {images.dtype}")
            if len(images) != len(labels):
                raise ValueError(f"{path}: x_{split} holds {len(images)} images but y_{split} {len(labels)} labels")
            return images, labels, False
        if _KEYS_BINARIZED <= keys:
            packed = read_npz_array(archive, split, path)
            if packed.dtype != np.uint8 or packed.ndim != 2 or packed.shape[1] * 8 < _N_PIXELS:
                raise ValueError(
                    f"{path}: {split!r} should hold np.packbits(x, axis=1) of binary images, a uint8 array "
                    f"of shape (N, {_N_PIXELS // 8}), got {packed.dtype} {packed.shape}"
                )
            return np.unpackbits(packed, axis=1)[:, :_N_PIXELS], None, True
    raise ValueError(f"{path} has keys {sorted(keys)}, which are not an MNIST file known here; expected {_EXPECTED}")


def _binarize(images: np.ndarray, binarize, threshold: float, rng, dtype) -> np.ndarray:
    """Scale raw uint8 intensities to [0, 1] or binarize them; see :func:`load_mnist`."""
    if binarize is None:
        return images.astype(dtype) / np.asarray(255, dtype=dtype)
    if binarize == "threshold":
        return (images > 255.0 * threshold).astype(np.uint8)
    rng = np.random.default_rng(rng)
    u = rng.random(images.shape, dtype=np.float32)
    return (255.0 * u < images).astype(np.uint8)  # P(1) = images / 255


def load_mnist(
    path,
    *,
    split: str = "train",
    binarize: str | None = None,
    threshold: float = 0.5,
    rng=None,
    dtype=np.float64,
) -> MNIST:
    """Load one split of MNIST from local files; nothing is downloaded.

    Three layouts are recognized:

    a. an ``.npz`` file with keys ``x_train``, ``y_train``, ``x_test``,
       ``y_test`` (uint8 images of shape (N, 28, 28) and their labels);
    b. an ``.npz`` file of Larochelle's fixed binarization (50000 train,
       10000 valid, 10000 test), keys ``train``, ``valid``, ``test`` holding
       ``np.packbits(x, axis=1)``, without labels;
    c. a directory with the four idx files ``train-images-idx3-ubyte``,
       ``train-labels-idx1-ubyte``, ``t10k-images-idx3-ubyte``,
       ``t10k-labels-idx1-ubyte`` (each may be gzipped with a ``.gz``
       suffix; the spelling ``train-images.idx3-ubyte`` is accepted too).

    Parameters
    ----------
    path : str or os.PathLike
        The ``.npz`` file or the directory.
    split : {"train", "valid", "test"}, default "train"
        Which part; ``"valid"`` exists only in layout (b).
    binarize : {None, "threshold", "stochastic"}, optional
        None: intensities ``pixel / 255`` as floats in [0, 1] (layout b:
        the binary images as they are, uint8). ``"threshold"``: 1 where
        ``pixel / 255 > threshold``. ``"stochastic"``: each pixel is 1 with
        probability ``pixel / 255``, independently (stochastic; a fresh
        binarization on every call unless ``rng`` is fixed). Layout (b) is
        binary already, so both leave it unchanged.
    threshold : float, default 0.5
        Threshold of ``binarize="threshold"``, in [0, 1].
    rng : numpy.random.Generator or seed, optional
        Source of randomness of ``binarize="stochastic"``.
    dtype : numpy float dtype, default float64
        Type of the images when ``binarize`` is None and the data are not
        binary already.

    Returns
    -------
    MNIST
        ``images`` of shape (n_images, 784) (float ``dtype`` in [0, 1], or
        uint8 in {0, 1} when binarized or binary already) and ``labels`` of
        shape (n_images,) as int64, or None for layout (b).

    Raises
    ------
    FileNotFoundError
        ``path`` or an expected idx file does not exist.
    ValueError
        Unknown keys or a damaged file, a split the file does not hold, or a
        bad ``binarize`` or ``threshold``.

    Examples
    --------
    >>> from pymc_rbm.datasets import load_mnist
    >>> data = load_mnist("mnist_uint8.npz", split="test",
    ...                   binarize="threshold")  # doctest: +SKIP
    >>> data.images.shape, data.labels.shape  # doctest: +SKIP
    ((10000, 784), (10000,))
    """
    if split not in _SPLITS:
        raise ValueError(f"split must be one of {', '.join(map(repr, _SPLITS))}, got {split!r}")
    if binarize not in (None, "threshold", "stochastic"):
        raise ValueError(f"binarize must be None, 'threshold' or 'stochastic', got {binarize!r}")
    threshold = check_real(threshold, "threshold", 0.0, 1.0)
    path = Path(os.path.expanduser(os.fspath(path)))
    if not path.exists() and Path(f"{path}.npz").is_file():
        path = Path(f"{path}.npz")  # the name np.savez was given, as RBMParams.load finds it
    if not path.exists():
        raise FileNotFoundError(f"no such file or directory: {path}; expected {_EXPECTED}")

    if path.is_dir():
        images, labels = _load_idx_split(path, split)
        is_binary = False
    else:
        images, labels, is_binary = _load_npz_split(path, split)
    images = images.reshape(len(images), -1)
    if images.shape[1] != _N_PIXELS:
        raise ValueError(f"{path}: images of split {split!r} have {images.shape[1]} pixels, expected {_N_PIXELS}")
    if labels is not None:
        labels = np.asarray(labels).astype(np.int64)

    if is_binary:
        images = images.astype(np.uint8)
    else:
        images = _binarize(images, binarize, threshold, rng, dtype)
    return MNIST(images, labels)
