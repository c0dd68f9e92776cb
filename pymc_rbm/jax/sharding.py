"""Chains split across devices with JAX's own sharding: a one-axis mesh over the chain axis.

The chains of a sweep, of AIS and of a replica-exchange ladder never talk
to each other within a step (a swap moves states along the temperature
axis of one ladder), so the chain axis is split across devices and the
parameters are replicated; ``jax.jit`` then runs every step on each device's
own chains without communication. Nothing else changes: the kernels are the
same functions, and the random numbers are the same too, because JAX's
counter-based generator (with ``jax_threefry_partitionable``, JAX's default)
gives every element of an array the same value however the array is split.
So a seeded run gives the same chains on one device or on several (the
tests check it on two simulated CPU devices, started with
``XLA_FLAGS=--xla_force_host_platform_device_count=2`` set before JAX is
imported).
"""

from __future__ import annotations

from collections.abc import Sequence

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

__all__ = ["CHAIN_AXIS", "chain_mesh", "chain_sharding", "replicated", "shard_chains", "padded_size"]

#: Name of the mesh axis the chains are split along.
CHAIN_AXIS = "chains"


def chain_mesh(devices=None) -> Mesh:
    """A one-dimensional mesh named :data:`CHAIN_AXIS` over ``devices``.

    Parameters
    ----------
    devices : None, int or sequence of jax.Device
        ``None``: every device of JAX's default backend; an int ``n``: the
        first ``n`` of them; or the devices themselves.

    Returns
    -------
    jax.sharding.Mesh

    Raises
    ------
    ValueError
        For no devices or more than there are.
    """
    available = jax.devices()
    if devices is None:
        chosen = available
    elif isinstance(devices, (int, np.integer)) and not isinstance(devices, bool):
        if not 1 <= devices <= len(available):
            raise ValueError(f"devices={devices}: there are {len(available)} device(s) ({available[0].platform})")
        chosen = available[: int(devices)]
    elif isinstance(devices, Sequence) and not isinstance(devices, str) and devices:
        chosen = list(devices)
    else:
        raise ValueError(f"devices must be None, a positive int or a non-empty sequence of devices, got {devices!r}")
    return Mesh(np.array(chosen), (CHAIN_AXIS,))


def chain_sharding(mesh: Mesh, chain_axis: int = 0, ndim: int = 2) -> NamedSharding:
    """The sharding that splits axis ``chain_axis`` of an ``ndim``-dimensional array along the mesh.

    Parameters
    ----------
    mesh : jax.sharding.Mesh
        From :func:`chain_mesh`.
    chain_axis : int, default 0
        The chain axis: 0 for ``(n_chains, n_units)``, 1 for a ladder's
        ``(n_temperatures, n_chains, n_units)``.
    ndim : int, default 2

    Returns
    -------
    jax.sharding.NamedSharding
    """
    spec = [None] * ndim
    spec[chain_axis] = CHAIN_AXIS
    return NamedSharding(mesh, PartitionSpec(*spec))


def replicated(mesh: Mesh) -> NamedSharding:
    """The sharding that keeps a whole copy on every device of ``mesh`` (parameters, keys, schedules)."""
    return NamedSharding(mesh, PartitionSpec())


def padded_size(n_chains: int, mesh: Mesh) -> int:
    """The smallest multiple of the mesh's size that holds ``n_chains`` chains."""
    d = mesh.devices.size
    return -(-int(n_chains) // d) * d


def shard_chains(x, mesh: Mesh, chain_axis: int = 0):
    """Place an array on ``mesh`` with its chain axis split (:func:`chain_sharding`).

    Parameters
    ----------
    x : array_like
        Its length along ``chain_axis`` must be a multiple of the mesh's
        size (:func:`padded_size`).
    mesh : jax.sharding.Mesh
    chain_axis : int, default 0

    Returns
    -------
    jax.Array
        Each device holds ``n_chains / n_devices`` consecutive chains.
    """
    x = np.asarray(x) if not isinstance(x, jax.Array) else x
    n, d = x.shape[chain_axis], mesh.devices.size
    if n % d:
        raise ValueError(f"{n} chains cannot be split evenly over {d} devices; pad to {padded_size(n, mesh)}")
    return jax.device_put(x, chain_sharding(mesh, chain_axis, x.ndim))
