"""Tests of pymc_rbm.params: RBMParams and SpinRBMParams."""

from __future__ import annotations

import dataclasses
import re

import _brute
import numpy as np
import pytest

from pymc_rbm import RBMParams, SpinRBMParams
from pymc_rbm.estimators import log_partition_exact


def _arrays(nv=3, nh=2, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(nv, nh)), rng.normal(size=nv), rng.normal(size=nh)


# ------------------------------------------------------------------ basics
def test_basic_attributes_and_repr():
    W, b, c = _arrays(3, 2)
    p = RBMParams(W, b, c)
    assert (p.n_visible, p.n_hidden) == (3, 2)
    assert p.dtype == np.float64
    assert p.W.shape == (3, 2) and p.vbias.shape == (3,) and p.hbias.shape == (2,)
    assert "n_visible=3" in repr(p) and "n_hidden=2" in repr(p)
    np.testing.assert_array_equal(p.W, W)


def test_accepts_lists_and_ints_and_converts_to_float():
    p = RBMParams([[1, 2], [3, 4]], [0, 1], [1, 0])
    assert p.W.dtype == np.float64
    np.testing.assert_array_equal(p.W, [[1.0, 2.0], [3.0, 4.0]])


def test_float32_dtype_and_astype():
    W, b, c = _arrays()
    p32 = RBMParams(W, b, c, dtype=np.float32)
    assert p32.dtype == np.float32
    assert p32.vbias.dtype == np.float32 and p32.hbias.dtype == np.float32
    p64 = p32.astype(np.float64)
    assert p64.dtype == np.float64
    assert not p64.W.flags.writeable


def test_equality_by_value_and_unhashable():
    W, b, c = _arrays()
    assert RBMParams(W, b, c) == RBMParams(W.copy(), b.copy(), c.copy())
    assert RBMParams(W, b, c) != RBMParams(W, b, c + 1)
    assert RBMParams(W, b, c).__eq__("not params") is NotImplemented
    with pytest.raises(TypeError):
        hash(RBMParams(W, b, c))


# -------------------------------------------------------------- validation
@pytest.mark.parametrize(
    "W, vbias, hbias, match",
    [
        (np.zeros(3), np.zeros(3), np.zeros(2), r"W must have 2 dimension\(s\), got shape \(3,\)"),
        (np.zeros((3, 2, 1)), np.zeros(3), np.zeros(2), r"W must have 2 dimension\(s\), got shape \(3, 2, 1\)"),
        (np.zeros((3, 2)), np.zeros((3, 1)), np.zeros(2), r"vbias must have 1 dimension\(s\), got shape \(3, 1\)"),
        (np.zeros((3, 2)), np.zeros(3), 0.0, r"hbias must have 1 dimension\(s\), got shape \(\)"),
        (np.zeros((3, 2)), np.zeros(4), np.zeros(2), r"vbias has shape \(4,\), but W of shape \(3, 2\) needs \(3,\)"),
        (np.zeros((3, 2)), np.zeros(3), np.zeros(3), r"hbias has shape \(3,\), but W of shape \(3, 2\) needs \(2,\)"),
        (np.zeros((0, 2)), np.zeros(0), np.zeros(2), r"at least one visible and one hidden unit, got shape \(0, 2\)"),
        (np.zeros((3, 0)), np.zeros(3), np.zeros(0), r"at least one visible and one hidden unit, got shape \(3, 0\)"),
        ([["a", "b"]], np.zeros(1), np.zeros(2), r"W must be numeric"),
        (np.zeros((3, 2)), {"a": 1}, np.zeros(2), r"vbias must be numeric, got dict"),
        (np.zeros((3, 2)), None, np.zeros(2), r"vbias must be numeric, got NoneType"),
    ],
)
def test_validation_errors(W, vbias, hbias, match):
    with pytest.raises(ValueError, match=match):
        RBMParams(W, vbias, hbias)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("where", ["W", "vbias", "hbias"])
def test_non_finite_rejected(bad, where):
    arrays = dict(zip(("W", "vbias", "hbias"), _arrays(3, 2)))
    arrays[where] = arrays[where].copy()
    arrays[where].flat[1] = bad
    with pytest.raises(ValueError, match=rf"{where} contains 1 non-finite value\(s\) \(NaN or inf\)"):
        RBMParams(**arrays)


