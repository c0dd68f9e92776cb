"""Run by tests/jax/test_jax_sharding.py in a fresh process with two simulated CPU devices.

``XLA_FLAGS=--xla_force_host_platform_device_count=2`` only takes effect
when it is set before JAX initialises its backend, so this runs in its own
interpreter (that also keeps it apart from pytest-xdist's workers). It
prints one JSON object with what the test asserts.
"""

from __future__ import annotations

import json
import sys

import jax
import jax.numpy as jnp
import numpy as np

from pymc_rbm import RBMParams
from pymc_rbm.jax import ais, from_params, reverse_ais, sharding, tempering


def main() -> None:
    out = {"n_devices": jax.device_count()}
    params = RBMParams.random(10, 6, scale=1.5, rng=0)

    # AIS: one device against two, same seed; an even and an odd number of chains
    for n in (64, 63):
        one = ais(params, n_chains=n, schedule=300, operator="flip", rng=5, devices=1)
        two = ais(params, n_chains=n, schedule=300, operator="flip", rng=5, devices=2)
        w1, w2 = one.diagnostics["log_weights"], two.diagnostics["log_weights"]
        out[f"ais_{n}"] = {
            "log_z": [one.log_z, two.log_z],
            "stderr": [one.stderr, two.stderr],
            "devices": [one.diagnostics["devices"], two.diagnostics["devices"]],
            "max_abs_diff": float(np.abs(w1 - w2).max()),
            "same_samples": bool(np.array_equal(one.diagnostics["samples"], two.diagnostics["samples"])),
        }

    # distribution of the estimate over seeds, one device and two
    out["seeds"] = {
        str(d): [ais(params, n_chains=64, schedule=300, operator="flip", rng=s, devices=d).log_z for s in range(6)]
        for d in (1, 2)
    }

    # reverse AIS too (the same compiled loop: the schedule is data)
    x = (np.random.default_rng(1).random((64, 10)) < 0.5).astype(float)
    r1 = reverse_ais(params, x, n_chains=None, schedule=300, operator="flip", rng=2, devices=1)
    r2 = reverse_ais(params, x, n_chains=None, schedule=300, operator="flip", rng=2, devices=2)
    out["reverse_max_abs_diff"] = float(np.abs(r1.diagnostics["log_weights"] - r2.diagnostics["log_weights"]).max())

    # the chains are split: where the final states of a sharded anneal live
    from pymc_rbm.jax.ais import anneal

    mesh = sharding.chain_mesh(2)
    arrays = from_params(params)
    v0 = jnp.zeros((64, 10))
    log_w, v = anneal(jax.random.key(0), v0, arrays, np.zeros(10), np.linspace(0, 1, 301), operator="flip", mesh=mesh)
    out["anneal_shards"] = sorted(
        [[s.device.id, list(s.data.shape), s.index[0].start or 0] for s in v.addressable_shards]
    )
    out["log_w_shards"] = sorted([[s.device.id, list(s.data.shape)] for s in log_w.addressable_shards])

    # replica exchange with the ladders split along axis 1
    betas = [0.0, 0.5, 1.0]
    state = tempering.init(jax.random.key(1), np.zeros((32, 10)), arrays, betas)
    plain, stats_plain = tempering.run(jax.random.key(2), state, arrays, betas, 20, operator=0.5)
    split = tempering.TemperedState(
        sharding.shard_chains(state.v, mesh, chain_axis=1),
        sharding.shard_chains(state.h, mesh, chain_axis=1),
        state.n_rounds,
    )
    sharded, stats_sharded = tempering.run(jax.random.key(2), split, arrays, betas, 20, operator=0.5)
    out["tempering_same"] = bool(np.array_equal(np.asarray(plain.v), np.asarray(sharded.v)))
    out["tempering_rejection"] = [stats_plain.rejection.tolist(), stats_sharded.rejection.tolist()]
    out["tempering_shards"] = sorted([[s.device.id, list(s.data.shape)] for s in sharded.v.addressable_shards])
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
