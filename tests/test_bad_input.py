"""Bad and extreme input across the public API: a clear error, a warning with a correct result, or a correct result.

Every case runs on fresh inputs and checks afterwards that none of them was modified. The cases of
issue 15 (found by a probe of 212 bad or extreme inputs) are all here, marked "issue 15" in their id, and
so are those of issue 29 (a probe of 307 inputs), marked "issue 29".
Sections follow the package: params, I/O, datasets, distribution, step methods, estimators, training.
"""

from __future__ import annotations

import copy
import re
import warnings
from typing import Any, Callable, NamedTuple

import numpy as np
import pymc as pm
import pytest

from pymc_rbm import RBM, BlockGibbs, FlipTheState, RBMParams, SpinRBMParams
from pymc_rbm import datasets as ds
from pymc_rbm import estimators as est
from pymc_rbm import enumeration as ex
from pymc_rbm.estimators.tap import UnphysicalFixedPoint
from pymc_rbm.training import PCD, PT, SGD, Evaluation, Init, fit, log_likelihood_gradient


# ------------------------------------------------------------------ harness
class Raises(NamedTuple):
    error: type
    match: str


class Warns(NamedTuple):
    warning: type
    match: str
    check: Callable[[Any, dict], bool]


class Ok(NamedTuple):
    check: Callable[[Any, dict], bool]


class TorchLike:
    """An array of another library: only ``__array__`` (what ``np.asarray`` needs)."""

    def __init__(self, a):
        self._a = np.array(a, dtype=np.float64)

    def __array__(self, dtype=None, copy=None):
        return self._a if dtype is None else self._a.astype(dtype)


def _inputs(tmp_path) -> dict:
    """Fresh inputs for one case; checked for modification afterwards."""
    rng = np.random.default_rng(0)
    W = rng.normal(0.0, 1.0, (6, 4))
    W_nan = W.copy()
    W_nan[2, 1] = np.nan
    data = (rng.random((5, 6)) < 0.5).astype(np.int64)
    good = tmp_path / "good.npz"
    RBMParams(W, np.zeros(6), np.zeros(4)).save(good)
    np.savez(tmp_path / "nokey.npz", W=W, vbias=np.zeros(6))
    np.savez(tmp_path / "nan.npz", W=W_nan, vbias=np.zeros(6), hbias=np.zeros(4))
    np.savez(tmp_path / "pickled.npz", W=np.array([None, 1.0], dtype=object), vbias=np.zeros(2), hbias=np.zeros(2))
    (tmp_path / "text.npz").write_text("not an archive")
    (tmp_path / "truncated.npz").write_bytes(good.read_bytes()[:200])
    (tmp_path / "empty.npz").write_bytes(b"")
    _forged_npz(tmp_path / "huge.npz")
    np.save(tmp_path / "one.npy", W)
    return {
        "W": W,
        "W_nan": W_nan,
        "b": np.zeros(6),
        "c": np.zeros(4),
        "p": RBMParams(W, np.zeros(6), np.zeros(4)),
        "p50": RBMParams.random(8, 5, scale=50.0, rng=0),  # issue 15: TAP's +922 nats model
        "p1000": RBMParams.random(8, 5, scale=1e3, rng=0),  # issue 15: RTS and SAMS at |w| = 1e3 (target base)
        "big": RBMParams(np.zeros((784, 40)), np.zeros(784), np.zeros(40)),
        "data": data,
        "half": np.full((3, 6), 0.5),
        "bas": ds.bars_and_stripes(3),
        "tmp": tmp_path,
        "good": good,
    }


def _forged_npz(path) -> None:
    """An archive whose W header announces a (10**6, 10**6) float64 array over a few bytes of data."""
    import io
    import zipfile

    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": "<f8", "fortran_order": False, "shape": (10**6, 10**6)})
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("W.npy", header.getvalue() + bytes(16))
        for key, size in (("vbias", 6), ("hbias", 4)):
            member = io.BytesIO()
            np.save(member, np.zeros(size))
            z.writestr(f"{key}.npy", member.getvalue())


def _snapshot(inp: dict) -> dict:
    return {k: copy.deepcopy(v) for k, v in inp.items() if isinstance(v, (np.ndarray, list))}


def _unchanged(inp: dict, snap: dict) -> None:
    for key, before in snap.items():
        after = inp[key]
        assert type(after) is type(before), key
        np.testing.assert_array_equal(np.asarray(after), np.asarray(before), err_msg=f"input {key!r} was modified")
        if isinstance(after, np.ndarray):
            assert after.dtype == before.dtype, key


def _rbm(*args, **kwargs):
    """An RBM variable in a fresh model (the model is returned too)."""
    with pm.Model() as model:
        v = RBM("v", *args, **kwargs)
    return v, model


def _step(cls, **kwargs):
    p = RBMParams.random(6, 4, rng=0)
    with pm.Model():
        v = RBM("v", p.W, p.vbias, p.hbias)
        return cls([v], **kwargs)


def _fit(data, **kwargs):
    kwargs = {"n_hidden": 4, "n_updates": 3, "progress": False, "rng": 0, **kwargs}
    return fit(data, kwargs.pop("n_hidden"), **kwargs)


def _logp(v, model, value):
    return float(model.compile_logp()({"v": value}))


# ------------------------------------------------------------------ cases
def _lit(a):
    return float(np.asarray(a))