def test_spin_validation_uses_spin_names():
    with pytest.raises(ValueError, match=r"vfield has shape \(4,\), but J of shape \(3, 2\) needs \(3,\)"):
        SpinRBMParams(np.zeros((3, 2)), np.zeros(4), np.zeros(2))
    with pytest.raises(ValueError, match=r"J contains 1 non-finite"):
        SpinRBMParams([[np.nan]], [0.0], [0.0])
    with pytest.raises(ValueError, match=r"hfield must have 1 dimension"):
        SpinRBMParams(np.zeros((3, 2)), np.zeros(3), np.zeros((2, 2)))
    with pytest.raises(ValueError, match=r"at least one visible and one hidden unit"):
        SpinRBMParams(np.zeros((2, 0)), np.zeros(2), np.zeros(0))


# ------------------------------------------------- no mutation, no aliasing
def test_inputs_not_aliased_and_params_read_only():
    W, b, c = _arrays(4, 3)
    W0, b0, c0 = W.copy(), b.copy(), c.copy()
    p = RBMParams(W, b, c)
    for mine, theirs in ((p.W, W), (p.vbias, b), (p.hbias, c)):
        assert not np.shares_memory(mine, theirs)
        assert not mine.flags.writeable
    # the caller changes its arrays: the params do not change
    W[:] = 7.0
    b[:] = 7.0
    c[:] = 7.0
    np.testing.assert_array_equal(p.W, W0)
    np.testing.assert_array_equal(p.vbias, b0)
    np.testing.assert_array_equal(p.hbias, c0)
    # the params cannot be changed in place nor rebound
    with pytest.raises(ValueError, match="read-only"):
        p.W[0, 0] = 1.0
    with pytest.raises(ValueError, match="read-only"):
        p.vbias += 1.0
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.W = np.zeros((4, 3))


def test_viewing_follows_arrays_moved_in_place_and_is_read_only():
    W, vbias, hbias = np.zeros((3, 2)), np.zeros(3), np.zeros(2)
    p = RBMParams.viewing(W, vbias, hbias)
    W += 1.0
    hbias[1] = 2.0
    assert p == RBMParams(np.ones((3, 2)), np.zeros(3), [0.0, 2.0])
    with pytest.raises(ValueError, match="read-only"):
        p.W[0, 0] = 5.0
    assert W.flags.writeable  # the caller's arrays stay writeable


@pytest.mark.parametrize(
    "arrays, error",
    [
        ((np.zeros((3, 2)), np.zeros(3, dtype=np.float32), np.zeros(2)), TypeError),
        (([[0.0, 0.0]], np.zeros(1), np.zeros(2)), TypeError),
        ((np.zeros((3, 2), dtype=np.int64), np.zeros(3, dtype=np.int64), np.zeros(2, dtype=np.int64)), ValueError),
        ((np.zeros((3, 2)), np.zeros(2), np.zeros(2)), ValueError),
    ],
)
def test_viewing_refuses_what_the_constructor_would_convert(arrays, error):
    with pytest.raises(error):
        RBMParams.viewing(*arrays)


def test_construction_does_not_mutate_inputs():
    W, b, c = _arrays(4, 3)
    W_int = np.arange(12).reshape(4, 3)
    copies = [a.copy() for a in (W, b, c, W_int)]
    RBMParams(W, b, c)
    RBMParams(W_int, b, c, dtype=np.float32)
    for a, a0 in zip((W, b, c, W_int), copies):
        np.testing.assert_array_equal(a, a0)
        assert a.flags.writeable  # the caller's arrays stay writable
        assert a.dtype == a0.dtype


def test_read_only_input_is_fine_and_still_copied():
    W, b, c = _arrays()
    W.setflags(write=False)
    p = RBMParams(W, b, c)
    assert not np.shares_memory(p.W, W)


