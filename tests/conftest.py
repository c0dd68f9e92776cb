"""Shared fixtures for the test suite.

* ``shared_data``: path to a file under ``../shared/data`` (relative to the
  repository root), or a clean ``pytest.skip`` when it is absent. The package
  never needs these files; only tests and benchmarks read them.
* ``mnist_model``: an :class:`~pymc_rbm.RBMParams` loaded from
  ``../shared/data/rbm_models/<name>.npz``.
* ``binarized_mnist_test``: the (10000, 784) uint8 binarized MNIST test set.
* ``brute``: the independent brute-force reference module ``tests/_brute.py``
  (also importable as ``import _brute``).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

TESTS_DIR = Path(__file__).resolve().parent
REPO_ROOT = TESTS_DIR.parent
SHARED_DATA = REPO_ROOT.parent / "shared" / "data"

# make ``import _brute`` work from every test module, whatever the import mode
if str(TESTS_DIR) not in sys.path:
    sys.path.insert(0, str(TESTS_DIR))

import _brute  # noqa: E402


def pytest_configure(config):
    # also declared in pyproject.toml; repeated so the suite runs warning-free from a copy of tests/
    config.addinivalue_line("markers", "slow: long statistical or benchmark-like tests")


def shared_data_path(*parts: str) -> Path:
    """``../shared/data/<parts>`` or ``pytest.skip`` when the file is absent."""
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"shared data file {path} is absent")
    return path


@pytest.fixture
def shared_data():
    """A function ``shared_data("rbm_models/mnist_h10.npz") -> Path`` that skips when absent."""

    def get(relative: str) -> Path:
        return shared_data_path(*Path(relative).parts)

    return get


@pytest.fixture
def mnist_model():
    """A function ``mnist_model("mnist_h10") -> RBMParams`` that skips when the file is absent."""
    from pymc_rbm import RBMParams

    def get(name: str):
        return RBMParams.load(shared_data_path("rbm_models", f"{name}.npz"))

    return get


@pytest.fixture(scope="session")
def binarized_mnist_test() -> np.ndarray:
    """The fixed binarization of the MNIST test set, shape (10000, 784), uint8 in {0, 1}."""
    path = shared_data_path("mnist", "binarized_mnist_packed.npz")
    with np.load(path, allow_pickle=False) as f:
        packed = f["test"]
    return np.unpackbits(packed, axis=1)[:, :784]


@pytest.fixture
def brute():
    """The brute-force reference module (tests/_brute.py)."""
    return _brute
