"""Chains split across devices: two simulated CPU devices give the same runs as one, with the chains divided.

The two-device part runs ``tests/jax/two_devices_check.py`` in a fresh
interpreter with ``XLA_FLAGS=--xla_force_host_platform_device_count=2``
(the flag only counts before JAX starts, and a subprocess keeps it away from
pytest-xdist's workers and from the other tests' JAX).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("jax.numpy")

import jax  # noqa: E402

from pymc_rbm.jax import sharding  # noqa: E402

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]


@pytest.fixture(scope="module")
def two_devices():
    env = dict(os.environ)
    env["XLA_FLAGS"] = (env.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=2").strip()
    env["JAX_PLATFORMS"] = "cpu"
    env.pop("JAX_ENABLE_X64", None)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    proc = subprocess.run(
        [sys.executable, str(HERE / "two_devices_check.py")], env=env, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


def test_two_devices_are_simulated(two_devices):
    assert two_devices["n_devices"] == 2


@pytest.mark.parametrize("n", [64, 63])
def test_ais_is_the_same_run_on_one_device_or_two(two_devices, n):
    r = two_devices[f"ais_{n}"]
    assert r["devices"] == [1, 2]
    assert r["max_abs_diff"] == 0.0 and r["same_samples"]
    assert r["log_z"][0] == r["log_z"][1] and r["stderr"][0] == r["stderr"][1]


def test_estimate_distribution_is_the_same(two_devices):
    """Seed by seed the estimates are equal, so their distributions are; and the seeds do differ."""
    one, two = (np.array(two_devices["seeds"][d]) for d in ("1", "2"))
    np.testing.assert_array_equal(one, two)
    assert np.unique(one).size == one.size


def test_reverse_ais_is_the_same_on_two_devices(two_devices):
    assert two_devices["reverse_max_abs_diff"] == 0.0


def test_chains_are_split_between_the_devices(two_devices):
    # 64 chains: device 0 holds chains 0-31, device 1 chains 32-63
    assert two_devices["anneal_shards"] == [[0, [32, 10], 0], [1, [32, 10], 32]]
    assert two_devices["log_w_shards"] == [[0, [32]], [1, [32]]]
    # 32 ladders of 3 replicas, split along the chain axis: 16 ladders each
    assert two_devices["tempering_shards"] == [[0, [3, 16, 10]], [1, [3, 16, 10]]]
    assert two_devices["tempering_same"]
    np.testing.assert_allclose(*two_devices["tempering_rejection"], rtol=1e-6)


def test_mesh_helpers_validate():
    mesh = sharding.chain_mesh()
    assert mesh.axis_names == (sharding.CHAIN_AXIS,)
    assert sharding.padded_size(5, mesh) % mesh.devices.size == 0
    with pytest.raises(ValueError, match="device"):
        sharding.chain_mesh(jax.device_count() + 1)
    with pytest.raises(ValueError, match="devices"):
        sharding.chain_mesh("gpu")
    x = sharding.shard_chains(np.zeros((2 * mesh.devices.size, 3)), mesh)
    assert x.shape == (2 * mesh.devices.size, 3)


def test_importable_without_pymc():
    """pymc_rbm.jax loads with PyMC and PyTensor made unimportable."""
    code = (
        "import sys; sys.modules['pymc'] = None; sys.modules['pytensor'] = None\n"
        "import pymc_rbm.jax, pymc_rbm.jax.ais, pymc_rbm.jax.tempering\n"
        "assert sys.modules['pymc'] is None and sys.modules['pytensor'] is None\n"
    )
    env = dict(os.environ, PYTHONPATH=str(REPO), JAX_PLATFORMS="cpu")
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
