"""The RBM parameters as JAX arrays, the floating type, and the uniforms every kernel draws.

Precision
---------
JAX computes in float32 unless 64-bit types are enabled, and enabling them
is a process-wide switch (``jax_enable_x64``) that this package never flips
for you: importing :mod:`pymc_rbm.jax` leaves JAX's configuration as it
found it. To work in float64, enable it before creating arrays, by one of

- the environment: ``JAX_ENABLE_X64=1 python ...``;
- at the top of a script: ``jax.config.update("jax_enable_x64", True)``;
- around a block: ``with jax.enable_x64(True): ...`` (JAX's own context
  manager; the tests use it so that the rest of the process keeps float32).

:func:`default_dtype` is float64 when 64-bit types are enabled and JAX runs
on the CPU, float32 otherwise (on accelerators float32 is the fast type);
every function takes an explicit ``dtype`` too, and asking for float64 while
64-bit types are off is an error rather than a silent float32.

Matrix products are computed at ``precision="highest"``: on NVIDIA GPUs
JAX's default for float32 products may use TF32 (10-bit mantissas), which
would round every weight to three decimal digits and bias log Z.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

__all__ = ["RBMArrays", "from_params", "default_dtype", "check_dtype", "x64_enabled", "uniform", "matmul"]

#: The precision of every matrix product of the JAX kernels (see the module docstring).
MATMUL_PRECISION = jax.lax.Precision.HIGHEST


class RBMArrays(NamedTuple):
    """The parameters of a binary RBM as JAX arrays (a pytree, passed to every kernel call).

    Attributes
    ----------
    W : jax.Array of shape (n_visible, n_hidden)
    vbias : jax.Array of shape (n_visible,)
    hbias : jax.Array of shape (n_hidden,)
    """

    W: jax.Array
    vbias: jax.Array
    hbias: jax.Array


def x64_enabled() -> bool:
    """Whether JAX's 64-bit types are enabled (``jax_enable_x64``), globally or by ``jax.enable_x64``."""
    return jax.dtypes.canonicalize_dtype(np.float64) == np.float64


def default_dtype():
    """float64 when 64-bit types are enabled and JAX runs on the CPU, else float32.

    Returns
    -------
    numpy.dtype
    """
    if x64_enabled() and jax.default_backend() == "cpu":
        return np.dtype(np.float64)
    return np.dtype(np.float32)


def check_dtype(dtype=None):
    """A floating type the JAX kernels can compute in.

    Parameters
    ----------
    dtype : None, numpy dtype or str
        ``None``: :func:`default_dtype`; else float32 or float64.

    Returns
    -------
    numpy.dtype

    Raises
    ------
    ValueError
        For another type, or float64 while JAX's 64-bit types are off
        (enable them first: see :mod:`pymc_rbm.jax.arrays`).
    """
    if dtype is None:
        return default_dtype()
    dt = np.dtype(dtype)
    if dt not in (np.dtype(np.float32), np.dtype(np.float64)):
        raise ValueError(f"dtype must be float32 or float64, got {dt}")
    if dt == np.float64 and not x64_enabled():
        raise ValueError(
            "float64 needs JAX's 64-bit types, which are off: set JAX_ENABLE_X64=1, call "
            'jax.config.update("jax_enable_x64", True) before creating arrays, or work inside '
            "`with jax.enable_x64(True):`; pymc_rbm.jax never changes that setting itself"
        )
    return dt


def from_params(params, *, dtype=None) -> RBMArrays:
    """The parameters of an RBM as JAX arrays.

    Parameters
    ----------
    params : RBMParams or tuple (W, vbias, hbias)
        A :class:`pymc_rbm.RBMParams` (already validated), or three arrays,
        checked here for shapes and finite values.
    dtype : None, float32 or float64
        See :func:`check_dtype`.

    Returns
    -------
    RBMArrays
        On JAX's default device; shard or replicate them with
        :mod:`pymc_rbm.jax.sharding`.

    Examples
    --------
    >>> from pymc_rbm import RBMParams
    >>> from pymc_rbm.jax import from_params
    >>> arrays = from_params(RBMParams.random(6, 4, rng=0), dtype="float32")
    >>> arrays.W.shape, str(arrays.W.dtype)
    ((6, 4), 'float32')
    """
    dt = check_dtype(dtype)
    if isinstance(params, RBMArrays):
        W, vbias, hbias = params
    elif hasattr(params, "W") and hasattr(params, "vbias") and hasattr(params, "hbias"):
        W, vbias, hbias = params.W, params.vbias, params.hbias
    else:
        try:
            W, vbias, hbias = params
        except (TypeError, ValueError):
            raise TypeError(
                f"params must be an RBMParams or a tuple (W, vbias, hbias), got {type(params).__name__}"
            ) from None
    W, vbias, hbias = (np.asarray(x, dtype=np.float64) for x in (W, vbias, hbias))
    if W.ndim != 2 or vbias.shape != (W.shape[0],) or hbias.shape != (W.shape[1],):
        raise ValueError(
            f"W must have shape (n_visible, n_hidden), vbias (n_visible,), hbias (n_hidden,); "
            f"got {W.shape}, {vbias.shape}, {hbias.shape}"
        )
    for name, x in (("W", W), ("vbias", vbias), ("hbias", hbias)):
        if not np.all(np.isfinite(x)):
            raise ValueError(f"{name} contains non-finite values")
    return RBMArrays(*(jnp.asarray(x, dtype=dt) for x in (W, vbias, hbias)))


def matmul(a, b):
    """``a @ b`` at :data:`MATMUL_PRECISION` (no TF32 rounding on GPUs)."""
    return jnp.matmul(a, b, precision=MATMUL_PRECISION)


def uniform(key, shape, dtype):
    """Uniforms on ``[0, 1)`` fine enough near 0 for the kernels' tail comparisons (stochastic).

    The kernels compare a uniform with the *smaller* of a unit's change and
    stay probabilities (:func:`pymc_rbm.jax.sweep.update_layer`), so what
    matters is resolution near 0. ``jax.random.uniform`` in float32 has steps
    of ``2**-23``, which would turn a unit on with probability ``1.2e-7``
    where the model says ``1e-12``. In float32 the uniforms here are
    ``k 2**-32`` for a 32-bit random integer ``k``: exact below
    ``2**-8``, so every probability is honoured to ``2**-32`` (``2.3e-10``);
    they are capped below 1. In float64 they are ``jax.random.uniform``'s,
    steps of ``2**-52``.

    Parameters
    ----------
    key : jax.Array
        A PRNG key.
    shape : tuple of int
    dtype : float32 or float64

    Returns
    -------
    jax.Array of shape ``shape``
    """
    dt = np.dtype(dtype)
    if dt == np.float64:
        return jax.random.uniform(key, shape, dtype=jnp.float64)
    bits = jax.random.bits(key, shape, dtype=jnp.uint32)
    u = bits.astype(jnp.float32) * jnp.float32(2.0**-32)
    return jnp.minimum(u, jnp.float32(1.0 - 2.0**-24))
