"""The compiled tempered round: one sweep per rung is the default round, and each rung makes its own number."""

import numpy as np
import pytest

from pymc_rbm import RBMParams
from pymc_rbm.energy import hidden_activation
from pymc_rbm.kernels.compiled import available, carried_sweeps
from pymc_rbm.kernels.replica_rounds import tempered_round
from _uniforms import UniformStream

pytestmark = pytest.mark.skipif(not available(), reason="needs Numba")

MODELS = {"random": RBMParams.random(12, 7, scale=1.0, rng=0)}


def _ladder_start(params, k, n_chains, seed):
    rng = np.random.default_rng(seed)
    v = (rng.random((k, n_chains, params.n_visible)) < 0.5).astype(np.float64)
    h = (rng.random((k, n_chains, params.n_hidden)) < 0.5).astype(np.float64)
    return v, h


@pytest.mark.parametrize("evidence", [False, True])
def test_tempered_round_with_one_sweep_per_rung_is_the_default_draw_for_draw(evidence):
    """``sweeps`` of ones is the round of one sweep per replica: the same states, labels, stats and stream."""
    params = MODELS["random"]
    betas = np.array([0.0, 0.3, 0.7, 1.0])
    model = (params.W, np.ascontiguousarray(params.W.T), params.vbias, params.hbias)
    ev = np.random.default_rng(3).normal(size=(4, 3, params.n_visible)) if evidence else None
    runs = []
    for sweeps in (None, np.ones(4, dtype=np.int64)):
        v, h = _ladder_start(params, 4, 3, 1)
        labels = np.repeat(np.arange(4)[:, None], 3, axis=1)
        s_sum, s_n = np.zeros(3), np.zeros(3)
        rng = np.random.default_rng(11)
        for t in range(6):
            tempered_round(rng, v, h, model, betas, 4, (t % 2, labels, s_sum, s_n), evidence=ev, sweeps=sweeps)
        runs.append((v, h, labels, s_sum, s_n, rng.random()))
    for a, b in zip(*runs):
        np.testing.assert_array_equal(a, b)


def test_tempered_round_sweeps_each_rung_its_own_number_of_times():
    """Rung r makes sweeps[r] sweeps on rows of uniforms of its own: with swaps ruled out (parity past the ladder)
    the round is, rung by rung, that many compiled sweeps at β_r fed the same uniforms; energies before/after."""
    from pymc_rbm.energy import energy

    params = MODELS["random"]
    betas = np.array([0.2, 0.6, 1.0])
    sweeps = np.array([3, 1, 2])
    model = (params.W, np.ascontiguousarray(params.W.T), params.vbias, params.hbias)
    v, h = _ladder_start(params, 3, 2, 4)
    v0, h0 = v.copy(), h.copy()
    labels = np.repeat(np.arange(3)[:, None], 2, axis=1)
    energies = np.empty((2, 3, 2))
    tempered_round(np.random.default_rng(8), v, h, model, betas, 3, (3, labels, np.zeros(2), np.zeros(2)),
                   sweeps=sweeps, energies=energies)
    u = np.random.default_rng(8).random((sweeps.sum(), 2, params.n_hidden + params.n_visible))
    row = 0
    for r, beta in enumerate(betas):
        tp = RBMParams(beta * params.W, beta * params.vbias, beta * params.hbias)
        np.testing.assert_allclose(energies[0, r], energy(v0[r], h0[r], params), atol=1e-9)
        for b in range(2):
            x, y = v0[r, b:b + 1], h0[r, b:b + 1]
            for s in range(sweeps[r]):
                stream = UniformStream(u[row + s, b])
                x, y, *_ = carried_sweeps(stream, x, y, hidden_activation(x, tp), None, tp, 1, alpha=1.0)
            np.testing.assert_array_equal(v[r, b:b + 1], x)
            np.testing.assert_array_equal(h[r, b:b + 1], y)
        row += sweeps[r]
        np.testing.assert_allclose(energies[1, r], energy(v[r], h[r], params), atol=1e-9)
    with pytest.raises(ValueError, match="at least one sweep"):
        tempered_round(np.random.default_rng(8), v, h, model, betas, 3, (0, labels, np.zeros(2), np.zeros(2)),
                       sweeps=np.array([1, 0, 1]))


@pytest.mark.parametrize("parity", [0, 1])
def test_swap_round_exchanges_exactly_the_accepted_pairs(parity):
    """The swap round of both ladders: pair (r, r + 1) of chain b is accepted when log u < log ratio (u taken
    pair by pair), which exchanges its v rows, h rows (when given) and labels; nothing else moves."""
    from pymc_rbm.kernels.round_loops import swap_round

    rng = np.random.default_rng(parity)
    k, n_b = 6, 4
    v, h = rng.random((k, n_b, 5)), rng.random((k, n_b, 3))
    labels = np.repeat(np.arange(k)[:, None], n_b, axis=1)
    log_ratio = rng.normal(size=(k - 1, n_b))
    pairs = list(range(parity, k - 1, 2))
    swap_u = rng.random((len(pairs), n_b))
    for with_h in (True, False):
        v1, h1, lab1 = v.copy(), h.copy(), labels.copy()
        accepted = np.zeros((k - 1, n_b), dtype=bool)
        swap_round(parity, k, swap_u, log_ratio, v1, h1 if with_h else None, lab1, accepted)
        expected = np.zeros_like(accepted)
        expected[pairs] = np.log(swap_u) < log_ratio[pairs]
        np.testing.assert_array_equal(accepted, expected)
        assert 0 < expected.sum() < len(pairs) * n_b
        perm = np.repeat(np.arange(k)[:, None], n_b, axis=1)
        for r, b in zip(*np.nonzero(expected)):
            perm[r, b], perm[r + 1, b] = r + 1, r
        cols = np.arange(n_b)[None, :]
        np.testing.assert_array_equal(lab1, labels[perm, cols])
        np.testing.assert_array_equal(v1, v[perm, cols])
        np.testing.assert_array_equal(h1, h[perm, cols] if with_h else h)
