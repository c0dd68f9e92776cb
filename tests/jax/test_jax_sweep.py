"""The JAX sweep kernels are the NumPy kernels' transitions: exact matrices on enumerable RBMs.

Each kernel's transition matrix is built from the probabilities the JAX
kernel itself uses (its logits and :func:`pymc_rbm.jax.sweep.change_probabilities`,
evaluated in float64), compared with :func:`pymc_rbm.testing.transition_matrix`
of the NumPy kernels, and checked for ``p T = p`` to 1e-12, irreducibility
and aperiodicity; the jitted kernel's draws from every joint state are then
tested against the rows of that matrix, in float32 and float64.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("jax.numpy")  # tests/jax itself must not pass for an installed jax

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

from pymc_rbm import RBMParams  # noqa: E402
from pymc_rbm import testing as ht  # noqa: E402
from pymc_rbm.estimators import binary_states  # noqa: E402
from pymc_rbm.jax import from_params, sweep  # noqa: E402

OPERATORS = ["gibbs", "flip", 0.5, 0.25]


@pytest.fixture(autouse=True)
def x64():
    with jax.enable_x64(True):
        yield


def tie_prone(n_visible, n_hidden, seed):
    """Zero biases and weights in {-1, 0, 1}: many logits are exactly 0 (the tie rule matters)."""
    rng = np.random.default_rng(seed)
    return RBMParams(rng.integers(-1, 2, (n_visible, n_hidden)), np.zeros(n_visible), np.zeros(n_hidden))


def unit_probabilities(rule, x, logit):
    """``P(x'_layer | x_layer)`` for every candidate layer state, units independent: shape (rows, 2**n)."""
    q, stay = (np.asarray(a, dtype=np.float64) for a in rule(x, logit))
    candidates = binary_states(x.shape[1]) != 0
    change = (x[:, None, :] != 0) != candidates[None, :, :]
    return np.where(change, q[:, None, :], stay[:, None, :]).prod(axis=-1)


def jax_rule(alpha):
    def rule(x, logit):
        return sweep.change_probabilities(jnp.asarray(x), jnp.asarray(logit), alpha)

    return rule


def jax_matrix(params: RBMParams, operator, beta: float, rule=None) -> np.ndarray:
    """The matrix of one JAX sweep ``T = T_h T_v``, from the JAX kernel's logits and unit probabilities."""
    from pymc_rbm.kernels.operators import operator_alpha

    rule = jax_rule(operator_alpha(operator)) if rule is None else rule
    arrays = from_params(params, dtype=np.float64)
    nv, nh = params.n_visible, params.n_hidden
    v, h = ht.joint_states(nv, nh)
    kv, kh = 2**nv, 2**nh
    a_h = np.asarray(sweep.hidden_logits(jnp.asarray(v), arrays, beta))
    a_v = np.asarray(sweep.visible_logits(jnp.asarray(h), arrays, beta))
    p_h = unit_probabilities(rule, h, a_h).reshape(kv, kh, kh)  # [v, h, h']
    p_v = unit_probabilities(rule, v, a_v).reshape(kv, kh, kv)  # [v, h', v']
    t = p_h[:, :, None, :] * p_v.transpose(0, 2, 1)[:, None, :, :]  # [v, h, v', h']
    return t.reshape(kv * kh, kv * kh)


CASES = [
    (RBMParams.random(2, 3, scale=2.0, rng=0), 1.0),
    (RBMParams.random(3, 2, scale=3.0, rng=1), 0.4),
    (RBMParams.random(4, 4, scale=1.5, rng=2), 1.0),
    (RBMParams.random(3, 3, scale=2.0, rng=3), 0.0),  # β = 0: every logit is a tie
    (tie_prone(3, 3, 4), 1.0),
]


@pytest.mark.parametrize("operator", OPERATORS)
@pytest.mark.parametrize("case", range(len(CASES)))
def test_matrix_equals_numpy_kernels_and_is_exact(case, operator):
    params, beta = CASES[case]
    T = jax_matrix(params, operator, beta)
    np.testing.assert_allclose(T, ht.transition_matrix(params, operator, beta), rtol=0, atol=1e-12)
    ht.assert_converges(ht.joint_distribution(params, beta), T, atol=1e-12)


@pytest.mark.parametrize(
    ("operator", "dtype"), [("gibbs", "float32"), ("flip", "float32"), ("flip", "float64"), (0.5, "float32")]
)
def test_kernel_draws_follow_its_matrix(operator, dtype):
    params, beta = RBMParams.random(3, 3, scale=2.0, rng=5), 0.7
    T = jax_matrix(params, operator, beta)
    arrays = from_params(params, dtype=dtype)
    kernel = jax.jit(sweep.build_kernel(operator))
    v, h = ht.joint_states(3, 3)
    n_draws = 2000
    start = np.repeat(np.arange(v.shape[0]), n_draws)
    state = sweep.RBMState(jnp.asarray(v[start], dtype=dtype), jnp.asarray(h[start], dtype=dtype))
    new, info = kernel(jax.random.key(11), state, arrays, beta)
    end = ht.joint_index(np.asarray(new.v), np.asarray(new.h))
    n = v.shape[0]
    counts = np.bincount(start * n + end, minlength=n * n).reshape(n, n)
    ht.assert_frequencies(counts, T, significance=1e-6)
    assert str(new.v.dtype) == dtype
    np.testing.assert_array_equal(info.n_changed, (np.asarray(new.v) != v[start]).sum(-1))
    np.testing.assert_array_equal(info.n_hidden_changed, (np.asarray(new.h) != h[start]).sum(-1))


# ------------------------------------------------------------ negative controls
def test_wrong_flip_probability_fails_stationarity():
    """A flip rule that leaves the more probable state too often (sqrt of Definition 1) is not exact."""
    params, beta = CASES[0]

    def too_eager(x, logit):
        q, _ = sweep.change_probabilities(jnp.asarray(x), jnp.asarray(logit), 1.0)
        q = jnp.sqrt(q)
        return q, 1.0 - q

    T = jax_matrix(params, "flip", beta, rule=too_eager)
    with pytest.raises(AssertionError, match="not stationary"):
        ht.assert_stationary(ht.joint_distribution(params, beta), T)


def test_flip_without_tie_rule_fails_on_ties():
    """Definition 1 without its tie case flips a tied unit surely: at β = 0 the chain is periodic."""
    params, beta = CASES[3]

    def no_tie(x, logit):
        s = jnp.where(jnp.asarray(x) != 0, -jnp.asarray(logit), jnp.asarray(logit))
        q = jnp.exp(jnp.minimum(s, 0.0))
        return q, 1.0 - q

    T = jax_matrix(params, "flip", beta, rule=no_tie)
    with pytest.raises(AssertionError, match="irreducible|periodic"):
        ht.assert_converges(ht.joint_distribution(params, beta), T)


# ------------------------------------------------------------ unit rule, tails, API
def test_change_probabilities_tails_are_not_rounded():
    logit = jnp.array([-60.0, -20.0, 20.0, 60.0], dtype=jnp.float32)
    for alpha in (0.0, 0.5, 1.0):
        q, stay = sweep.change_probabilities(jnp.ones(4), logit, alpha)
        assert np.all(np.asarray(q) + np.asarray(stay) <= 1 + 1e-6)
        # a unit that is on with logit -60 leaves almost surely; with +60 it stays almost surely,
        # and its tiny change probability is still positive in float32
        assert float(q[3]) > 0.0 and float(stay[0]) >= 0.0
    q, stay = sweep.change_probabilities(jnp.zeros(2), jnp.array([-60.0, 60.0], dtype=jnp.float32), 0.0)
    assert 0.0 < float(q[0]) < 1e-25 and 0.0 < float(stay[1]) < 1e-25


def test_init_validates_and_draws_hidden():
    params = from_params(RBMParams.random(4, 3, rng=0))
    state = sweep.init(jax.random.key(0), np.zeros(4), params)
    assert state.v.shape == (1, 4) and state.h.shape == (1, 3)
    with pytest.raises(ValueError, match="binary"):
        sweep.init(jax.random.key(0), np.full((2, 4), 0.5), params)
    with pytest.raises(ValueError, match="shape"):
        sweep.init(jax.random.key(0), np.zeros((2, 5)), params)
    with pytest.raises(ValueError, match="operator"):
        sweep.build_kernel("metropolis")


def test_kernel_is_pure_and_vmap_friendly():
    """Same key, same result; vmap over a stack of models runs each one's kernel."""
    params = RBMParams.random(5, 4, scale=2.0, rng=3)
    arrays = from_params(params)
    kernel = sweep.build_kernel(0.5)
    state = sweep.init(jax.random.key(1), np.zeros((8, 5)), arrays)
    jitted = jax.jit(kernel)
    a, _ = jitted(jax.random.key(2), state, arrays, 0.5)
    b, _ = jitted(jax.random.key(2), state, arrays, 0.5)
    np.testing.assert_array_equal(a.v, b.v)
    stacked = jax.tree.map(lambda x: jnp.stack([x, 2 * x]), arrays)
    states = jax.tree.map(lambda x: jnp.stack([x, x]), state)
    batched = jax.jit(jax.vmap(kernel, in_axes=(None, 0, 0, None)))
    out, info = batched(jax.random.key(2), states, stacked, 0.5)
    assert out.v.shape == (2, 8, 5) and info.n_changed.shape == (2, 8)
    np.testing.assert_array_equal(out.v[0], a.v)  # the first model's slice is the unbatched call
    np.testing.assert_array_equal(out.h[0], a.h)


def test_rbm_sampler_blackjax_shape():
    arrays = from_params(RBMParams.random(4, 3, rng=0))
    algo = sweep.rbm_sampler(arrays, operator="flip", beta=0.5)
    state = algo.init(np.zeros((6, 4)), jax.random.key(0))
    state, info = algo.step(jax.random.key(1), state)
    assert state.v.shape == (6, 4) and info.n_hidden_changed.shape == (6,)


def test_float64_needs_x64():
    with jax.enable_x64(False):
        with pytest.raises(ValueError, match="64-bit"):
            from_params(RBMParams.random(2, 2, rng=0), dtype="float64")
        assert str(from_params(RBMParams.random(2, 2, rng=0)).W.dtype) == "float32"
