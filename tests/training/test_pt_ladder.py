"""The PT ladder of training adapts by the package's one rule, exactly, and resumes draw for draw.

:func:`~pymc_rbm.training.parallel_tempering` replaces its ladder every
``adapt_every`` updates by :func:`~pymc_rbm.kernels.tempering.equalized_ladder`
(``saturating=True``) of the pairs' Rao-Blackwellised swap rejections since the
last change (Syed, Bouchard-Côté, Deligiannidis & Doucet 2022). Each update's
moves (the hidden redraw, ``k`` sweeps, the swap round) leave the product of the
tempered distributions invariant for the ladder in force
(``tests/kernels/test_tempering.py`` checks them on the exact transition matrix
for any ladder); the adaptation only changes the ladder between updates, so what
is checked here is that the swaps do run at the new ladder, that the new ladder is
the rule applied to the right rates, and that the ladder travels with the chains.
"""

import numpy as np
import pytest

from pymc_rbm import RBMParams
from pymc_rbm.energy import energy
from pymc_rbm.estimators import log_marginal_visible
from pymc_rbm.kernels import acceptance_probability
from pymc_rbm.kernels import tempering
from pymc_rbm.kernels.operators import build_operator
from pymc_rbm.kernels.tempering import (
    TemperedState,
    build_kernel,
    equalized_ladder,
    init_tempered_state,
    tempered_log_ratio,
    uniform_ladder,
)
from pymc_rbm.testing import assert_frequencies, state_index
from pymc_rbm.training import parallel_tempering
from pymc_rbm.training.negative import DEFAULT_ADAPT_EVERY
from pymc_rbm.training.run import as_dtype
from pymc_rbm.training.trajectory import Checkpoint, load_checkpoint, save_checkpoint


def ferromagnet(w: float, n_visible: int = 12, n_hidden: int = 8, dtype=np.float64) -> RBMParams:
    """Every unit coupled to every other with weight ``w``, the biases making all-on and all-off equally likely.

    Its two modes appear at a sharp transition (near β = 0.15 for ``w = 3``): a
    uniform ladder puts most rungs where nothing happens and rejects nearly every
    swap across the transition.
    """
    W = np.full((n_visible, n_hidden), float(w))
    return RBMParams(W, -W.sum(axis=1) / 2, -W.sum(axis=0) / 2, dtype=dtype)


SHARP = ferromagnet(3.0)
GIBBS = build_operator("gibbs")


def _data(n, n_visible=12, seed=0):
    return (np.random.default_rng(seed).random((n, n_visible)) < 0.5).astype(np.float64)


def _rates(chains) -> np.ndarray:
    return np.asarray(chains.rejection_sum) / np.asarray(chains.attempts)


def _measure(chains, params, n_updates, seed):
    """Mean Rao-Blackwellised rejection of each pair at the chains' own ladder, by the kernel itself."""
    pt_step = build_kernel(GIBBS)
    betas = np.asarray(chains.betas)
    rng = np.random.default_rng(seed)
    state = TemperedState(chains.v, chains.h, chains.n_rounds)
    total, n = np.zeros(betas.size - 1), np.zeros(betas.size - 1)
    for _ in range(n_updates):
        state, info = pt_step(rng, state, params, betas)
        tried = info.swap.attempted
        total[tried] += 1.0 - acceptance_probability(info.swap.log_ratio[tried]).mean(axis=1)
        n[tried] += 1
    return total / n


def test_the_ladder_equalizes_the_rejections_of_a_sharp_model():
    t = 6
    phase = parallel_tempering(GIBBS, betas=uniform_ladder(t), n_chains=64, adapt_every=20)
    rng = np.random.default_rng(0)
    start = phase.init(rng, _data(64), SHARP)
    before = _measure(start, SHARP, 200, seed=1)
    chains = start
    for _ in range(5 * 20):
        _, chains, info = phase.step(rng, chains, SHARP, None)
    after = _measure(chains, SHARP, 200, seed=1)
    ladder = np.asarray(chains.betas)
    assert ladder.shape == (t,) and np.all(np.diff(ladder) > 0) and ladder[0] == 0.0 and ladder[-1] == 1.0
    assert not np.allclose(ladder, uniform_ladder(t))
    spread_before, spread_after = np.ptp(before), np.ptp(after)
    assert before.max() > 0.9 and spread_before > 0.8  # the uniform ladder: one pair almost never swaps
    assert spread_after < spread_before / 5, (before, after)
    assert np.isfinite(info["barrier"]) and info["barrier"] > 0