def test_derived_params_do_not_alias():
    p = RBMParams(*_arrays(4, 3))
    for q in (p.transpose(), p.astype(np.float64), p.to_spin().to_binary()):
        for a in (q.W, q.vbias, q.hbias):
            assert not a.flags.writeable
            assert not any(np.shares_memory(a, b) for b in (p.W, p.vbias, p.hbias))
    s = p.to_spin()
    for a in (s.J, s.vfield, s.hfield):
        assert not a.flags.writeable


# ---------------------------------------------------------------- transpose
def test_transpose():
    p = RBMParams(*_arrays(4, 3))
    t = p.transpose()
    assert (t.n_visible, t.n_hidden) == (3, 4)
    np.testing.assert_array_equal(t.W, p.W.T)
    np.testing.assert_array_equal(t.vbias, p.hbias)
    np.testing.assert_array_equal(t.hbias, p.vbias)
    assert t.transpose() == p
    assert _brute.log_z(t.W, t.vbias, t.hbias) == pytest.approx(_brute.log_z(p.W, p.vbias, p.hbias), abs=1e-12)


# --------------------------------------------------------------- save/load
def test_save_load_round_trip(tmp_path):
    p = RBMParams(*_arrays(5, 3))
    path = tmp_path / "model.npz"
    p.save(path)
    with np.load(path, allow_pickle=False) as f:
        assert sorted(f.files) == ["W", "hbias", "kind", "vbias"]
        np.testing.assert_array_equal(f["W"], p.W)
        assert str(f["kind"]) == "RBMParams"
    q = RBMParams.load(path)
    assert q == p
    assert q.W.dtype == np.float64 and not q.W.flags.writeable
    # string paths and dtype selection work too
    q32 = RBMParams.load(str(path), dtype=np.float32)
    assert q32.dtype == np.float32


def test_save_appends_npz_suffix(tmp_path):
    p = RBMParams(*_arrays())
    p.save(tmp_path / "model")
    assert (tmp_path / "model.npz").exists()
    assert RBMParams.load(tmp_path / "model.npz") == p


def test_load_missing_keys_fails_clearly(tmp_path):
    path = tmp_path / "partial.npz"
    np.savez(path, W=np.zeros((3, 2)), vbias=np.zeros(3))
    with pytest.raises(ValueError, match=r"lacks the key\(s\) \['hbias'\]; it holds \['W', 'vbias'\]"):
        RBMParams.load(path)


def test_load_inconsistent_file_fails_validation(tmp_path):
    path = tmp_path / "bad.npz"
    np.savez(path, W=np.zeros((3, 2)), vbias=np.zeros(4), hbias=np.zeros(2))
    with pytest.raises(ValueError, match=r"vbias has shape \(4,\)"):
        RBMParams.load(path)


def test_load_refuses_pickles(tmp_path):
    path = tmp_path / "pickled.npz"
    np.savez(path, W=np.array([{"a": 1}], dtype=object), vbias=np.zeros(1), hbias=np.zeros(1))
    with pytest.raises(ValueError):
        RBMParams.load(path)


def _three_kinds():
    from pymc_rbm.categorical import CategoricalRBMParams
    from pymc_rbm.gaussian import GaussianRBMParams

    return [RBMParams.random(3, 2, rng=0), GaussianRBMParams.random(3, 2, rng=0),
            CategoricalRBMParams.random(3, 4, 2, rng=0)]


@pytest.mark.parametrize("saved", range(3), ids=["binary", "gaussian", "categorical"])
@pytest.mark.parametrize("loader", range(3), ids=["binary", "gaussian", "categorical"])
def test_a_file_is_read_by_its_own_class_only(tmp_path, saved, loader):
    kinds = _three_kinds()
    params, cls = kinds[saved], type(kinds[loader])
    params.save(tmp_path / "model")
    if saved == loader:
        assert cls.load(tmp_path / "model") == params
        return
    name = type(params).__name__
    with pytest.raises(ValueError, match=rf"holds {name} parameters \(written by {name}\.save\), which "
                                         rf"{cls.__name__}\.load does not read: read it with .*\.{name}\.load"):
        cls.load(tmp_path / "model")


