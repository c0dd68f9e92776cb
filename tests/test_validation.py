"""Tests of pymc_rbm.validation.check_binary."""

from __future__ import annotations

import numpy as np
import pytest

from pymc_rbm.validation import check_binary


@pytest.mark.parametrize(
    "data",
    [
        [0, 1, 1],
        np.array([0, 1, 1], dtype=np.uint8),
        np.array([0, 1, 1], dtype=np.int64),
        np.array([False, True, True]),
        np.array([0.0, 1.0, 1.0], dtype=np.float32),
        np.array([-0.0, 1.0, 1.0]),
    ],
)
def test_accepts_binary_of_any_numeric_dtype(data):
    out = check_binary(data, 3)
    assert out.dtype == np.float64
    np.testing.assert_array_equal(out, [0.0, 1.0, 1.0])


def test_returns_copy_never_alias_and_never_mutates():
    data = np.array([[0.0, 1.0], [1.0, 0.0]])
    before = data.copy()
    out = check_binary(data, 2)
    assert not np.shares_memory(out, data)
    out[0, 0] = 5.0
    np.testing.assert_array_equal(data, before)
    ro = np.array([[1, 0]], dtype=np.uint8)
    ro.setflags(write=False)
    out2 = check_binary(ro)
    assert out2.flags.writeable and not np.shares_memory(out2, ro)
    assert ro.dtype == np.uint8 and not ro.flags.writeable


def test_dtype_and_shapes():
    data = np.zeros((2, 3, 4), dtype=bool)
    out = check_binary(data, 4, dtype=np.float32)
    assert out.shape == (2, 3, 4) and out.dtype == np.float32
    assert check_binary(np.zeros((0, 5)), 5).shape == (0, 5)  # empty batch is fine
    assert check_binary([1, 0, 1, 1, 0, 0, 1]).shape == (7,)  # n_visible None: any size


@pytest.mark.parametrize(
    "data, match",
    [
        ([0, 1, 0.5], r"data must be binary \(values in \{0, 1\}\); found 1 other value\(s\), e.g. 0.5 at index \(2,\)"),
        ([[0, 1], [2, -1]], r"found 2 other value\(s\), e.g. 2 at index \(1, 0\)"),
        ([0, np.nan, 1], r"found 1 other value\(s\), e.g. nan at index \(1,\)"),
        ([0, np.inf, 1], r"e.g. inf at index \(1,\)"),
        (np.array([0, 255], dtype=np.uint8), r"e.g. 255 at index \(1,\)"),
        (1.0, r"data must have at least one dimension \(the units\), got a scalar"),
        (np.array(["0", "1"]), r"data must be numeric or boolean with values in \{0, 1\}, got dtype <U1"),
        (np.array([0, 1], dtype=complex), r"got dtype complex128"),
        (np.array([0, 1], dtype=object), r"got dtype object"),
    ],
)
def test_errors(data, match):
    with pytest.raises(ValueError, match=match):
        check_binary(data)


def test_wrong_number_of_units():
    with pytest.raises(
        ValueError, match=r"data has 3 units in its last dimension \(shape \(4, 3\)\), but the RBM has n_visible = 5"
    ):
        check_binary(np.zeros((4, 3)), 5)


def test_name_appears_in_messages():
    with pytest.raises(ValueError, match=r"^observed must be binary"):
        check_binary([0, 3], name="observed")
    with pytest.raises(ValueError, match=r"^value has 2 units"):
        check_binary([0, 1], 3, name="value")


def test_errors_do_not_mutate():
    data = np.array([[0.0, 0.3], [1.0, 1.0]])
    before = data.copy()
    with pytest.raises(ValueError):
        check_binary(data)
    with pytest.raises(ValueError):
        check_binary(data, 7)
    np.testing.assert_array_equal(data, before)


def test_check_positive_int():
    from pymc_rbm.validation import check_positive_int

    assert check_positive_int(3, "n") == 3 and isinstance(check_positive_int(np.int64(3), "n"), int)
    assert check_positive_int(0, "burn_in", 0) == 0
    assert check_positive_int(None, "n_chains", allow_none=True) is None
    for bad in (0, -1, 2.0, True, None, "3"):
        with pytest.raises(ValueError, match="n must be a positive integer"):
            check_positive_int(bad, "n")
    with pytest.raises(ValueError, match="n_runs must be an integer of at least 2 .because"):
        check_positive_int(1, "n_runs", 2, " (because)")