def _reference(chains, params, n_updates, adapt_every, seed, k=1):
    """The phase written out with the kernel itself: its ladders, and those of two wrong rules."""
    pt_step = build_kernel(GIBBS, k=k)
    rng = np.random.default_rng(seed)
    betas = np.asarray(chains.betas)
    t = betas.size
    v, n_rounds = chains.v, chains.n_rounds
    rb, indicator, n = np.zeros(t - 1), np.zeros(t - 1), np.zeros(t - 1)
    out = []
    for _ in range(n_updates):
        fresh = init_tempered_state(rng, v, params, betas)._replace(n_rounds=n_rounds)
        state, tinfo = pt_step(rng, fresh, params, betas)
        v, n_rounds = state.v, state.n_rounds
        tried = tinfo.swap.attempted
        rb[tried] += 1.0 - acceptance_probability(tinfo.swap.log_ratio[tried]).mean(axis=1)
        indicator[tried] += 1.0 - tinfo.swap.accepted[tried].mean(axis=1)
        n[tried] += 1
        controls = None
        if adapt_every and n_rounds % adapt_every == 0:
            controls = (equalized_ladder(betas, 1.0 - rb / n, t, saturating=True),  # acceptance, not rejection
                        equalized_ladder(betas, indicator / n, t, saturating=True))  # indicators, not RB
            betas = equalized_ladder(betas, rb / n, t, saturating=True)
            rb[:], indicator[:], n[:] = 0.0, 0.0, 0
        out.append((state, betas, controls))
    return out


def test_the_adapted_ladder_is_the_equalized_ladder_of_the_rejections():
    phase = parallel_tempering(GIBBS, betas=uniform_ladder(5), n_chains=16, adapt_every=6)
    chains = phase.init(np.random.default_rng(3), _data(16), SHARP)
    reference = _reference(chains, SHARP, 30, 6, seed=4)
    rng = np.random.default_rng(4)
    n_controls = 0
    for state, betas, controls in reference:
        _, chains, _ = phase.step(rng, chains, SHARP, None)
        np.testing.assert_array_equal(chains.v, state.v)
        np.testing.assert_array_equal(chains.h, state.h)
        np.testing.assert_allclose(chains.betas, betas, rtol=0, atol=1e-12)
        if controls is not None:
            n_controls += 1
            assert chains.attempts == (0, 0, 0, 0) and chains.rejection_sum == (0.0,) * 4
            for wrong in controls:  # the test can tell a wrong rule
                assert np.abs(np.asarray(chains.betas) - wrong).max() > 1e-3
    assert n_controls == 5
    assert not np.allclose(chains.betas, uniform_ladder(5))


def test_a_fixed_ladder_gives_the_draws_of_the_fixed_kernel():
    # 12 x 8, t = 5, k = 2, 7 ladders, 30 updates: values of the phase before the ladder adapted
    params = RBMParams.random(12, 8, scale=1.5, rng=3)
    data = (np.random.default_rng(1).random((20, 12)) < 0.5).astype(float)
    phase = parallel_tempering(GIBBS, 2, betas=uniform_ladder(5), n_chains=7, adapt_every=None)
    rng = np.random.default_rng(11)
    chains = phase.init(rng, data, params)
    first = chains
    accept = []
    for _ in range(30):
        _, chains, info = phase.step(rng, chains, params, data)
        accept.append(info["swap_accept"])
    assert chains.n_rounds == 30 and chains.v.sum() == 222.0
    assert np.sum(accept) == pytest.approx(16.71428571428571, abs=1e-12)
    assert rng.random() == 0.880163909703047
    assert chains.betas == tuple(uniform_ladder(5))
    # and the kernel itself, on more updates than the default window
    reference = _reference(first, params, 2 * DEFAULT_ADAPT_EVERY, 0, seed=5, k=2)
    chains, rng = first, np.random.default_rng(5)
    for state, _, _ in reference:
        _, chains, _ = phase.step(rng, chains, params, data)
    np.testing.assert_array_equal(chains.v, reference[-1][0].v)
    assert chains.betas == tuple(uniform_ladder(5))
    assert chains.attempts == (0,) * 4  # a fixed ladder measures its rates in windows of the default length too
    _, chains, info = phase.step(rng, chains, params, data)
    _, chains, info = phase.step(rng, chains, params, data)
    assert chains.attempts == (1,) * 4 and info["barrier"] > 0


def test_adapt_every_zero_is_a_fixed_ladder_and_one_is_refused():
    a = parallel_tempering(GIBBS, betas=uniform_ladder(4), adapt_every=0)
    rng = np.random.default_rng(0)
    chains = a.init(rng, _data(8), SHARP)
    for _ in range(12):
        _, chains, _ = a.step(rng, chains, SHARP, None)
    assert chains.betas == tuple(uniform_ladder(4))
    with pytest.raises(ValueError, match="at least 2"):
        parallel_tempering(GIBBS, betas=uniform_ladder(4), adapt_every=1)
    with pytest.raises(ValueError, match="adapt_every"):
        parallel_tempering(GIBBS, betas=uniform_ladder(4), adapt_every=-3)


