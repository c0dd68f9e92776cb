"""Philox4x32-10, the counter-based generator of the dense path and the independence proposals."""

import numpy as np
import pytest

from pymc_rbm.kernels.compiled import available

pytestmark = pytest.mark.skipif(not available(), reason="needs Numba")


def test_philox_known_answers():
    """Philox4x32-10 gives the known-answer vectors of Random123 (Salmon et al. 2011)."""
    from numba import njit

    from pymc_rbm.kernels.philox import philox4x32

    block = njit(lambda c, k: philox4x32(c[0], c[1], c[2], c[3], k[0], k[1]))
    cases = [
        ([0, 0, 0, 0], [0, 0], [0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8]),
        ([0xFFFFFFFF] * 4, [0xFFFFFFFF] * 2, [0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD]),
        ([0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344], [0xA4093822, 0x299F31D0],
         [0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1]),
    ]
    for counter, key, expected in cases:
        got = block(np.array(counter, dtype=np.uint64), np.array(key, dtype=np.uint64))
        assert [int(x) for x in got] == expected