def test_files_of_earlier_versions_without_their_kind_still_load(tmp_path):
    binary, gaussian, _ = _three_kinds()
    np.savez(tmp_path / "old_binary.npz", W=binary.W, vbias=binary.vbias, hbias=binary.hbias)
    np.savez(tmp_path / "old_gaussian.npz", W=gaussian.W, vbias=gaussian.vbias, hbias=gaussian.hbias,
             sigma=gaussian.sigma)
    assert RBMParams.load(tmp_path / "old_binary.npz") == binary
    assert type(gaussian).load(tmp_path / "old_gaussian.npz") == gaussian
    with pytest.warns(UserWarning, match=r"holds the array\(s\) \['sigma'\] of a GaussianRBMParams, which "
                                         r"RBMParams\.load drops: .* read it with .*GaussianRBMParams\.load"):
        RBMParams.load(tmp_path / "old_gaussian.npz")


def test_paths_as_bytes_and_without_the_suffix_are_read(tmp_path):
    import os

    p = RBMParams(*_arrays())
    p.save(os.fsencode(tmp_path / "model"))  # numpy appends .npz
    assert (tmp_path / "model.npz").exists()
    for path in (os.fsencode(tmp_path / "model"), os.fsencode(tmp_path / "model.npz"), tmp_path / "model",
                 str(tmp_path / "model.npz")):
        assert RBMParams.load(path) == p


def test_a_compressed_file_announcing_a_huge_array_is_refused_before_it_is_read(tmp_path, monkeypatch):
    import pymc_rbm.params as params_module

    p = RBMParams(np.zeros((100, 50)), np.zeros(100), np.zeros(50))
    path = tmp_path / "zeros.npz"
    np.savez_compressed(path, W=p.W, vbias=p.vbias, hbias=p.hbias)  # 40 kB of W in a few hundred bytes
    assert path.stat().st_size < 2000
    with pytest.raises(ValueError, match=r"the compressed array 'W' announces 40128 bytes .* more than the 10000 "
                                         r"bytes read by default: if the file is trusted, pass max_bytes=40128"):
        RBMParams.load(path, max_bytes=10_000)
    monkeypatch.setattr(params_module, "MAX_COMPRESSED_BYTES", 10_000)  # the default limit (1 GiB) scaled down
    with pytest.raises(ValueError, match="the compressed array 'W' announces 40128 bytes"):
        RBMParams.load(path)
    assert RBMParams.load(path, max_bytes=40128) == p
    assert params_module.MAX_COMPRESSED_BYTES == 10_000 and RBMParams.load(tmp_path / "zeros.npz", max_bytes=10**9) == p


@pytest.mark.parametrize("sigma", [1e-320, 1e-160, 1e160, 1e300])
def test_gaussian_sigma_whose_square_or_reciprocal_overflows_is_refused(sigma):
    from pymc_rbm.gaussian import GaussianRBMParams

    given = np.array([1.0, sigma, 1.0])
    with pytest.raises(ValueError, match=r"sigma must have a finite, non-zero square and reciprocal square in "
                                         rf"float64 .* sigma\[1\] = {re.escape(f'{sigma:.3g}')} is out of that range"):
        GaussianRBMParams(np.zeros((3, 2)), np.zeros(3), np.zeros(2), given)
    np.testing.assert_array_equal(given, [1.0, sigma, 1.0])
    with pytest.raises(ValueError, match=r"in float32"):
        GaussianRBMParams(np.zeros((3, 2)), np.zeros(3), np.zeros(2), [1.0, 1e-20, 1.0], dtype=np.float32)
    assert GaussianRBMParams(np.zeros((3, 2)), np.zeros(3), np.zeros(2), [1e-150, 1e150, 1.0]).sigma[0] == 1e-150


# ------------------------------------------------------------- from_sklearn
class _FakeBernoulliRBM:
    def __init__(self, nv, nh, seed=0):
        rng = np.random.default_rng(seed)
        self.components_ = rng.normal(size=(nh, nv))
        self.intercept_visible_ = rng.normal(size=nv)
        self.intercept_hidden_ = rng.normal(size=nh)


def test_from_sklearn_fake_object():
    m = _FakeBernoulliRBM(nv=5, nh=3)
    p = RBMParams.from_sklearn(m)
    assert (p.n_visible, p.n_hidden) == (5, 3)
    np.testing.assert_array_equal(p.W, m.components_.T)
    np.testing.assert_array_equal(p.vbias, m.intercept_visible_)
    np.testing.assert_array_equal(p.hbias, m.intercept_hidden_)
    assert not np.shares_memory(p.W, m.components_)
    m.components_[:] = 0.0
    assert np.any(p.W != 0.0)


