"""Tests of pymc_rbm.datasets.bars_stripes: the Bars and Stripes patterns."""

from __future__ import annotations

import numpy as np
import pytest

from pymc_rbm.datasets import bars_and_stripes


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

