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
from pymc_rbm.jax.arrays import matmul  # noqa: E402
from pymc_rbm.kernels.target import FieldTarget  # noqa: E402

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


# ------------------------------------------------------------ the target record
def jax_record(target):
    """A NumPy :class:`FieldTarget` with its arrays as JAX arrays (numbers stay numbers)."""
    return jax.tree.map(lambda x: x if isinstance(x, float) else jnp.asarray(x), target)


def tilted_record(params, beta):
    """The RBM at ``beta`` tilted by visible and hidden fields, a NumPy record."""
    rng = np.random.default_rng(8)
    target = FieldTarget.at_beta(params, beta)
    phi, psi = rng.normal(size=params.n_visible), rng.normal(size=params.n_hidden)
    return target._replace(visible_field=phi, hidden_field=psi)


def tilted_joint(target, n_visible, n_hidden):
    v, h = ht.joint_states(n_visible, n_hidden)
    u = target.energy(v, h)
    return np.exp(-u - np.logaddexp.reduce(-u))


def record_matrix(target, n_visible, n_hidden, alpha):
    """The matrix of one JAX sweep on a record, from the JAX kernel's logits and unit probabilities."""
    rule = jax_rule(alpha)
    v, h = ht.joint_states(n_visible, n_hidden)
    kv, kh = 2**n_visible, 2**n_hidden
    t = jax_record(target)
    p_h = unit_probabilities(rule, h, np.asarray(sweep.hidden_logits(jnp.asarray(v), t))).reshape(kv, kh, kh)
    p_v = unit_probabilities(rule, v, np.asarray(sweep.visible_logits(jnp.asarray(h), t))).reshape(kv, kh, kv)
    return (p_h[:, :, None, :] * p_v.transpose(0, 2, 1)[:, None, :, :]).reshape(kv * kh, kv * kh)


@pytest.mark.parametrize("alpha", [0.0, 1.0, 0.5])
def test_a_sweep_on_a_tilted_record_is_exact(alpha):
    """The JAX sweep on a record with fields leaves the record's density invariant, and its draws follow the matrix."""
    params, beta = RBMParams.random(3, 2, scale=2.0, rng=6), 0.7
    target = tilted_record(params, beta)
    T = record_matrix(target, 3, 2, alpha)
    ht.assert_converges(tilted_joint(target, 3, 2), T, atol=1e-12)
    v, h = ht.joint_states(3, 2)
    start = np.repeat(np.arange(v.shape[0]), 2000)
    state = sweep.RBMState(jnp.asarray(v[start]), jnp.asarray(h[start]))
    new, _ = jax.jit(sweep.build_kernel(alpha))(jax.random.key(3), state, jax_record(target))
    end = ht.joint_index(np.asarray(new.v), np.asarray(new.h))
    n = v.shape[0]
    ht.assert_frequencies(np.bincount(start * n + end, minlength=n * n).reshape(n, n), T, significance=1e-6)


def test_a_record_that_drops_the_visible_field_is_caught():
    """Negative control: the same sweep on the record without its visible field moves the tilted density."""
    params = RBMParams.random(3, 2, scale=2.0, rng=6)
    target = tilted_record(params, 0.7)
    T = record_matrix(target._replace(visible_field=0.0), 3, 2, 1.0)
    with pytest.raises(AssertionError, match="not stationary"):
        ht.assert_stationary(tilted_joint(target, 3, 2), T)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_params_and_beta_are_the_record_at_beta(dtype):
    """``sweep(key, state, params, beta)`` is the sweep on the record at β, traced or not, draw for draw."""
    params = RBMParams.random(7, 5, scale=2.0, rng=1)
    arrays = from_params(params, dtype=dtype)
    betas = np.linspace(0.1, 1.0, 16)
    state = sweep.init(jax.random.key(0), np.random.default_rng(0).integers(0, 2, (16, 7)), arrays, betas)
    kernel = jax.jit(sweep.build_kernel(0.5))
    a, ia = kernel(jax.random.key(1), state, arrays, jnp.asarray(betas, dtype=dtype))
    record = jax_record(FieldTarget.at_beta(params.astype(dtype), betas, 16))
    record = record._replace(beta=record.beta.astype(dtype))
    b, ib = kernel(jax.random.key(1), state, record)  # the fields 0.0 are traced leaves here
    for x, y in ((a.v, b.v), (a.h, b.h), (ia.n_changed, ib.n_changed), (ia.n_hidden_changed, ib.n_hidden_changed)):
        np.testing.assert_array_equal(x, y)
    with pytest.raises(TypeError, match="beta"):
        sweep.sweep(jax.random.key(1), state, record, 0.5, alpha=0.5)


def test_unknown_hidden_state_is_a_gibbs_draw_and_the_input_is_carried():
    """``h=None`` draws the hidden layer by Gibbs whatever α; a carried hidden input gives the same chain."""
    params = RBMParams.random(6, 4, scale=2.0, rng=2)
    arrays = from_params(params)
    target = sweep.at_beta(arrays, 0.6)
    v = jnp.asarray(np.random.default_rng(1).integers(0, 2, (50, 6)), dtype=arrays.W.dtype)
    new, info = sweep.sweep(jax.random.key(4), sweep.RBMState(v, None), target, alpha=1.0)
    key_h, _ = jax.random.split(jax.random.key(4))
    logit = sweep.hidden_logits(v, target)
    h, _ = sweep.update_layer(key_h, jnp.zeros_like(logit), logit, 0.0)
    np.testing.assert_array_equal(new.h, h)
    np.testing.assert_array_equal(info.n_hidden_changed, 0)
    assert new.hidden_input is None
    plain = carried = sweep.init(jax.random.key(5), v, arrays, 0.6)
    carried = carried._replace(hidden_input=matmul(v, arrays.W) + arrays.hbias)
    for i in range(5):
        plain, _ = sweep.sweep(jax.random.key(10 + i), plain, target, alpha=0.5)
        carried, _ = sweep.sweep(jax.random.key(10 + i), carried, target, alpha=0.5)
        np.testing.assert_array_equal(plain.v, carried.v)
        np.testing.assert_array_equal(plain.h, carried.h)
    np.testing.assert_allclose(carried.hidden_input, np.asarray(plain.v) @ params.W + params.hbias, atol=1e-5)