def _through_checkpoint(tmp_path, chains, rng, params, dtype):
    """The chains and the random stream after the checkpoint writer, the reader and fit's cast to ``dtype``."""
    cp = Checkpoint(params, 10, 0, chains, {}, rng.bit_generator.state, np.random.default_rng(0).bit_generator.state,
                    None, 0, {})
    back = load_checkpoint(save_checkpoint(tmp_path, cp))
    resumed = np.random.default_rng()
    resumed.bit_generator.state = back.train_rng
    return as_dtype(back.chains, dtype), resumed


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_checkpoint_resumes_the_ladder_draw_for_draw(tmp_path, dtype):
    params = ferromagnet(3.0, dtype=dtype)
    phase = parallel_tempering(GIBBS, betas=uniform_ladder(5), n_chains=8, adapt_every=4)
    rng = np.random.default_rng(7)
    start = phase.init(rng, _data(8), params)
    one_go, rng_a = start, np.random.default_rng(8)
    for _ in range(22):
        _, one_go, _ = phase.step(rng_a, one_go, params, None)
    split, rng_b = start, np.random.default_rng(8)
    for _ in range(10):  # two adaptations, and half a window of rates
        _, split, _ = phase.step(rng_b, split, params, None)
    assert split.attempts == (1, 1, 1, 1) and split.betas != tuple(uniform_ladder(5))
    split, rng_b = _through_checkpoint(tmp_path, split, rng_b, params, dtype)
    assert isinstance(split.betas, tuple) and isinstance(split.attempts[0], int)
    for _ in range(12):
        _, split, _ = phase.step(rng_b, split, params, None)
    assert split.v.dtype == one_go.v.dtype == dtype
    np.testing.assert_array_equal(split.v, one_go.v)
    np.testing.assert_array_equal(split.h, one_go.h)
    assert split.n_rounds == one_go.n_rounds == 22
    assert split.betas == one_go.betas and split.rejection_sum == one_go.rejection_sum
    assert split.attempts == one_go.attempts


def test_a_checkpoint_without_a_ladder_continues_from_the_starting_one(tmp_path):
    phase = parallel_tempering(GIBBS, betas=[0.0, 0.1, 0.3, 1.0], n_chains=6, adapt_every=4)
    rng = np.random.default_rng(2)
    chains = phase.init(rng, _data(6), SHARP)
    for _ in range(3):
        _, chains, _ = phase.step(rng, chains, SHARP, None)
    old = TemperedState(chains.v, chains.h, chains.n_rounds)  # what earlier versions kept and saved
    back, _ = _through_checkpoint(tmp_path, old, rng, SHARP, np.float64)
    assert back.betas is None and back.rejection_sum is None and back.n_rounds == 3
    filled = chains._replace(rejection_sum=(0.0,) * 3, attempts=(0,) * 3)

    def go_on(c):
        r = np.random.default_rng(9)
        for _ in range(6):
            _, c, _ = phase.step(r, c, SHARP, None)
        return c

    first, second = go_on(back), go_on(filled)
    np.testing.assert_array_equal(first.v, second.v)
    assert first.betas == second.betas and first.betas != (0.0, 0.1, 0.3, 1.0)  # adapted at update 4
    assert first.rejection_sum == second.rejection_sum


def test_the_swaps_run_at_the_adapted_ladder(monkeypatch):
    """Each update's swap round uses the ladder the chains carried into it; its log ratio is that ladder's."""
    seen = []
    swap = tempering.swap_neighbours

    def recording(rng, state, params, betas, **kw):
        new, info = swap(rng, state, params, betas, **kw)
        seen.append((np.array(betas), energy(state.v, state.h, params), info))
        return new, info

    monkeypatch.setattr(tempering, "swap_neighbours", recording)
    phase = parallel_tempering(GIBBS, betas=uniform_ladder(6), n_chains=10, adapt_every=4)
    rng = np.random.default_rng(1)
    chains = phase.init(rng, _data(10), SHARP)
    ladders = set()
    for _ in range(16):
        in_force = chains.betas
        _, chains, _ = phase.step(rng, chains, SHARP, None)
        betas, u, info = seen[-1]
        assert tuple(betas) == in_force
        tried = info.attempted
        np.testing.assert_allclose(info.log_ratio[tried], tempered_log_ratio(np.asarray(in_force), u)[tried],
                                   rtol=1e-12, atol=1e-12)
        ladders.add(in_force)
    assert len(ladders) == 4  # the uniform ladder and three adapted ones


def test_an_adapting_phase_at_fixed_parameters_samples_the_model():
    params = RBMParams(
        np.array([[2.0, -1.5], [1.8, 1.0], [-2.2, 0.5]]), np.array([-0.5, 0.3, 0.4]), np.array([0.2, -0.6])
    )
    phase = parallel_tempering(GIBBS, betas=uniform_ladder(4), n_chains=3000, adapt_every=4)
    rng = np.random.default_rng(0)
    chains = phase.init(rng, np.array([[1, 1, 1], [0, 0, 0]]), params)
    for _ in range(40):
        stats, chains, info = phase.step(rng, chains, params, None)
    assert chains.betas != tuple(uniform_ladder(4))
    p = np.exp(log_marginal_visible(params))
    assert_frequencies(np.bincount(state_index(chains.v[-1]), minlength=8), p)
    np.testing.assert_allclose(stats.v, chains.v[-1].mean(axis=0))