CASES: list[tuple[str, Callable[[dict], Any], Any]] = [
    # --- params ---------------------------------------------------------------------------------------
    ("params: int64 dtype truncates (issue 15)", lambda i: RBMParams(i["W"], i["b"], i["c"], dtype=np.int64),
     Raises(ValueError, "dtype must be a real floating type.*int64")),
    ("params: int32 dtype", lambda i: RBMParams(i["W"], i["b"], i["c"], dtype=np.int32), Raises(ValueError, "dtype")),
    ("params: bool dtype", lambda i: RBMParams(i["W"], i["b"], i["c"], dtype=bool), Raises(ValueError, "dtype")),
    ("params: complex dtype", lambda i: RBMParams(i["W"], i["b"], i["c"], dtype=np.complex128),
     Raises(ValueError, "dtype.*complex128")),
    ("params: dtype that is no type", lambda i: RBMParams(i["W"], i["b"], i["c"], dtype="bogus"),
     Raises(ValueError, "dtype")),
    ("params: complex W (issue 15)", lambda i: RBMParams(i["W"] + 1j, i["b"], i["c"]),
     Raises(ValueError, "W must be real, got complex")),
    ("params: complex vbias", lambda i: RBMParams(i["W"], i["b"] * 1j, i["c"]), Raises(ValueError, "vbias must be real")),
    ("params: NaN in W", lambda i: RBMParams(i["W_nan"], i["b"], i["c"]), Raises(ValueError, "W contains 1 non-finite")),
    ("params: inf in hbias", lambda i: RBMParams(i["W"], i["b"], [0, np.inf, 0, 0]),
     Raises(ValueError, "hbias contains 1 non-finite")),
    ("params: W a vector", lambda i: RBMParams(i["b"], i["b"], i["c"]), Raises(ValueError, "W must have 2 dimension")),
    ("params: vbias a matrix", lambda i: RBMParams(i["W"], i["W"], i["c"]),
     Raises(ValueError, "vbias must have 1 dimension")),
    ("params: vbias too short", lambda i: RBMParams(i["W"], i["b"][:5], i["c"]), Raises(ValueError, "vbias has shape")),
    ("params: hbias too long", lambda i: RBMParams(i["W"], i["b"], np.zeros(5)), Raises(ValueError, "hbias has shape")),
    ("params: no hidden units", lambda i: RBMParams(np.zeros((3, 0)), np.zeros(3), np.zeros(0)),
     Raises(ValueError, "at least one visible and one hidden")),
    ("params: strings", lambda i: RBMParams([["a", "b"]], ["x", "y"], ["z", "w"]), Raises(ValueError, "W must be numeric")),
    ("params: objects", lambda i: RBMParams(np.array([[None]], dtype=object), [0.0], [0.0]),
     Raises(ValueError, "W must be numeric")),
    ("params: a torch-like W is taken (issue 15)", lambda i: RBMParams(TorchLike(i["W"]), i["b"], i["c"]),
     Ok(lambda r, i: np.array_equal(r.W, i["W"]))),
    ("params: integers and booleans are exact", lambda i: RBMParams([[1], [0]], [True, False], [2]),
     Ok(lambda r, i: r.W.dtype == np.float64 and r.vbias.tolist() == [1.0, 0.0] and r.hbias.tolist() == [2.0])),
    ("params: float32 allowed", lambda i: RBMParams(i["W"], i["b"], i["c"], dtype=np.float32),
     Ok(lambda r, i: r.dtype == np.float32)),
    ("params: float32 overflow is refused", lambda i: RBMParams(i["W"] * 1e300, i["b"], i["c"], dtype=np.float32),
     Raises(ValueError, "W contains .* non-finite")),
    ("params: unknown random law", lambda i: RBMParams.random(3, 2, distribution="cauchy"),
     Raises(ValueError, "distribution must be")),
    ("params: random with scale inf (issue 29)", lambda i: RBMParams.random(3, 2, scale=np.inf),
     Raises(ValueError, "scale must be a finite real number, got inf")),
    ("params: random with scale -1 (issue 29)", lambda i: RBMParams.random(3, 2, scale=-1),
     Raises(ValueError, r"scale must lie in \[0.0")),
    ("params: random with bias_scale NaN (issue 29)", lambda i: RBMParams.random(3, 2, bias_scale=np.nan),
     Raises(ValueError, "bias_scale must be a finite")),
    ("params: random with scale 0 is all zeros (issue 29)", lambda i: RBMParams.random(3, 2, scale=0.0, rng=0),
     Ok(lambda r, i: not r.W.any() and not r.vbias.any())),
    ("params: from_sklearn of something else", lambda i: RBMParams.from_sklearn(object()),
     Raises(ValueError, "components_")),
    ("params: spin NaN", lambda i: SpinRBMParams(i["W_nan"], i["b"], i["c"]), Raises(ValueError, "J contains")),
    ("params: spin int dtype", lambda i: SpinRBMParams(i["W"], i["b"], i["c"], dtype=np.int64),
     Raises(ValueError, "dtype")),
    ("params: astype int", lambda i: i["p"].astype(np.int16), Raises(ValueError, "dtype")),
    # --- I/O ------------------------------------------------------------------------------------------
    ("io: save and load", lambda i: RBMParams.load(i["good"]), Ok(lambda r, i: r == i["p"])),
    ("io: load a missing key", lambda i: RBMParams.load(i["tmp"] / "nokey.npz"), Raises(ValueError, r"lacks the key\(s\) \['hbias'\]")),
    ("io: load NaN weights", lambda i: RBMParams.load(i["tmp"] / "nan.npz"), Raises(ValueError, "W contains 1 non-finite")),
    ("io: load pickled arrays", lambda i: RBMParams.load(i["tmp"] / "pickled.npz"),
     Raises(ValueError, "pickled .* refused")),
    ("io: load a text file", lambda i: RBMParams.load(i["tmp"] / "text.npz"),
     Raises(ValueError, "not a parameter file written by RBMParams.save")),
    ("io: load a single .npy array", lambda i: RBMParams.load(i["tmp"] / "one.npy"),
     Raises(ValueError, "single array, not a parameter file written by RBMParams.save")),
    ("io: load a truncated file (issue 29)", lambda i: RBMParams.load(i["tmp"] / "truncated.npz"),
     Raises(ValueError, "truncated.npz is not a parameter file .* empty, truncated or of another format")),
    ("io: load an empty file (issue 29)", lambda i: RBMParams.load(i["tmp"] / "empty.npz"),
     Raises(ValueError, "empty.npz is not a parameter file .* empty, truncated")),
    ("io: load a header claiming a huge shape (issue 29)", lambda i: RBMParams.load(i["tmp"] / "huge.npz"),
     Raises(ValueError, r"header of 'W' announces shape \(1000000, 1000000\) .* holds only \d+ bytes")),
    ("io: load the name given to save (issue 29)", lambda i: RBMParams.load(i["tmp"] / "good"), Ok(lambda r, i: r == i["p"])),
    ("io: load a missing name (issue 29)", lambda i: RBMParams.load(i["tmp"] / "absent"),
     Raises(FileNotFoundError, "absent .*nor .*absent.npz")),
    ("io: load a missing file", lambda i: RBMParams.load(i["tmp"] / "absent.npz"), Raises(FileNotFoundError, "absent")),
    ("io: load into int", lambda i: RBMParams.load(i["good"], dtype=np.int64), Raises(ValueError, "dtype")),
    ("io: MNIST path missing", lambda i: ds.load_mnist(i["tmp"] / "mnist.npz"),
     Raises(FileNotFoundError, "no such file or directory")),
    ("io: MNIST file of other keys", lambda i: ds.load_mnist(i["good"]), Raises(ValueError, "not an MNIST file")),
    ("io: MNIST split", lambda i: ds.load_mnist(i["good"], split="dev"), Raises(ValueError, "split must be one of")),
    ("io: MNIST binarize", lambda i: ds.load_mnist(i["good"], binarize="otsu"), Raises(ValueError, "binarize must be")),
    ("io: MNIST threshold", lambda i: ds.load_mnist(i["good"], binarize="threshold", threshold=2),
     Raises(ValueError, r"threshold must lie in \[0.0, 1.0\]")),
    ("io: idx file that is none", lambda i: ds.read_idx(i["tmp"] / "text.npz"), Raises(ValueError, "not an idx file")),
    # --- datasets -------------------------------------------------------------------------------------
    ("datasets: bars of size 0", lambda i: ds.bars_and_stripes(0), Raises(ValueError, "n must be an integer of at least 2")),
    ("datasets: bars of size 2.5", lambda i: ds.bars_and_stripes(2.5), Raises(ValueError, "n must be an integer")),
    ("datasets: bars of size True", lambda i: ds.bars_and_stripes(True), Raises(ValueError, "n must be an integer")),
    ("datasets: bars variant", lambda i: ds.bars_and_stripes(3, variant="x"), Raises(ValueError, "variant must be")),
    ("datasets: negative sample count", lambda i: ds.artificial_modes(-1), Raises(ValueError, "n_samples")),
    ("datasets: flip probability 1.5", lambda i: ds.artificial_modes(10, p_flip=1.5), Raises(ValueError, r"p_flip must lie in \[0.0, 1.0\]")),
    ("datasets: mode weights of wrong shape", lambda i: ds.artificial_modes(10, weights=[1.0, 1.0]),
     Raises(ValueError, "weights must have shape")),
    ("datasets: negative mode weights", lambda i: ds.artificial_modes(10, weights=[1.0, -1.0, 1.0, 1.0]),
     Raises(ValueError, "weights must be finite, >= 0")),
    ("datasets: ridges in one dimension", lambda i: ds.two_ridges(10, n_dim=1), Raises(ValueError, "n_dim")),
    ("datasets: ridge profile", lambda i: ds.two_ridges(10, 2, profile="round"), Raises(ValueError, "profile")),
    ("datasets: classify non-binary", lambda i: ds.classify_modes(np.full((2, 16), 0.5)), Raises(ValueError, "binary")),
    ("datasets: unknown bundled model", lambda i: ds.bundled_rbm("nope"), Raises(ValueError, "unknown bundled RBM")),
    ("datasets: zero samples is fine", lambda i: ds.artificial_modes(0, rng=0), Ok(lambda r, i: r.shape == (0, 16))),
    # --- distribution ---------------------------------------------------------------------------------
    ("distribution: NaN in constant W (issue 15)", lambda i: _rbm(i["W_nan"], i["b"], i["c"]),
     Raises(ValueError, "W contains 1 non-finite")),
    ("distribution: inf vbias", lambda i: _rbm(i["W"], [np.inf] + [0] * 5, i["c"]), Raises(ValueError, "vbias contains")),
    ("distribution: complex W", lambda i: _rbm(i["W"] * 1j, i["b"], i["c"]), Raises(ValueError, "W must be real")),
    ("distribution: string hbias", lambda i: _rbm(i["W"], i["b"], ["a"] * 4), Raises(ValueError, "hbias must be numeric")),
    ("distribution: NaN in a pytensor constant", lambda i: _rbm(pm.math.constant(i["W_nan"]), i["b"], i["c"]),
     Raises(ValueError, "W contains 1 non-finite")),
    ("distribution: torch-like W (issue 15)",
     lambda i: _logp(*_rbm(TorchLike(i["W"]), TorchLike(i["b"]), i["c"]), np.ones(6, dtype=np.int64)),
     Ok(lambda r, i: r == pytest.approx(float(est.log_likelihood(i["p"], np.ones(6))), abs=1e-9))),
    ("distribution: exact with max_bits=40 on 784x40 (issue 15)",
     lambda i: _rbm(np.zeros((784, 40)), np.zeros(784), np.zeros(40), log_partition="exact", max_bits=40),
     Raises(est.EnumerationTooLarge, "needs about .* GiB of memory")),
    ("distribution: exact beyond the model's limit", lambda i: _rbm(np.zeros((30, 25)), np.zeros(30), np.zeros(25),
                                                                    log_partition="exact"),
     Raises(est.EnumerationTooLarge, r"2\*\*25 .* limit of 2\*\*20")),
    ("distribution: exact log Z of 1024 hidden units (issue 29)", lambda i: _rbm(_huge().W, np.zeros(1100), np.zeros(1024),
                                                                     log_partition="exact"),
     Raises(est.EnumerationTooLarge, r"2\*\*1024 = 1.8e\+308 states")),
    ("distribution: pm.Data W resized against a fixed hbias (logp) (issue 29)", lambda i: _resized_data_w("logp"),
     Raises(AssertionError, "W must have vbias.size rows and hbias.size columns")),
    ("distribution: pm.Data W resized against a fixed hbias (draws) (issue 29)", lambda i: _resized_data_w("draw"),
     Raises(ValueError, r"hbias has shape \(4,\), but W of shape \(6, 5\) needs \(5,\)")),
    ("distribution: log_partition name", lambda i: _rbm(i["W"], i["b"], i["c"], log_partition="ais"),
     Raises(ValueError, "log_partition must be 'auto', 'exact'")),
    ("distribution: NaN log_partition", lambda i: _rbm(i["W"], i["b"], i["c"], log_partition=np.nan),
     Raises(ValueError, "log_partition must be finite")),
    ("distribution: vector log_partition", lambda i: _rbm(i["W"], i["b"], i["c"], log_partition=[1.0, 2.0]),
     Raises(ValueError, "log_partition must be a scalar")),
    ("distribution: string log_partition", lambda i: _rbm(i["W"], i["b"], i["c"], log_partition=b"x"),
     Raises(ValueError, "log_partition must be")),
    ("distribution: unknown log Z of random weights", lambda i: _random_weights_rbm(log_partition="auto"),
     Raises(ValueError, "too many to enumerate .* depend on the random variable")),
    ("distribution: omitted log Z of random weights", lambda i: _random_weights_rbm(log_partition=None),
     Raises(ValueError, "log_partition=None leaves log Z out")),
    ("distribution: non-binary observed", lambda i: _rbm(i["W"], i["b"], i["c"], observed=i["half"]),
     Raises(ValueError, "observed data of the RBM must be binary")),
    ("distribution: observed of wrong width", lambda i: _rbm(i["W"], i["b"], i["c"], observed=np.zeros((2, 5))),
     Raises(ValueError, "n_visible = 6")),
    ("distribution: vbias of wrong length", lambda i: _rbm(i["W"], np.zeros(5), i["c"]), Raises(ValueError, "vbias has 5")),
    ("distribution: batched W", lambda i: _rbm(np.zeros((2, 6, 4)), i["b"], i["c"]),
     Raises(ValueError, "batched parameters are not supported")),
    ("distribution: shape not ending in n_visible", lambda i: _rbm(i["W"], i["b"], i["c"], shape=(3, 5)),
     Raises(ValueError, r"must end with n_visible = 6")),
    ("distribution: max_bits 0", lambda i: _rbm(i["W"], i["b"], i["c"], max_bits=0), Raises(ValueError, "max_bits")),
    ("distribution: max_bits True", lambda i: _rbm(i["W"], i["b"], i["c"], max_bits=True), Raises(ValueError, "max_bits")),
    ("distribution: gibbs_sweeps 0", lambda i: _rbm(i["W"], i["b"], i["c"], gibbs_sweeps=0),
     Raises(ValueError, "gibbs_sweeps")),
    ("distribution: K draws", lambda i: _rbm(i["W"], i["b"], i["c"], shape=(3, 6))[0],
     Ok(lambda r, i: pm.draw(r, random_seed=0).shape == (3, 6))),
    ("distribution: shape rows disagree with observed rows (issue 29)", lambda i: _rbm(i["W"], i["b"], i["c"], shape=(3, 6),
                                                                            observed=i["data"]),
     Raises(ValueError, r"shape=\(3, 6\) disagrees with the observed data of shape \(5, 6\)")),
    ("distribution: size disagrees with observed rows (issue 29)", lambda i: _rbm(i["W"], i["b"], i["c"], size=3, observed=i["data"]),
     Raises(ValueError, r"size=\(3,\) disagrees .* would need size=\(5,\)")),
    ("distribution: shape agreeing with observed (issue 29)", lambda i: _rbm(i["W"], i["b"], i["c"], shape=(5, 6), observed=i["data"]),
     Ok(lambda r, i: r[1].compile_logp()({}) == pytest.approx(est.log_likelihood(i["p"], i["data"]).sum()))),
    ("distribution: masked observed cells are imputed (issue 29)", lambda i: _rbm(i["W"], i["b"], i["c"], observed=_holes(i["data"])),
     Ok(lambda r, i: _imputed_logp_is_exact(r[1], i))),
    ("distribution: NaN cells of a plain array are imputed (issue 29)", lambda i: _rbm(i["W"], i["b"], i["c"],
                                                                           observed=_holes(i["data"]).filled(np.nan)),
     Ok(lambda r, i: _imputed_logp_is_exact(r[1], i))),
    ("distribution: values under the mask are not read (issue 29)", lambda i: _rbm(i["W"], i["b"], i["c"],
                                                                       observed=_holes(i["data"], under=0.5)),
     Ok(lambda r, i: _imputed_logp_is_exact(r[1], i))),
    ("distribution: an unmasked non-binary cell is still refused (issue 29)",
     lambda i: _rbm(i["W"], i["b"], i["c"], observed=np.ma.masked_invalid(np.where(i["data"] == 1, 1.0, 0.5))),
     Raises(ValueError, "observed data of the RBM must be binary")),
    ("distribution: whole missing rows are an RBM variable (issue 29)", lambda i: _rbm(i["W"], i["b"], i["c"],
                                                                           observed=_holes(i["data"], rows=True)),
     Ok(lambda r, i: _imputed_logp_is_exact(r[1], i, rows=True))),
    ("distribution: auto log Z left out of a large constant RBM (issue 29)", lambda i: _rbm(i["big"].W, i["big"].vbias, i["big"].hbias),
     Warns(UserWarning, "log Z is left out and the logp is unnormalised",
           lambda r, i: _logp(*r, np.zeros(784)) == pytest.approx(40 * np.log(2.0)))),
    ("distribution: log_partition=None says it is meant (issue 29)", lambda i: _quiet_rbm(i["big"], log_partition=None),
     Ok(lambda r, i: r is not None)),
    # --- step methods ---------------------------------------------------------------------------------
    ("steps: sweeps=True (issue 15)", lambda i: _step(FlipTheState, sweeps=True), Raises(ValueError, "sweeps must be")),
    ("steps: sweeps 0", lambda i: _step(FlipTheState, sweeps=0), Raises(ValueError, "sweeps must be")),
    ("steps: sweeps 2.5", lambda i: _step(BlockGibbs, sweeps=2.5), Raises(ValueError, "sweeps must be")),
    ("steps: sweeps as text", lambda i: _step(BlockGibbs, sweeps="3"), Raises(ValueError, "sweeps must be")),
    ("steps: a variable that is no RBM", lambda i: _normal_step(), Raises(ValueError, "can only sample RBM variables")),
    ("steps: sweeps 3", lambda i: _step(FlipTheState, sweeps=3), Ok(lambda r, i: r.sweeps == 3)),
    ("steps: initvals outside {0, 1} (issue 29)", lambda i: _sample_from([2, 0, 0, 0, 0, 0]),
     Raises(ValueError, "start value of 'v' .* must be binary .* e.g. 2")),
    ("steps: initvals outside {0, 1} for replica exchange (issue 29)", lambda i: _sample_from([0, 0, -1, 0, 0, 0], _replica_exchange()),
     Raises(ValueError, "start value of 'v' .* must be binary .* e.g. -1")),
    ("steps: binary initvals (issue 29)", lambda i: _sample_from([1, 0, 0, 0, 0, 1]),
     Ok(lambda r, i: set(np.unique(r.posterior["v"].values)) <= {0, 1})),
    ("steps: WormholeMetropolis as the only step (issue 29)", lambda i: _wormholes(alone=True),
     Warns(RuntimeWarning, "no other step moved \\['v'\\].* reducible", lambda r, i: r.posterior["v"].shape[1] == 110)),
    ("steps: WormholeMetropolis with a local step stays quiet (issue 29)", lambda i: _wormholes(alone=False),
     Ok(lambda r, i: len({tuple(x) for x in r.posterior["v"].values[0]}) > 16)),
    # --- estimators -----------------------------------------------------------------------------------
    ("estimators: log_z NaN (issue 15)", lambda i: est.log_likelihood(i["p"], i["data"], log_z=np.nan),
     Raises(ValueError, "log_z must be a finite real number")),
    ("estimators: log_z inf", lambda i: est.log_likelihood(i["p"], i["data"], log_z=np.inf), Raises(ValueError, "log_z")),
    ("estimators: log_z text", lambda i: est.log_likelihood(i["p"], i["data"], log_z="3.0"), Raises(ValueError, "log_z")),
    ("estimators: log_z a NaN estimate",
     lambda i: est.log_likelihood(i["p"], i["data"], log_z=est.LogPartitionEstimate(np.nan, "ais")),
     Raises(ValueError, "log_z .*'ais' estimate")),
    ("estimators: log_z complex", lambda i: est.log_likelihood(i["p"], i["data"], log_z=1 + 1j), Raises(ValueError, "log_z")),
    ("estimators: log-likelihood of non-binary data", lambda i: est.log_likelihood(i["p"], i["half"]),
     Raises(ValueError, "data must be binary")),
    ("estimators: log-likelihood of wrong width", lambda i: est.log_likelihood(i["p"], np.zeros((2, 5))),
     Raises(ValueError, "n_visible = 6")),
    ("estimators: log-likelihood of an array as params", lambda i: est.log_likelihood(i["W"], i["data"]),
     Raises(TypeError, "params must be an RBMParams")),
    ("estimators: log-likelihood with an estimate", lambda i: est.log_likelihood(i["p"], i["data"], log_z=est.log_partition(i["p"])),
     Ok(lambda r, i: np.allclose(np.exp(est.log_likelihood(i["p"], ex.binary_states(6))).sum(), 1.0) and r.shape == (5,))),
    ("estimators: log_z estimated for another model (issue 29)",
     lambda i: est.log_likelihood(i["p"], i["data"], log_z=est.log_partition(RBMParams.random(6, 4, rng=1))),
     Raises(ValueError, "'exact' estimate of log Z .* computed for another model")),
    ("estimators: log_z of an AIS run on another model (issue 29)",
     lambda i: est.log_likelihood(i["p"], i["data"],
                                  log_z=est.ais(RBMParams.random(6, 4, rng=1), n_chains=4, schedule=10, rng=0)),
     Raises(ValueError, "'ais' estimate of log Z .* computed for another model")),
    ("estimators: log_z estimated for an equal copy of the model (issue 29)",
     lambda i: est.log_likelihood(i["p"], i["data"], log_z=est.log_partition(RBMParams(i["W"].copy(), i["b"], i["c"]))),
     Ok(lambda r, i: np.allclose(r, est.log_likelihood(i["p"], i["data"])))),
    ("estimators: a plain number as log_z is taken for any model (issue 29)",
     lambda i: est.log_likelihood(i["p"], i["data"], log_z=float(est.log_partition(RBMParams.random(6, 4, rng=1)))),
     Ok(lambda r, i: r.shape == (5,))),
    ("distribution: log_partition estimated for another model (issue 29)",
     lambda i: _rbm(i["W"], i["b"], i["c"], log_partition=est.log_partition(RBMParams.random(6, 4, rng=1))),
     Raises(ValueError, "computed for another model")),
    ("estimators: ais with one chain (issue 15)", lambda i: est.ais(i["p"], n_chains=1, schedule=10),
     Raises(ValueError, "n_chains must be an integer of at least 2")),
    ("estimators: ais with 2.0 chains", lambda i: est.ais(i["p"], n_chains=2.0, schedule=10), Raises(ValueError, "n_chains")),
    ("estimators: ais schedule name", lambda i: est.ais(i["p"], schedule="fast"), Raises(ValueError, "schedule must be")),
    ("estimators: ais schedule not from 0", lambda i: est.ais(i["p"], schedule=[0.5, 1.0]), Raises(ValueError, "schedule")),
    ("estimators: ais integer dtype", lambda i: est.ais(i["p"], dtype=np.int64, schedule=10), Raises(ValueError, "dtype")),
    ("estimators: ais non-binary data", lambda i: est.ais(i["p"], data=i["half"], schedule=10),
     Raises(ValueError, "data must be binary")),
    ("estimators: ais float16 (issue 29)", lambda i: est.ais(i["p"], dtype=np.float16, schedule=10),
     Raises(ValueError, "dtype must be float64 or float32 .* got float16")),
    ("estimators: rts float16 (issue 29)", lambda i: est.rts(i["p"], path_options=est.PathOptions(dtype=np.float16)), Raises(ValueError, "float64 or float32")),
    ("estimators: ais operator", lambda i: est.ais(i["p"], operator="metropolis", schedule=10), Raises(ValueError, "operator")),
    ("estimators: reverse ais with one chain", lambda i: est.reverse_ais(i["p"], i["data"], n_chains=1, schedule=10),
     Raises(ValueError, "n_chains must be an integer of at least 2")),
    ("estimators: reverse ais from one row", lambda i: est.reverse_ais(i["p"], i["data"][:1], n_chains=None, schedule=10),
     Raises(ValueError, "at least 2 are needed")),
    ("estimators: JAX reverse ais from one row (issue 29)", lambda i: _jax().reverse_ais(i["p"], i["data"][:1], n_chains=None, schedule=10),
     Raises(ValueError, "at least 2 are needed")),
    ("estimators: JAX reverse ais from no row (issue 29)", lambda i: _jax().reverse_ais(i["p"], i["data"][:0], schedule=10),
     Raises(ValueError, "data has no rows")),
    ("estimators: rts with one chain", lambda i: est.rts(i["p"], n_chains=1), Raises(ValueError, "at least 2")),
    ("estimators: rts ladder", lambda i: est.rts(i["p"], betas=[0.5, 0.2]), Raises(ValueError, "betas must start")),
    ("estimators: sams with one run", lambda i: est.sams(i["p"], n_runs=1), Raises(ValueError, "at least 2")),
    ("estimators: sams gain", lambda i: est.sams(i["p"], adaptation=est.SAMSAdaptation(gain="wl")), Raises(ValueError, "gain must be")),
    ("estimators: unknown method", lambda i: est.log_partition(i["p"], "magic"), Raises(ValueError, "unknown log_partition method")),
    ("estimators: unknown moments method", lambda i: est.moments(i["p"], "magic"), Raises(ValueError, "unknown moments method")),
    ("estimators: 784x40 with max_bits=64 asks for TiB (issue 15)",
     lambda i: est.log_partition(i["big"], "exact", max_bits=64), Raises(est.EnumerationTooLarge, "GiB of memory, but only")),
    ("estimators: default limit", lambda i: est.log_partition(i["big"], "exact"), Raises(est.EnumerationTooLarge, r"2\*\*40")),
    ("estimators: enumeration too slow (issue 15)", lambda i: _too_slow(i),
     Raises(est.EnumerationTooLarge, "estimated to take .* MAX_ENUMERATION_SECONDS")),
    ("estimators: exact log Z of 1024 hidden units (issue 29)", lambda i: est.log_partition(_huge(), "exact"),
     Raises(est.EnumerationTooLarge, r"2\*\*1024 = 1.8e\+308 states, more than the limit")),
    ("estimators: log-likelihood of 1024 hidden units (issue 29)", lambda i: est.log_likelihood(_huge(), np.zeros((1, 1100))),
     Raises(est.EnumerationTooLarge, r"2\*\*1024")),
    ("estimators: exact moments of 1024 hidden units (issue 29)", lambda i: est.moments_exact(_huge()),
     Raises(est.EnumerationTooLarge, r"2\*\*1024")),
    ("estimators: exact draws of 1024 hidden units (issue 29)", lambda i: est.sample_visible_exact(_huge(), 2),
     Raises(est.EnumerationTooLarge, r"2\*\*1024")),
    ("estimators: 1500 hidden units with max_bits=5000 (issue 29)", lambda i: est.log_partition_exact(_huge(1500), max_bits=5000),
     Raises(est.EnumerationTooLarge, r"2\*\*1500 = 3.51e\+451 states\) needs about .*e\+443 GiB")),
    ("estimators: exact of an array", lambda i: est.log_partition_exact(i["W"]), Raises(TypeError, "RBMParams")),
    ("estimators: visible layer too large", lambda i: est.log_marginal_visible(RBMParams(np.zeros((30, 2)), np.zeros(30), np.zeros(2))),
     Raises(est.EnumerationTooLarge, "visible layer")),
    ("estimators: exact draws of size -1", lambda i: est.sample_visible_exact(i["p"], -1), Raises(ValueError, "size")),
    ("estimators: exact draws of size 2.5", lambda i: est.sample_visible_exact(i["p"], 2.5), Raises(ValueError, "size")),
    ("estimators: sampled moments with one chain", lambda i: est.moments_sampling(i["p"], n_chains=1),
     Raises(ValueError, "n_chains")),
    ("estimators: tap order", lambda i: est.log_partition_tap(i["p"], order=5), Raises(ValueError, "order must be")),
    ("estimators: tap negative tol", lambda i: est.log_partition_tap(i["p"], tol=-1.0), Raises(ValueError, "tol")),
    ("estimators: tap no starts", lambda i: est.log_partition_tap(i["p"], n_starts=0), Raises(ValueError, "n_starts")),
    ("estimators: bethe damping", lambda i: est.log_partition_bethe(i["p"], damping=2.0), Raises(ValueError, "damping")),
    ("estimators: bethe negative tol", lambda i: est.log_partition_bethe(i["p"], tol=-1.0), Raises(ValueError, "tol")),
    ("estimators: mean field damping", lambda i: est.log_partition_mean_field(i["p"], damping=-1),
     Raises(ValueError, "damping")),
    ("estimators: mixture with no component", lambda i: est.log_partition_mixture_mean_field(i["p"], n_components=0),
     Raises(ValueError, "n_components")),
    ("estimators: TAP outside the physical domain (issue 15)", lambda i: est.log_partition_tap(i["p50"]),
     Warns(UnphysicalFixedPoint, "outside \\[0, 1\\].*exceeds the upper bound",
           lambda r, i: not r.diagnostics["physical"] and r.diagnostics["converged"]
           and r.log_z > r.diagnostics["upper_bound"] >= est.log_partition_exact(i["p50"]).log_z)),
    ("estimators: TAP moments outside [0, 1] (issue 15)", lambda i: est.moments_tap(i["p50"]),
     Warns(UnphysicalFixedPoint, "outside \\[0, 1\\]",
           lambda r, i: not r.diagnostics["physical"] and r.diagnostics["vh_range"][0] < -1)),
    ("estimators: Bethe at strong weights (issue 29)", lambda i: est.log_partition_bethe(_strong()),
     Warns(RuntimeWarning, "Bethe: the estimate .* not trustworthy: the message passing did not converge",
           lambda r, i: not r.diagnostics["converged"] and r.diagnostics["stable"] is False)),
    ("estimators: Bethe moments at strong weights (issue 29)", lambda i: est.moments_bethe(_strong()),
     Warns(RuntimeWarning, "Bethe: the moments are not trustworthy", lambda r, i: r.v.shape == (6,))),
    ("estimators: Bethe at weak weights stays quiet (issue 29)", lambda i: est.log_partition_bethe(RBMParams.random(6, 3, rng=0)),
     Ok(lambda r, i: r.diagnostics["converged"] and r.diagnostics["stable"])),
    ("estimators: BAR at |W| x 1e6 is quiet and right (issue 29)",
     lambda i: est.bar(RBMParams(RBMParams.random(6, 4, rng=0).W * 1e6, np.zeros(6), np.zeros(4)), n_chains=20,
                       n_steps=100, rng=0),
     Ok(lambda r, i: abs(r.log_z - est.log_partition_exact(
         RBMParams(RBMParams.random(6, 4, rng=0).W * 1e6, np.zeros(6), np.zeros(4))).log_z) < 1.0)),
    ("estimators: TAP on a weak model stays quiet", lambda i: est.log_partition_tap(RBMParams.random(8, 5, scale=0.3, rng=0)),
     Ok(lambda r, i: r.diagnostics["physical"])),
    ("estimators: RTS at |w| = 1e3 (issue 15)",
     lambda i: est.rts(i["p1000"], n_chains=20, n_sweeps=300, start=est.StartOptions(n_pilot=200),
                       path_options=est.PathOptions(base="target"), rng=1),
     Warns(RuntimeWarning, "collapsed",
           lambda r, i: r.stderr >= np.std(r.diagnostics["history"][1:], ddof=1) - 1e-12
           and r.diagnostics.get("stderr_rule_chains", r.diagnostics["stderr_rule"]) == "spread")),
    ("estimators: SAMS at |w| = 1e3 (issue 15)",
     lambda i: est.sams(i["p1000"], n_runs=16, n_sweeps=2000, start=est.StartOptions(n_pilot=200),
                        path_options=est.PathOptions(base="target"), rng=1),
     Warns(RuntimeWarning, "collapsed",
           lambda r, i: r.stderr >= np.std(r.diagnostics["log_z_runs"], ddof=1) - 1e-12
           and r.diagnostics.get("stderr_rule_chains", r.diagnostics["stderr_rule"]) == "spread")),
    ("estimators: categorical exact takes rng= as binary does (issue 49)",
     lambda i: est.log_partition(_categorical(), "exact", rng=3),
     Ok(lambda r, i: r.log_z == est.log_partition(_categorical(), "exact").log_z)),
    ("estimators: a legacy RandomState seeds AIS (issue 49)",
     lambda i: est.ais(i["p"], n_chains=4, n_steps=10, rng=np.random.RandomState(0)),
     Ok(lambda r, i: r.log_z == est.ais(i["p"], n_chains=4, n_steps=10, rng=np.random.RandomState(0)).log_z)),
    ("estimators: TAP with a fractional number of starts (issue 49)", lambda i: est.log_partition_tap(i["p"], n_starts=2.5),
     Raises(ValueError, "n_starts must be a positive integer, got 2.5")),
    ("estimators: mixture mean field with init_scale NaN (issue 49)",
     lambda i: est.log_partition_mixture_mean_field(i["p"], init_scale=np.nan),
     Raises(ValueError, "init_scale must be a finite number")),
    ("estimators: AIS from base biases that overflow (issue 49)",
     lambda i: est.ais(i["p"], n_chains=4, n_steps=10, base=np.full(6, 1e308), rng=0),
     Raises(ValueError, "overflow the base's log partition function")),
    ("estimators: RTS on W = 0 is exact and quiet (issue 49)",
     lambda i: est.rts(RBMParams(np.zeros((6, 4)), np.zeros(6), np.zeros(4)), rng=0),
     Ok(lambda r, i: abs(r.log_z - 10 * np.log(2.0)) < 1e-9)),
    ("estimators: AIS whose runs all have one weight warns (issue 49)",
     lambda i: est.ais(RBMParams(i["W"], np.full(6, -1e3), np.full(4, -1e3)), n_chains=20, n_steps=50, rng=1),
     Warns(RuntimeWarning, "same log weight", lambda r, i: r.diagnostics["checks"]["distinct_weights"] == 1)),
    ("estimators: AIS on one of two modes warns (issue 46)",
     lambda i: est.ais(_two_modes(), n_chains=20, n_steps=200, rng=0),
     Warns(RuntimeWarning, "no chain visited", lambda r, i: r.log_z < est.log_partition_exact(_two_modes()).log_z - 0.5)),
    # --- training -------------------------------------------------------------------------------------
    ("training: learning rate 1e6 (issue 15)", lambda i: _fit(i["bas"], method="exact", learning_rate=1e6, n_updates=20,
                                                              evaluation=5),
     Warns(RuntimeWarning, re.escape("learning rate 1e+06 is too large"), lambda r, i: _diverged_cleanly(r, i))),
    ("training: learning rate 1e307 (issue 15)", lambda i: _fit(i["bas"], method="cd", learning_rate=1e307, n_updates=20,
                                                                evaluation=5),
     Warns(RuntimeWarning, re.escape("learning rate 1e+307 is too large"), lambda r, i: _diverged_cleanly(r, i))),
    ("training: learning rate 1e6 without records", lambda i: _fit(i["bas"], method="pcd", learning_rate=1e6,
                                                                    n_updates=20, evaluation=None),
     Warns(RuntimeWarning, "fit stopped at update 1: a parameter reached",
           lambda r, i: r.stop_reason == "diverged" and r.n_updates == 0 and r.best_params == r.params)),
    ("training: learning rate NaN", lambda i: _fit(i["bas"], learning_rate=np.nan), Raises(ValueError, "learning_rate")),
    ("training: learning rate inf", lambda i: _fit(i["bas"], learning_rate=np.inf), Raises(ValueError, "learning_rate")),
    ("training: learning rate text", lambda i: _fit(i["bas"], learning_rate="fast"), Raises(ValueError, "learning_rate")),
    ("training: learning rate True", lambda i: _fit(i["bas"], learning_rate=True), Raises(ValueError, "learning_rate")),
    ("training: learning rate 0", lambda i: _fit(i["bas"], learning_rate=0.0), Raises(ValueError, "learning_rate")),
    ("training: negative momentum", lambda i: _fit(i["bas"], optimizer=SGD(momentum=-0.1)), Raises(ValueError, "momentum")),
    ("training: NaN weight decay", lambda i: _fit(i["bas"], optimizer=SGD(weight_decay=np.nan)), Raises(ValueError, "weight_decay")),
    ("training: negative init scale", lambda i: _fit(i["bas"], params=Init(scale=-1.0)), Raises(ValueError, "scale")),
    ("training: 1.5 updates", lambda i: _fit(i["bas"], n_updates=1.5), Raises(ValueError, "n_updates")),
    ("training: zero epochs", lambda i: _fit(i["bas"], n_updates=None, epochs=0), Raises(ValueError, "epochs")),
    ("training: records every -1 updates", lambda i: _fit(i["bas"], evaluation=-1), Raises(ValueError, "every")),
    ("training: records every True updates", lambda i: _fit(i["bas"], evaluation=True), Raises(TypeError, "evaluation")),
    ("training: non-binary data", lambda i: _fit(i["half"]), Raises(ValueError, "data must be binary")),
    ("training: 3-D data", lambda i: _fit(i["bas"][None]), Raises(ValueError, r"shape \(n_samples, n_visible\)")),
    ("training: text data", lambda i: _fit(np.array([["0", "1"]])), Raises(ValueError, "data must be numeric")),
    ("training: params of other width", lambda i: _fit(i["bas"], params=i["p"], n_hidden=None),
     Raises(ValueError, "n_visible = 6, but the data have 9")),
    ("training: AIS records with one chain", lambda i: _fit(np.tile(i["bas"], (1, 3)), n_hidden=21,
                                                            evaluation=Evaluation(method="ais", options={"n_chains": 1})),
     Raises(ValueError, "n_chains must be an integer of at least 2")),
    ("training: gradient of non-binary data", lambda i: log_likelihood_gradient(i["p"], i["half"]),
     Raises(ValueError, "data must be binary")),
    ("training: TAP moments outside the domain (issue 15)",
     lambda i: _fit(i["bas"][:, :8], n_hidden=None, params=i["p50"], method="tap", learning_rate=1e-3, n_updates=3,
                    evaluation=1),
     Warns(RuntimeWarning, "fixed point outside the physical domain",
           lambda r, i: r.stop_reason == "" and np.nanmax(r.history.diagnostics["unphysical"]) == 1.0)),
    ("training: eval_method giving NaN at the start (issue 29)", lambda i: _fit(i["bas"], evaluation=Evaluation(method=lambda p: np.nan)),
     Raises(ValueError, "the evaluation method 'callable' returned log Z = nan for finite parameters")),
    ("training: eval_method giving NaN later (issue 29)", lambda i: _fit(i["bas"], n_updates=6,
                                                              evaluation=Evaluation(every=2, method=_nan_after(2))),
     Warns(RuntimeWarning, "fit stopped at update 4: the evaluation method 'callable' returned log Z = nan",
           lambda r, i: r.stop_reason == "evaluation_failed" and r.n_updates == 4 and list(r.history.updates) == [0, 2])),
    ("training: PT chains into PCD (issue 29)", lambda i: _fit(i["bas"], method=PCD(chains=_fit(i["bas"], method="pt").chains)),
     Raises(ValueError, "chains= holds a TemperedState, but method 'pcd' continues a RBMState")),
    ("training: PCD chains of another model (issue 29)", lambda i: _fit(i["bas"], n_hidden=5,
                                                             method=PCD(chains=_fit(i["bas"], method="pcd").chains)),
     Raises(ValueError, r"chains= have the shapes .* do not fit method 'pcd'")),
    ("training: PT chains of another ladder (issue 29)", lambda i: _fit(i["bas"],
                                                             method=PT(n_temperatures=3, chains=_fit(i["bas"], method="pt").chains)),
     Raises(ValueError, "do not fit method 'pt'")),
    ("training: PCD chains resumed (issue 29)", lambda i: _fit(i["bas"], method=PCD(chains=_fit(i["bas"], method="pcd").chains)),
     Ok(lambda r, i: r.n_updates == 3)),
    ("training: records far over budget are announced without a progress bar (issue 29)",
     lambda i: _fit((np.random.default_rng(0).random((50, 300)) < 0.3).astype(float), n_hidden=200),
     Warns(RuntimeWarning, r"fit: the 2 log-likelihood records .* will take about .* s, more than the .* evaluation=None",
           lambda r, i: list(r.history.updates) == [0, 3])),
    ("training: callback stops", lambda i: _fit(i["bas"], n_updates=10, callback=lambda step: step.update == 4),
     Ok(lambda r, i: r.stopped_early and r.stop_reason == "callback" and r.n_updates == 4)),
    ("training: a callback stopping before the records are sized",
     lambda i: _fit(np.tile(i["bas"], (1, 3)), n_hidden=21, n_updates=50, evaluation=20, callback=lambda s: s.update == 2),
     Warns(RuntimeWarning, "log-likelihood records .* more than the",
           lambda r, i: r.stop_reason == "callback" and list(r.history.updates) == [0, 2]
        and 500 <= r.history.estimator_options["n_steps"] <= 14500)),
    ("training: auto records on a large model are sized and printed in the history",
     lambda i: _fit(np.tile(i["bas"], (1, 3)), n_hidden=21, n_updates=4, evaluation=2),
     Warns(RuntimeWarning, "log-likelihood records .* more than the",
           lambda r, i: r.history.estimator == "ais" and list(r.history.updates) in ([0, 2, 4], [0, 4])
        and 500 <= r.history.estimator_options["n_steps"] <= 14500)),
]


