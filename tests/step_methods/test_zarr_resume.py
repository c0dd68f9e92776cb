"""``ZarrTrace`` keeps the steps' sampling state; restoring it continues the chain bit for bit.

PyMC 6.4 writes each step's ``sampling_state`` into the trace's
``_sampling_state`` group after every draw, so a run that dies can be picked
up from the store. It needs zarr 2 (``zarr.storage.BaseStore``) and pickles
the state with numcodecs, whose decoder must be allowed explicitly since
numcodecs 0.15.
"""

import numpy as np
import pymc as pm
import pytest

from pymc_rbm import RBM, BlockGibbs, FlipTheState, RBMParams

zarr = pytest.importorskip("zarr")
if int(zarr.__version__.split(".")[0]) >= 3:  # pragma: no cover - depends on the environment
    pytest.skip("PyMC 6.4's ZarrTrace needs zarr 2", allow_module_level=True)
numcodecs_pickles = pytest.importorskip("numcodecs.pickles")
from pymc.backends.zarr import ZarrTrace  # noqa: E402

PARAMS = RBMParams.random(6, 4, scale=2.0, rng=3)


@pytest.fixture(autouse=True)
def allow_state_pickles(monkeypatch):
    # the sampling state is a pickled object in the store; we wrote it ourselves
    monkeypatch.setattr(numcodecs_pickles, "ALLOW_UNSAFE_PICKLE_DECODE", True, raising=False)


def _model(shape):
    with pm.Model() as model:
        RBM("v", PARAMS.W, PARAMS.vbias, PARAMS.hbias, shape=shape)
    return model


@pytest.mark.filterwarnings("ignore:`return_inferencedata=False`:FutureWarning")
@pytest.mark.parametrize("cls", [FlipTheState, BlockGibbs])
@pytest.mark.parametrize("shape", [(6,), (3, 6)])
def test_zarr_trace_state_resumes_the_chain_exactly(cls, shape):
    kwargs = dict(tune=0, chains=1, cores=1, random_seed=11, progressbar=False, compute_convergence_checks=False)
    with _model(shape):
        trace = pm.sample(
            draws=15, step=cls(record_hidden=True), trace=ZarrTrace(), return_inferencedata=False, **kwargs
        )
        full = pm.sample(draws=25, step=cls(record_hidden=True), **kwargs)
    stored_v = np.asarray(trace.posterior["v"][0])
    expected = full.posterior["v"].values[0]
    np.testing.assert_array_equal(stored_v, expected[:15])
    assert int(trace._sampling_state.draw_idx[0]) == 15

    state = trace._sampling_state.sampling_state[0]
    hidden = full.sample_stats["hidden"].values[0]
    assert hidden.shape == (25, int(np.prod(shape[:-1])) * PARAMS.n_hidden)  # flat per draw for a batch
    np.testing.assert_array_equal(state.hidden_state.reshape(-1), hidden[14])

    with _model(shape):
        resumed = cls(record_hidden=True)
    resumed.sampling_state = state
    point = {"v": stored_v[-1]}
    for t in range(15, 25):
        point, stats = resumed.step(point)
        np.testing.assert_array_equal(point["v"], expected[t])
        np.testing.assert_array_equal(stats[0]["hidden"], hidden[t])
