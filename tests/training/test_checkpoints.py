"""Checkpoints of ``fit`` that are damaged, on other data, or cannot be written: clear errors, no work lost."""

import json
import warnings

import numpy as np
import pytest

from pymc_rbm import RBMParams
from pymc_rbm.datasets import bars_and_stripes
from pymc_rbm.training import Checkpoints, SGD, fit
from pymc_rbm.training import trajectory as trajectory_module
from pymc_rbm.training.trajectory import load_checkpoint

DATA = np.repeat(bars_and_stripes(3), 3, axis=0)  # 42 rows, batches of 10
# a constant rate: the checkpoint of a 10-update run resumes for 20 (a schedule would set the rate from n_updates)
RUN = dict(method="pcd", batch_size=10, progress=False, optimizer=SGD(schedule="constant"), evaluation=None)


@pytest.fixture
def checkpoint(tmp_path):
    """A directory with the checkpoint of update 10 of a 20-update PCD run with momentum."""
    fit(DATA, 4, n_updates=10, rng=0, **RUN, checkpoints=Checkpoints(updates=[10], directory=tmp_path / "run"))
    return tmp_path / "run" / "update_00000010.npz"


def _rewrite(path, change):
    """Rewrite the checkpoint ``path`` with ``change(arrays, meta)`` applied (meta: the parsed JSON, or None to keep
    the raw entry)."""
    with np.load(path) as f:
        arrays = {k: f[k] for k in f.files}
    meta = json.loads(str(arrays["meta"]))
    if change(arrays, meta) is not False:
        arrays["meta"] = np.array(json.dumps(meta))
    np.savez(path, **arrays)


def test_a_resume_on_other_data_of_the_same_shape_is_refused(checkpoint):
    other = DATA[::-1].copy()  # the same rows in another order: other batches
    before = checkpoint.read_bytes()
    with pytest.raises(ValueError, match=r"written by a run on other training data \(of the same shape \(42, 9\)"):
        fit(other, n_updates=20, **RUN, checkpoints=Checkpoints(resume=checkpoint))
    assert checkpoint.read_bytes() == before
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert fit(DATA, n_updates=20, **RUN, checkpoints=Checkpoints(resume=checkpoint)).n_updates == 20  # its own data resume silently


def test_a_checkpoint_without_a_data_fingerprint_still_resumes_with_a_warning(checkpoint):
    _rewrite(checkpoint, lambda arrays, meta: meta.pop("data_fingerprint"))
    whole = fit(DATA, 4, n_updates=20, rng=0, **RUN)
    with pytest.warns(RuntimeWarning, match="records no fingerprint of its training data"):
        resumed = fit(DATA, n_updates=20, **RUN, checkpoints=Checkpoints(resume=checkpoint))
    assert resumed.params == whole.params


def _set(key, value):
    return lambda arrays, meta: arrays.__setitem__(key, value)


@pytest.mark.parametrize(
    "change, match",
    [
        (lambda arrays, meta: (arrays.__setitem__("meta", np.array("{not json")), False)[1],
         "its 'meta' entry is not JSON"),
        (lambda arrays, meta: meta.pop("chains"), r"its 'meta' entry lacks \['chains'\]"),
        (lambda arrays, meta: arrays.pop("update"), r"it lacks the entries \['update'\]"),
        (lambda arrays, meta: meta.__setitem__("chains", "LostState"), "its chains are of an unknown kind 'LostState'"),
        (lambda arrays, meta: meta["train_rng"]["state"].pop("inc"), "its training random state is not a PCG64 state"),
        (lambda arrays, meta: meta.__setitem__("eval_rng", "seed"), "its evaluation random state names no bit gen"),
        (_set("optimizer__velocity_0", np.zeros((2, 2))),
         r"its optimiser state 'velocity_0' is float64 of shape \(2, 2\)"),
        (lambda arrays, meta: arrays.pop("optimizer__velocity_1"), "its optimiser state holds"),
        (_set("chains__v", np.zeros((10, 3))), "its chains do not fit the run"),
        (_set("batch_order", np.zeros(42, dtype=np.int64)), "its batch order is not an order of the 42 rows"),
        (_set("update", np.float64(10.5)), "its 'update' entry is .* not a count"),
        (_set("W", np.zeros((9, 4, 2))), "its parameters are not a RBMParams"),
    ],
    ids=["meta-not-json", "no-chains", "no-update", "unknown-chains", "rng-no-inc", "rng-not-a-dict",
         "optimizer-shape", "optimizer-missing", "chains-shape", "batch-order", "update-float", "params"],
)
def test_a_damaged_checkpoint_is_named_as_not_valid(checkpoint, change, match):
    _rewrite(checkpoint, change)
    before = checkpoint.read_bytes()
    with pytest.raises(ValueError, match=rf"^not a valid checkpoint: {checkpoint}: {match}"):
        fit(DATA, n_updates=20, **RUN, checkpoints=Checkpoints(resume=checkpoint))
    assert checkpoint.read_bytes() == before


def test_a_checkpoint_dir_that_is_a_file_is_refused_before_training(tmp_path):
    where = tmp_path / "taken"
    where.write_text("not a directory")
    seen = []
    with pytest.raises(ValueError, match=r"Checkpoints\(directory=.*taken'\) is an existing file, not a directory"):
        fit(DATA, 4, n_updates=5, callback=seen.append, rng=0, **RUN, checkpoints=Checkpoints(directory=where))
    assert not seen  # refused before the first update
    with pytest.raises(ValueError, match=r"cannot be created: .*taken' is a file"):
        fit(DATA, 4, n_updates=5, rng=0, **RUN, checkpoints=Checkpoints(directory=where / "below"))
    assert where.read_text() == "not a directory"


