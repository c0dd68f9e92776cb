"""Saved trajectories and checkpoints of ``fit``: log-spaced points, files, and a Ctrl-C'd run resumed draw for draw."""

import warnings

import numpy as np
import pytest

from pymc_rbm import RBMParams
from pymc_rbm.datasets import bars_and_stripes
from pymc_rbm.training import PCD, PT, SGD, Checkpoints, Init, fit
from pymc_rbm.training.trajectory import load_checkpoint, log_spaced_updates

DATA = np.repeat(bars_and_stripes(3), 3, axis=0)  # 42 rows: batches of 10 end epochs mid-way through a save gap
FAST = dict(progress=False, rng=0, evaluation=None)


def test_default_trajectory_is_log_spaced_from_start_to_end():
    res = fit(DATA, 4, method="pcd", n_updates=200, batch_size=10, **FAST)
    assert res.trajectory.updates == log_spaced_updates(200).tolist()
    assert res.trajectory.updates[0] == 0 and res.trajectory.updates[-1] == 200
    assert len(res.trajectory) <= 21
    np.testing.assert_array_equal(res.trajectory.params[-1].W, res.raw_params.W)  # the trajectory keeps the raw parameters
    assert not res.trajectory.paths  # nothing on disk unless asked


def test_checkpoints_are_models_and_runs(tmp_path):
    res = fit(DATA, 4, method="pcd", n_updates=30, batch_size=10, **FAST,
              checkpoints=Checkpoints(updates=[0, 10, 30], directory=tmp_path))
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"update_{u:08d}.npz" for u in (0, 10, 30)]
    model = RBMParams.load(tmp_path / "update_00000030.npz")  # a checkpoint is a parameter file too
    np.testing.assert_array_equal(model.W, res.raw_params.W)
    cp = load_checkpoint(tmp_path)  # the latest
    assert cp.update == 30 and cp.epoch == 6  # 5 batches of 42 rows per epoch
    np.testing.assert_array_equal(cp.chains.v, res.chains.v)


@pytest.mark.parametrize(
    "options",
    [
        dict(method=PCD(k=2)),  # hidden units redrawn, the kernels' sweeps
        dict(optimizer="adam", learning_rate=0.01, method=PCD(hidden="carry")),  # the compiled one-call gradient
        dict(method=PT(betas=[0.5, 1.0]), optimizer=SGD(momentum=0.5, schedule="cosine", centered=False)),
        dict(method="cd", optimizer=SGD(weight_decay=0.01, max_grad_norm=0.5), params=Init(dtype=np.float32)),
    ],
    ids=["pcd", "pcd-carry-adam", "pt-momentum-cosine", "cd-float32-clipped"],
)
def test_a_run_stopped_by_ctrl_c_resumes_from_its_last_checkpoint_draw_for_draw(tmp_path, options):
    common = dict(n_hidden=5, batch_size=10, n_updates=60, learning_rate=0.05, **FAST)
    common.update(options)
    saved = [0, 10, 20, 30, 45, 60]
    whole = fit(DATA, **common, checkpoints=Checkpoints(updates=saved, directory=tmp_path / "whole"))

    def ctrl_c(step):
        if step.update == 37:
            raise KeyboardInterrupt

    with pytest.warns(RuntimeWarning, match="interrupted"):
        stopped = fit(DATA, callback=ctrl_c, **common, checkpoints=Checkpoints(updates=saved, directory=tmp_path / "cut"))
    assert stopped.stop_reason == "interrupted" and stopped.n_updates == 37
    assert load_checkpoint(tmp_path / "cut").update == 30
    common.pop("rng")
    resumed = fit(DATA, **common,
                  checkpoints=Checkpoints(updates=saved, directory=tmp_path / "cut", resume=tmp_path / "cut"))
    assert resumed.n_updates == 60 and not resumed.stopped_early
    for a, b in zip((resumed.params.W, resumed.params.vbias, resumed.params.hbias),
                    (whole.params.W, whole.params.vbias, whole.params.hbias)):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(resumed.chains or (), whole.chains or ()):
        np.testing.assert_array_equal(a, b)
    assert resumed.trajectory.updates == [45, 60]
    for name in ("update_00000045.npz", "update_00000060.npz"):
        x, y = load_checkpoint(tmp_path / "cut" / name), load_checkpoint(tmp_path / "whole" / name)
        np.testing.assert_array_equal(x.params.W, y.params.W)
        assert x.train_rng == y.train_rng


def test_resume_refuses_other_options_and_keeps_the_files(tmp_path):
    # a constant rate resumes for longer (on a schedule the rate depends on n_updates: refused below)
    run = dict(method="pcd", batch_size=10, progress=False, optimizer=SGD(schedule="constant"), evaluation=None)
    fit(DATA, 4, n_updates=20, rng=0, **run, checkpoints=Checkpoints(updates=[10, 20], directory=tmp_path))
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    with pytest.raises(ValueError, match="k: 5 there, 3 here"):
        fit(DATA, n_updates=40, **run | {"method": PCD(k=3)}, checkpoints=Checkpoints(resume=tmp_path))
    with pytest.raises(ValueError, match="lr_schedule: 'constant' there, 'cosine' here, n_updates: 20 there, 40 here"):
        fit(DATA, **dict(run, optimizer=SGD(schedule="cosine")), n_updates=40, checkpoints=Checkpoints(resume=tmp_path))
    with pytest.raises(ValueError, match="nothing to do"):
        fit(DATA, n_updates=20, **run, checkpoints=Checkpoints(resume=tmp_path))
    with pytest.raises(ValueError, match="neither params= nor chains="):
        fit(DATA, params=RBMParams.random(9, 4, rng=0), n_updates=40, **run, checkpoints=Checkpoints(resume=tmp_path))
    with pytest.raises(ValueError, match="no such checkpoint"):
        fit(DATA, 4, **FAST, checkpoints=Checkpoints(resume=tmp_path / "nowhere"))
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before
    more = fit(DATA, n_updates=40, **run, checkpoints=Checkpoints(resume=tmp_path))
    assert more.n_updates == 40


@pytest.mark.parametrize("bad", [-1, [5, 500], [[1, 2]], [0.5], True])
def test_bad_kept_updates(bad):
    with pytest.raises(ValueError, match="Checkpoints.updates"):
        fit(DATA, 4, n_updates=100, **FAST, checkpoints=Checkpoints(updates=bad))


def test_no_trajectory_when_asked():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = fit(DATA, 4, n_updates=10, **FAST, checkpoints=Checkpoints(updates=0))
    assert len(res.trajectory) == 0
