"""Replica exchange in JAX: swap rounds leave the product of the tempered distributions invariant, exactly.

The matrix of a swap round over every product state of a tiny ladder is
built from the JAX kernel's own log ratio (:func:`pymc_rbm.jax.tempering.swap_log_ratio`)
and the Metropolis acceptance, and checked for ``p T = p`` to 1e-12; the
kernel's draws are tested against its rows; a wrong ratio fails. The whole
step (sweeps and swaps) is checked by the target replica's marginal against
enumeration.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

pytest.importorskip("jax.numpy")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

from pymc_rbm import RBMParams  # noqa: E402
from pymc_rbm import testing as ht  # noqa: E402
from pymc_rbm.estimators import log_marginal_visible  # noqa: E402
from pymc_rbm.jax import from_params, tempering  # noqa: E402
from pymc_rbm.jax.arrays import matmul  # noqa: E402
from pymc_rbm.kernels import target  # noqa: E402
from pymc_rbm.kernels.target import FieldTarget  # noqa: E402


@pytest.fixture(autouse=True)
def x64():
    with jax.enable_x64(True):
        yield


def product_states(n_visible, n_hidden, n_temperatures):
    """Every ladder state: replica ``r`` in joint state ``idx[:, r]``; returns (idx, v, h) with a temperature axis first."""
    v1, h1 = ht.joint_states(n_visible, n_hidden)
    idx = np.array(list(itertools.product(range(v1.shape[0]), repeat=n_temperatures)))  # (S, t)
    return idx, v1[idx].transpose(1, 0, 2), h1[idx].transpose(1, 0, 2)


def swap_matrix(params, betas, parity, log_ratio_fn=tempering.swap_log_ratio):
    """The matrix of one swap round of the given parity, from the JAX log ratio."""
    t = len(betas)
    idx, v, h = product_states(params.n_visible, params.n_hidden, t)
    arrays = from_params(params, dtype=np.float64)
    state = tempering.TemperedState(jnp.asarray(v), jnp.asarray(h), jnp.int32(parity))
    lr = np.asarray(log_ratio_fn(state, arrays, jnp.asarray(betas)))  # (t - 1, S)
    acc = np.exp(np.minimum(lr, 0.0))
    pairs = [r for r in range(t - 1) if r % 2 == parity]
    k = 2 ** params.n_visible * 2 ** params.n_hidden
    weights = k ** np.arange(t - 1, -1, -1)  # itertools.product order: replica 0 most significant
    S = idx.shape[0]
    T = np.zeros((S, S))
    for chosen in itertools.product([False, True], repeat=len(pairs)):
        prob = np.ones(S)
        target = idx.copy()
        for r, swap in zip(pairs, chosen):
            prob *= acc[r] if swap else 1.0 - acc[r]
            if swap:
                target[:, [r, r + 1]] = target[:, [r + 1, r]]
        np.add.at(T, (np.arange(S), target @ weights), prob)
    return T, idx


def product_distribution(params, betas, idx):
    ps = [ht.joint_distribution(params, b) for b in betas]
    return np.prod([ps[r][idx[:, r]] for r in range(len(betas))], axis=0)


LADDERS = [
    (RBMParams.random(2, 1, scale=2.0, rng=0), [0.2, 0.6, 1.0]),
    (RBMParams.random(1, 1, scale=3.0, rng=1), [0.0, 0.3, 0.7, 1.0]),
]


@pytest.mark.parametrize("parity", [0, 1])
@pytest.mark.parametrize("case", range(len(LADDERS)))
def test_swap_round_leaves_product_invariant(case, parity):
    params, betas = LADDERS[case]
    T, idx = swap_matrix(params, betas, parity)
    ht.assert_stationary(product_distribution(params, betas, idx), T, atol=1e-12)


def test_wrong_swap_ratio_fails():
    """The ratio with the energy difference turned round (a classic slip) is not invariant."""
    params, betas = LADDERS[0]

    def turned(state, arrays, b):
        return -tempering.swap_log_ratio(state, arrays, b)

    T, idx = swap_matrix(params, betas, 0, log_ratio_fn=turned)
    with pytest.raises(AssertionError, match="not stationary"):
        ht.assert_stationary(product_distribution(params, betas, idx), T)


def test_swap_draws_follow_the_matrix_and_alternate():
    params, betas = LADDERS[1]
    arrays = from_params(params, dtype="float32")
    swap = jax.jit(tempering.swap_neighbours)
    idx, v, h = product_states(1, 1, 4)
    n_draws = 400
    start = np.repeat(np.arange(idx.shape[0]), n_draws)
    for parity in (0, 1):
        T, _ = swap_matrix(params, betas, parity)
        state = tempering.TemperedState(
            jnp.asarray(v[:, start], dtype="float32"), jnp.asarray(h[:, start], dtype="float32"), jnp.int32(parity)
        )
        new, info = swap(jax.random.key(parity), state, arrays, jnp.asarray(betas, dtype="float32"))
        assert int(new.n_rounds) == parity + 1
        np.testing.assert_array_equal(info.attempted, np.arange(3) % 2 == parity)
        end_state = np.asarray(new.v[..., 0]) * 2 + np.asarray(new.h[..., 0])  # joint index of each replica
        end = (end_state * (4 ** np.arange(3, -1, -1))[:, None]).sum(0).astype(np.int64)
        counts = np.bincount(start * idx.shape[0] + end, minlength=idx.shape[0] ** 2).reshape(idx.shape[0], -1)
        ht.assert_frequencies(counts, T, significance=1e-6)


def test_replica_exchange_samples_the_target():
    """The top replica of 4096 independent ladders after 60 rounds follows exact p(v) (chi-square)."""
    params = RBMParams.random(5, 3, scale=2.5, rng=7)
    betas = [0.0, 0.35, 0.7, 1.0]
    arrays = from_params(params, dtype="float32")
    key = jax.random.key(3)
    state = tempering.init(key, np.zeros((4096, 5)), arrays, betas)
    state, stats = tempering.run(jax.random.key(4), state, arrays, betas, 60, operator="flip")
    assert int(state.n_rounds) == 60
    assert stats.rejection.shape == (3,) and np.all((stats.rejection >= 0) & (stats.rejection <= 1))
    assert stats.barrier == pytest.approx(stats.rejection.sum())
    counts = np.bincount(ht.state_index(np.asarray(state.v[-1])), minlength=32)
    ht.assert_frequencies(counts, np.exp(log_marginal_visible(params)), significance=1e-6)


def test_adapt_ladder_equalises_rejection():
    b = np.array([0.0, 0.25, 0.5, 0.75, 1.0])
    rej = np.array([0.05, 0.05, 0.4, 0.5])
    lam = tempering.communication_barrier(b, rej)
    assert lam[0] == 0.0 and lam[-1] == pytest.approx(1.0)
    new = tempering.adapt_ladder(b, rej)
    assert new[0] == 0.0 and new[-1] == 1.0 and np.all(np.diff(new) > 0)
    # the new points sit where the old barrier reaches 0, 1/4, 1/2, 3/4 and 1 of Λ
    np.testing.assert_allclose(np.interp(new, b, lam), np.linspace(0, 1, 5), atol=1e-8)
    assert tempering.adapt_ladder(b, rej, 3).shape == (3,)
    with pytest.raises(ValueError, match="increasing"):
        tempering.adapt_ladder([0.0, 1.0, 0.5], [0.1, 0.1])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_swap_log_ratio_is_the_ladder_records(dtype):
    """The swap ratio is the rungs' records': bit for bit the β-ladder formula, and the four-energy definition."""
    params = RBMParams.random(6, 4, scale=2.0, rng=3)
    arrays = from_params(params, dtype=dtype)
    betas = jnp.asarray([0.1, 0.4, 0.75, 1.0], dtype=dtype)
    rng = np.random.default_rng(0)
    state = tempering.TemperedState(
        jnp.asarray(rng.integers(0, 2, (4, 50, 6)), dtype=dtype),
        jnp.asarray(rng.integers(0, 2, (4, 50, 4)), dtype=dtype),
        jnp.int32(0),
    )
    got = jax.jit(tempering.swap_log_ratio)(state, arrays, betas)
    e = -((matmul(state.v, arrays.W) + arrays.hbias) * state.h).sum(-1) - (state.v * arrays.vbias).sum(-1)
    np.testing.assert_array_equal(got, jax.jit(lambda e, b: jnp.diff(b)[:, None] * jnp.diff(e, axis=0))(e, betas))
    ladder = FieldTarget.at_beta(params)
    b64 = np.asarray(betas, dtype=np.float64)
    v, h = np.asarray(state.v, dtype=np.float64), np.asarray(state.h, dtype=np.float64)
    for r in range(3):
        rungs = ladder._replace(beta=b64[r]), ladder._replace(beta=b64[r + 1])
        want = target.swap_log_ratio(*rungs, (v[r], h[r]), (v[r + 1], h[r + 1]))
        np.testing.assert_allclose(got[r], want, rtol=1e-5 if dtype == "float32" else 1e-12, atol=1e-4)