def test_a_checkpoint_that_cannot_be_written_warns_and_keeps_the_result(tmp_path, monkeypatch):
    savez = np.savez

    def disk_full_at_the_end(file, **arrays):
        if "update_00000020" in str(file):
            with open(file, "wb") as f:
                f.write(b"PK\x03\x04 half a file")
            raise OSError(28, "No space left on device")
        savez(file, **arrays)

    whole = fit(DATA, 4, n_updates=20, rng=0, **RUN)
    monkeypatch.setattr(trajectory_module.np, "savez", disk_full_at_the_end)
    with pytest.warns(RuntimeWarning, match=r"could not write the checkpoint of update 20 .*No space left on device"):
        res = fit(DATA, 4, n_updates=20, rng=0, **RUN, checkpoints=Checkpoints(updates=[10, 20], directory=tmp_path))
    assert res.n_updates == 20 and not res.stopped_early and res.params == whole.params
    assert res.trajectory.updates == [10, 20] and [p.rsplit("/", 1)[-1] for p in res.trajectory.paths] == [
        "update_00000010.npz"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["update_00000010.npz"]  # no temporary file left


def test_parameter_files_and_checkpoints_record_their_kind(tmp_path):
    from pymc_rbm.gaussian import GaussianRBMParams

    data = np.random.default_rng(0).normal(size=(30, 3))
    fit(data, 2, visible="gaussian", n_updates=4, rng=0, **RUN,
        checkpoints=Checkpoints(updates=[4], directory=tmp_path))
    path = tmp_path / "update_00000004.npz"
    with pytest.raises(ValueError, match="holds GaussianRBMParams parameters .* read it with "
                                         r"pymc_rbm\.gaussian\.params\.GaussianRBMParams\.load"):
        RBMParams.load(path)
    assert GaussianRBMParams.load(path) == load_checkpoint(path).params


AVERAGED = dict(n_updates=40, method="pcd", batch_size=10, progress=False,
                optimizer=SGD(momentum=0.5, schedule="cosine", average=0.5), evaluation=None)


def test_a_run_with_averaging_stopped_by_ctrl_c_keeps_both_and_resumes_draw_for_draw(tmp_path):
    whole = fit(DATA, 4, rng=0, **AVERAGED)

    def ctrl_c(step):
        if step.update == 33:
            raise KeyboardInterrupt

    with pytest.warns(RuntimeWarning, match=r"continue with fit\(data, params=result.raw_params"):
        stopped = fit(DATA, 4, rng=0, callback=ctrl_c, **AVERAGED,
                      checkpoints=Checkpoints(updates=[10, 30], directory=tmp_path))
    assert stopped.stop_reason == "interrupted" and stopped.n_updates == 33
    assert stopped.params != stopped.raw_params  # the mean of updates 21..33, and the parameters after update 33
    saved = load_checkpoint(tmp_path)
    assert saved.update == 30 and int(saved.average["count"]) == 10
    resumed = fit(DATA, **AVERAGED, checkpoints=Checkpoints(resume=tmp_path))
    assert resumed.params == whole.params and resumed.raw_params == whole.raw_params
    assert resumed.chains.v.tolist() == whole.chains.v.tolist()


def test_a_checkpoint_with_damaged_averaged_parameters_is_named_as_not_valid(tmp_path):
    fit(DATA, 4, rng=0, **AVERAGED, checkpoints=Checkpoints(updates=[30], directory=tmp_path))
    path = tmp_path / "update_00000030.npz"
    _rewrite(path, lambda arrays, meta: arrays.pop("average__mean_1"))
    with pytest.raises(ValueError, match=rf"^not a valid checkpoint: {path}: its averaged parameters"):
        fit(DATA, **AVERAGED, checkpoints=Checkpoints(resume=path))
    with pytest.raises(ValueError, match=r"written with other options \(average: 0.5 there, 0.25 here\)"):
        fit(DATA, **{**AVERAGED, "optimizer": SGD(momentum=0.5, schedule="cosine", average=0.25)},
                checkpoints=Checkpoints(resume=path))


def test_a_longer_run_resumed_at_a_constant_rate_averages_its_own_window(checkpoint):
    # the checkpoint is update 10 of a 10-update run, which averaged updates 6-10; a 20-update run averages 11-20,
    # so the resumed run starts its mean afresh and ends as the whole run does
    whole = fit(DATA, 4, n_updates=20, rng=0, **RUN)
    resumed = fit(DATA, n_updates=20, **RUN, checkpoints=Checkpoints(resume=checkpoint))
    assert resumed.params == whole.params and resumed.raw_params == whole.raw_params
    assert whole.params != whole.raw_params  # PCD's default averages the last half


def test_a_resume_whose_window_began_before_the_checkpoint_is_refused(checkpoint):
    # 15 updates average 8-15: the checkpoint's mean of 6-10 cannot give the mean of 8-10
    with pytest.raises(ValueError, match=r"cannot be rebuilt; resume with n_updates of at least 20"):
        fit(DATA, n_updates=15, **RUN, checkpoints=Checkpoints(resume=checkpoint))