def _holes(data, *, under=np.nan, rows=False):
    """``data`` as a new masked float array with cells (1, 2) and (3, 0) missing, or rows 1 and 3 with ``rows``."""
    out = np.asarray(data, dtype=np.float64).copy()
    mask = np.zeros(out.shape, dtype=bool)
    if rows:
        mask[[1, 3]] = True
    else:
        mask[1, 2] = mask[3, 0] = True
    out[mask] = under
    return np.ma.array(out, mask=mask)


def _imputed_logp_is_exact(model, i, rows=False) -> bool:
    """The model's logp at its initial point is the exact log-likelihood of the data completed by that point."""
    (free,) = model.free_RVs
    point = model.initial_point()
    filled = np.asarray(i["data"], dtype=np.float64).copy()
    mask = np.ma.getmaskarray(_holes(filled, rows=rows))
    filled[mask] = point[free.name].reshape(-1)
    expected = est.log_likelihood(i["p"], filled).sum()
    return free.name == "v_unobserved" and float(model.compile_logp()(point)) == pytest.approx(expected, abs=1e-9)


def _quiet_rbm(p, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return _rbm(p.W, p.vbias, p.hbias, **kwargs)


def _sample_from(start, step=FlipTheState):
    p = RBMParams.random(6, 4, rng=0)
    with pm.Model():
        v = RBM("v", p.W, p.vbias, p.hbias)
        return pm.sample(step=step([v]), draws=5, tune=0, chains=1, cores=1, initvals={"v": start},
                         progressbar=False, random_seed=0, compute_convergence_checks=False)


def _wormholes(alone: bool):
    from pymc_rbm import WormholeMetropolis

    p = RBMParams.random(6, 4, rng=0)
    data = np.array([[1, 1, 0, 0, 0, 0], [0, 0, 1, 1, 0, 0], [0, 0, 0, 0, 1, 1]])
    with pm.Model():
        v = RBM("v", p.W, p.vbias, p.hbias)
        steps = [WormholeMetropolis([v], data=data)] + ([] if alone else [FlipTheState([v])])
        return pm.sample(step=steps, draws=110, tune=0, chains=1, cores=1, progressbar=False, random_seed=0,
                         compute_convergence_checks=False)


def _nan_after(n_calls: int):
    """An eval_method that gives the exact log Z for ``n_calls`` calls, then NaN."""
    calls = []

    def log_z(p):
        calls.append(1)
        return est.log_partition(p).log_z if len(calls) <= n_calls else np.nan

    return log_z


def _huge(n_hidden: int = 1024):
    """An RBM whose smaller layer (``n_hidden`` units) is beyond what a float counts: 2**1024 overflows."""
    return RBMParams(np.zeros((n_hidden + 76, n_hidden)), np.zeros(n_hidden + 76), np.zeros(n_hidden))


def _resized_data_w(what: str):
    """An RBM on a pm.Data W of 4 columns, resized to 5 against its fixed hbias of 4, then evaluated."""
    with pm.Model() as model:
        W = pm.Data("W", np.zeros((6, 4)))
        v = RBM("v", W, np.zeros(6), np.zeros(4), log_partition=1.0)
        logp = model.compile_logp()
        pm.set_data({"W": np.zeros((6, 5))})
        return logp({"v": np.zeros(6, dtype=np.int64)}) if what == "logp" else pm.draw(v)


def _categorical():
    from pymc_rbm import CategoricalRBMParams

    return CategoricalRBMParams.random(4, 3, 2, rng=0)


def _two_modes():
    """All units off or all on, at the same energy (12 x 8)."""
    return RBMParams(np.full((12, 8), 1.5), np.full(12, -6.0), np.full(8, -9.0))


def _replica_exchange():
    from pymc_rbm import ReplicaExchange

    return ReplicaExchange


def _jax():
    return pytest.importorskip("pymc_rbm.jax")


def _strong():
    p = RBMParams.random(6, 3, rng=0)
    return RBMParams(p.W * 1e3, p.vbias, p.hbias)


def _random_weights_rbm(**kwargs):
    with pm.Model():
        W = pm.Normal("W", shape=(30, 25))
        return RBM("v", W, np.zeros(30), np.zeros(25), **kwargs)


def _normal_step():
    with pm.Model():
        x = pm.Normal("x")
        return FlipTheState([x])


def _too_slow(i):
    """2**18 states of 784 units with a limit of one millisecond: refused before anything runs."""
    p = RBMParams(np.zeros((784, 18)), np.zeros(784), np.zeros(18))
    old = ex.MAX_ENUMERATION_SECONDS
    ex.MAX_ENUMERATION_SECONDS = 1e-3
    try:
        return est.log_partition_exact(p)
    finally:
        ex.MAX_ENUMERATION_SECONDS = old


def _diverged_cleanly(r, i) -> bool:
    ll = r.history.log_likelihood
    return (
        r.stopped_early
        and r.stop_reason == "diverged"
        and np.all(np.isfinite(r.params.W))
        and ll.size >= 1
        and np.all(np.isfinite(ll))
        and float(est.log_likelihood(r.best_params, i["bas"]).mean()) == pytest.approx(r.history.best, abs=1e-9)
    )


def test_there_are_at_least_100_cases_and_they_cover_the_package():
    assert len(CASES) >= 100
    sections = {name.split(":")[0] for name, _, _ in CASES}
    assert sections >= {"params", "io", "datasets", "distribution", "steps", "estimators", "training"}


@pytest.mark.parametrize("name, call, expected", CASES, ids=[c[0] for c in CASES])
def test_bad_input(name, call, expected, tmp_path):
    inp = _inputs(tmp_path)
    snap = _snapshot(inp)
    if isinstance(expected, Raises):
        with pytest.raises(expected.error, match=expected.match):
            call(inp)
    elif isinstance(expected, Warns):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = call(inp)
        said = [str(w.message) for w in caught if issubclass(w.category, expected.warning)]
        assert any(re.search(expected.match, text) for text in said), said
        assert expected.check(result, inp), name
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)  # a correct result comes without our warnings
            result = call(inp)
        assert expected.check(result, inp), name
    _unchanged(inp, snap)
