"""Counter-based uniforms: Philox4x32-10 (Salmon, Moraes, Dror & Shaw 2011), compiled.

Block ``c`` of the generator is a function of the counter ``c`` and the key
alone, so a loop over counters carries no state and vectorises; the dense
path of large batches (:func:`pymc_rbm.kernels.update_rule.dense_layer`) and
the independence proposals draw each row's uniforms from it, keyed by four
32-bit words drawn once from the caller's generator
(:func:`pymc_rbm.kernels.compiled.dense_key`). Imported on first use
(importing :mod:`pymc_rbm.kernels` does not load Numba).
"""

from __future__ import annotations

import numpy as np
from numba import njit

_U32 = np.uint64(0xFFFFFFFF)
_PHILOX_M0, _PHILOX_M1 = np.uint64(0xD2511F53), np.uint64(0xCD9E8D57)
_PHILOX_W0, _PHILOX_W1 = np.uint64(0x9E3779B9), np.uint64(0xBB67AE85)
_TWO_M53 = 1.0 / 9007199254740992.0


@njit(cache=True, nogil=True, inline="always")
def philox4x32(c0, c1, c2, c3, k0, k1):  # pragma: no cover - compiled
    """Philox4x32-10 (Salmon, Moraes, Dror & Shaw 2011): the 4 x 32 random bits of counter ``c`` under key ``k``.

    Each word is a uint64 below 2**32. A counter-based generator: block ``c`` is a function of ``(c, k)``
    alone, so a loop over counters has no carried state and vectorises (unlike NumPy's sequential PCG64,
    one call per uniform)."""
    for _ in range(10):
        p0 = _PHILOX_M0 * c0
        p1 = _PHILOX_M1 * c2
        n0 = (p1 >> np.uint64(32)) ^ c1 ^ k0
        n2 = (p0 >> np.uint64(32)) ^ c3 ^ k1
        c1, c3 = p1 & _U32, p0 & _U32
        c0, c2 = n0, n2
        k0, k1 = (k0 + _PHILOX_W0) & _U32, (k1 + _PHILOX_W1) & _U32
    return c0, c1, c2, c3


@njit(cache=True, nogil=True)
def philox_uniforms(key, row, stream, u):  # pragma: no cover - compiled
    """Fill ``u`` (of even length) with uniforms ``m 2**-53`` (NumPy's ``random()`` resolution), two per block.

    Block ``j`` (``u[2j]``, ``u[2j + 1]``) is Philox's counter ``(j, row, stream ^ key[2], key[3])`` under
    the key ``(key[0], key[1])``: ``key`` holds four 32-bit words (uint64)."""
    c1 = np.uint64(row) & _U32
    c2 = (np.uint64(stream) ^ key[2]) & _U32
    c3, k0, k1 = key[3], key[0], key[1]
    for j in range(u.shape[0] // 2):
        r0, r1, r2, r3 = philox4x32(np.uint64(j), c1, c2, c3, k0, k1)
        u[2 * j] = np.float64(np.int64((r0 << np.uint64(21)) | (r1 >> np.uint64(11)))) * _TWO_M53
        u[2 * j + 1] = np.float64(np.int64((r2 << np.uint64(21)) | (r3 >> np.uint64(11)))) * _TWO_M53