def test_from_sklearn_unfitted_object_fails_clearly():
    class Unfitted:
        pass

    with pytest.raises(
        ValueError, match=r"Unfitted has no attribute\(s\) components_, intercept_visible_, intercept_hidden_.*fitted"
    ):
        RBMParams.from_sklearn(Unfitted())

    partial = _FakeBernoulliRBM(3, 2)
    del partial.intercept_hidden_
    with pytest.raises(ValueError, match=r"no attribute\(s\) intercept_hidden_"):
        RBMParams.from_sklearn(partial)


def test_from_sklearn_inconsistent_shapes():
    m = _FakeBernoulliRBM(nv=5, nh=3)
    m.intercept_visible_ = np.zeros(3)  # swapped by mistake
    with pytest.raises(ValueError, match=r"vbias has shape \(3,\), but W of shape \(5, 3\) needs \(5,\)"):
        RBMParams.from_sklearn(m)


def test_from_real_sklearn_if_installed():
    sk = pytest.importorskip("sklearn.neural_network")
    X = (np.random.default_rng(0).random((50, 6)) < 0.5).astype(float)
    m = sk.BernoulliRBM(n_components=3, n_iter=2, random_state=0).fit(X)
    p = RBMParams.from_sklearn(m)
    assert (p.n_visible, p.n_hidden) == (6, 3)
    np.testing.assert_array_equal(p.W, m.components_.T)


# ------------------------------------------------------------------- random
def test_random_shapes_bounds_and_reproducibility():
    p = RBMParams.random(7, 4, scale=0.5, rng=1)
    assert (p.n_visible, p.n_hidden) == (7, 4)
    assert np.all(np.abs(p.W) <= 0.5) and np.all(np.abs(p.vbias) <= 0.5)
    assert RBMParams.random(7, 4, scale=0.5, rng=1) == p
    assert RBMParams.random(7, 4, scale=0.5, rng=2) != p
    q = RBMParams.random(7, 4, scale=1.0, bias_scale=0.0, rng=1)
    assert np.all(q.vbias == 0) and np.all(q.hbias == 0) and np.any(q.W != 0)
    n = RBMParams.random(200, 50, scale=2.0, distribution="normal", rng=3)
    assert 1.8 < n.W.std() < 2.2


def test_random_bad_distribution():
    with pytest.raises(ValueError, match=r"distribution must be 'uniform' or 'normal', got 'cauchy'"):
        RBMParams.random(3, 2, distribution="cauchy")


# --------------------------------------------------------------- spin form
def test_to_spin_formulas():
    p = RBMParams(*_arrays(4, 3))
    s = p.to_spin()
    assert isinstance(s, SpinRBMParams)
    np.testing.assert_allclose(s.J, p.W / 4, rtol=0, atol=0)
    np.testing.assert_allclose(s.vfield, p.vbias / 2 + p.W.sum(1) / 4, rtol=1e-15, atol=1e-15)
    np.testing.assert_allclose(s.hfield, p.hbias / 2 + p.W.sum(0) / 4, rtol=1e-15, atol=1e-15)
    assert s.log_offset == pytest.approx(p.W.sum() / 4 + p.vbias.sum() / 2 + p.hbias.sum() / 2, abs=1e-13)
    assert "log_offset" in repr(s)


def test_spin_round_trip_exact_on_dyadic_values():
    # multiples of 1/8 of moderate size: every operation of the map is exact in float64
    rng = np.random.default_rng(4)
    p = RBMParams(rng.integers(-400, 400, (6, 5)) / 8, rng.integers(-400, 400, 6) / 8, rng.integers(-400, 400, 5) / 8)
    assert p.to_spin().to_binary() == p
    s = p.to_spin()
    assert s.to_binary().to_spin().J.tobytes() == s.J.tobytes()
    np.testing.assert_array_equal(s.to_binary().to_spin().vfield, s.vfield)
    np.testing.assert_array_equal(s.to_binary().to_spin().hfield, s.hfield)


@pytest.mark.parametrize("scale", [0.1, 1.0, 50.0])
def test_spin_round_trip_to_rounding(scale):
    # general floats: the map is exact in real arithmetic; in float64 only a few ulps are lost
    p = RBMParams.random(7, 5, scale=scale, rng=5)
    q = p.to_spin().to_binary()
    np.testing.assert_array_equal(q.W, p.W)  # scaling by 4 is exact
    tol = 8 * np.finfo(float).eps * (np.abs(p.W).sum() + np.abs(p.vbias).max() + np.abs(p.hbias).max())
    np.testing.assert_allclose(q.vbias, p.vbias, rtol=0, atol=tol)
    np.testing.assert_allclose(q.hbias, p.hbias, rtol=0, atol=tol)
    s = SpinRBMParams(*_arrays(7, 5, seed=6))
    t = s.to_binary().to_spin()
    np.testing.assert_array_equal(t.J, s.J)
    np.testing.assert_allclose(t.vfield, s.vfield, rtol=0, atol=1e-14)
    np.testing.assert_allclose(t.hfield, s.hfield, rtol=0, atol=1e-14)


def test_spin_float32():
    p = RBMParams(*_arrays(), dtype=np.float32)
    s = p.to_spin()
    assert s.J.dtype == np.float32
    assert s.to_binary().dtype == np.float32


def test_spin_energy_identity_pointwise():
    """E_binary(v, h) == E_spin(2v-1, 2h-1) - log_offset for every joint state."""
    p = RBMParams.random(4, 3, scale=3.0, rng=7)
    s = p.to_spin()
    for v in _brute.all_states(4):
        for h in _brute.all_states(3):
            e_bin = _brute.energy(v, h, p.W, p.vbias, p.hbias)
            e_spin = _brute.energy(2 * v - 1, 2 * h - 1, s.J, s.vfield, s.hfield)
            assert e_bin == pytest.approx(e_spin - s.log_offset, abs=1e-12)


@pytest.mark.parametrize(
    "nv, nh, scale, seed",
    [(1, 1, 1.0, 0), (3, 2, 1.0, 1), (2, 5, 0.1, 2), (5, 4, 5.0, 3), (6, 6, 20.0, 4), (4, 7, 50.0, 5), (8, 3, 50.0, 6)],
)
@pytest.mark.parametrize("distribution", ["uniform", "normal"])
def test_spin_and_binary_log_z_agree(nv, nh, scale, seed, distribution):
    """The spin and binary forms of a model give the same log Z to 1e-10."""
    p = RBMParams.random(nv, nh, scale=scale, distribution=distribution, rng=seed)
    s = p.to_spin()
    lz_bin = _brute.log_z(p.W, p.vbias, p.hbias)
    lz_spin = _brute.log_z_spin(s.J, s.vfield, s.hfield)
    assert lz_bin == pytest.approx(lz_spin + s.log_offset, rel=0, abs=1e-10)
    # and the spin model mapped back gives the same log Z through the package
    assert log_partition_exact(s.to_binary()).log_z == pytest.approx(lz_bin, rel=0, abs=1e-10)


def test_spin_log_z_agree_from_spin_side():
    s = SpinRBMParams(*_arrays(5, 4, seed=9))
    b = s.to_binary()
    assert _brute.log_z(b.W, b.vbias, b.hbias) == pytest.approx(
        _brute.log_z_spin(s.J, s.vfield, s.hfield) + s.log_offset, rel=0, abs=1e-10
    )


def test_fingerprint_is_the_models_values_whatever_their_dtype():
    p = RBMParams([[0.5, -1.0], [2.0, 0.25]], [1.0, 0.0], [0.0, -0.5])
    assert p.fingerprint() == RBMParams(p.W.copy(), p.vbias, p.hbias).fingerprint()
    assert p.fingerprint() == p.astype(np.float32).fingerprint()  # the values are exact in float32
    assert len(p.fingerprint()) == 32
    assert p.fingerprint() != RBMParams(p.W, p.vbias, p.hbias + 1e-12).fingerprint()
    assert p.fingerprint() != p.transpose().fingerprint()
