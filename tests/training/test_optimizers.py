"""Optimisers, schedules, clipping and float32 of ``fit``: each does what it says, bad options are refused."""

import numpy as np
import pytest

from pymc_rbm import RBMParams
from pymc_rbm.datasets import bars_and_stripes
from pymc_rbm.training import Checkpoints, Gradient, Init, PCD, fit
from pymc_rbm.training.optimizers import DEFAULT_MOMENTUM, SGD, Adam, clip, make_optimizer, schedule_factor

DATA = bars_and_stripes(3)
FAST = dict(progress=False, rng=0)


def test_adam_step_is_the_textbook_one():
    opt = Adam(beta1=0.9, beta2=0.99, eps=1e-8)
    p = [np.array([1.0, -1.0])]
    state = opt.init(p)
    grads = [np.array([0.5, -2.0]), np.array([0.1, 0.3])]
    m = v = np.zeros(2)
    want = p[0].copy()
    for t, g in enumerate(grads, start=1):
        m = 0.9 * m + 0.1 * g
        v = 0.99 * v + 0.01 * g**2
        want = want + 0.01 * (m / (1 - 0.9**t)) / (np.sqrt(v / (1 - 0.99**t)) + 1e-8)
        opt.apply(state, p, [g], 0.01)
    np.testing.assert_allclose(p[0], want, rtol=1e-6)  # eps enters after the bias correction: a 1e-8 difference


def test_momentum_velocity():
    opt = SGD(0.5)
    p = [np.zeros(1)]
    state = opt.init(p)
    for _ in range(3):
        opt.apply(state, p, [np.ones(1)], 1.0)
    np.testing.assert_allclose(p[0], [1 + 1.5 + 1.75])


def test_schedules():
    assert schedule_factor("constant", 50, 100) == 1.0
    assert schedule_factor("linear", 0, 100) == 1.0 and schedule_factor("linear", 100, 100) == pytest.approx(0.01)
    assert schedule_factor("cosine", 50, 100) == pytest.approx(0.5)
    assert schedule_factor("exponential", 100, 100) == pytest.approx(0.01)
    assert schedule_factor(lambda u, n: 0.5 ** (u // 10), 25, 100) == 0.25


def test_clipping():
    g = Gradient(np.full((2, 2), 3.0), np.zeros(2), np.full(2, 4.0))  # norm sqrt(36 + 32)
    clipped, norm = clip(g, 1.0)
    assert norm == pytest.approx(np.sqrt(68)) and clipped.norm() == pytest.approx(1.0)
    same, _ = clip(g, 100.0)
    assert same is g


@pytest.mark.parametrize("optimizer", ["adam", "sgd"])
@pytest.mark.parametrize("schedule", ["constant", "linear", "cosine"])
def test_every_optimiser_and_schedule_learns(optimizer, schedule):
    lr = 0.05 if optimizer == "adam" else 0.3
    record = {"adam": Adam, "sgd": SGD}[optimizer](schedule=schedule)
    res = fit(DATA, 9, method="exact", optimizer=record, learning_rate=lr, n_updates=200, evaluation=200,
              params=Init(scale=0.5), **FAST)
    ll = res.history.log_likelihood
    assert ll[-1] > ll[0] + 1.0


def test_clipped_steps_are_no_longer_than_the_clip():
    start = RBMParams.random(9, 4, scale=0.5, rng=1)
    res = fit(DATA, params=start, method="exact", learning_rate=1.0, n_updates=1, **FAST,
              optimizer=SGD(max_grad_norm=1e-3, centered=False), evaluation=None)
    step = Gradient(*(a - b for a, b in zip((res.params.W, res.params.vbias, res.params.hbias),
                                            (start.W, start.vbias, start.hbias))))
    assert step.norm() == pytest.approx(1e-3)


def test_float32_training_stays_float32_and_learns_like_float64():
    kw = dict(learning_rate=0.1, n_updates=300, **FAST, method=PCD(k=3), evaluation=300, params=Init(scale=0.5))
    f32 = fit(DATA, 9, **kw | {"params": Init(scale=0.5, dtype=np.float32)})
    f64 = fit(DATA, 9, **kw)
    assert f32.params.W.dtype == np.float32 and f64.params.W.dtype == np.float64
    assert f32.history.log_likelihood[-1] > f32.history.log_likelihood[0] + 1.0
    assert abs(f32.history.log_likelihood[-1] - f64.history.log_likelihood[-1]) < 0.5


@pytest.mark.parametrize(
    "options, match",
    [
        (lambda: dict(optimizer="rmsprop"), "optimizer must be"),
        (lambda: dict(optimizer=SGD(momentum=1.0)), "momentum"),
        (lambda: dict(optimizer=SGD(schedule="step")), "schedule must be"),
        (lambda: dict(optimizer=Adam(max_grad_norm=0.0)), "max_grad_norm"),
        (lambda: dict(optimizer=SGD(max_grad_norm=np.nan)), "max_grad_norm"),
        (lambda: dict(optimizer=SGD(weight_decay=-0.1)), "weight_decay"),
        (lambda: dict(params=Init(RBMParams.random(9, 4, rng=0), dtype=np.int32)), "dtype must be"),
        (lambda: dict(params=Init(RBMParams.random(9, 4, rng=0), dtype="float16")), "dtype must be"),
        (lambda: dict(method=PCD(hidden="stale")), "hidden must be"),
    ],
)
def test_bad_options_are_refused_and_nothing_is_mutated(options, match, tmp_path):
    start = RBMParams.random(9, 4, rng=0)
    W = start.W.copy()
    data = DATA.copy()
    with pytest.raises(ValueError, match=match):  # a record refuses a bad field when it is made, fit the rest
        fit(data, **{"params": start, **options()}, n_updates=5, **FAST, evaluation=None,
            checkpoints=Checkpoints(directory=tmp_path / "cp"))
    np.testing.assert_array_equal(start.W, W)
    np.testing.assert_array_equal(data, DATA)
    assert not (tmp_path / "cp").exists()


def test_a_callable_schedule_that_returns_nonsense_is_refused():
    with pytest.raises(ValueError, match="schedule"):
        fit(DATA, 4, n_updates=5, **FAST, optimizer=SGD(schedule=lambda u, n: -1.0), evaluation=None)


def test_make_optimizer_objects():
    assert make_optimizer("sgd") == SGD(DEFAULT_MOMENTUM) == SGD(0.5) == SGD()  # momentum not given: the default
    assert make_optimizer("adam") == Adam()  # Adam has no momentum to default
    assert make_optimizer(SGD(0.2)) == SGD(0.2)  # a record keeps its own
    assert make_optimizer(Adam(beta1=0.5)) == Adam(beta1=0.5)
    assert repr(SGD(0.9, schedule="linear")) == "SGD(momentum=0.9)"  # checkpoints record the step rule alone
    with pytest.raises(TypeError, match="momentum"):
        Adam(momentum=0.9)  # Adam's beta1 is its momentum
    with pytest.raises(ValueError, match="beta2"):
        Adam(beta2=1.0)


def _one_update(**options):
    start = RBMParams.random(9, 4, scale=0.5, rng=1)
    res = fit(DATA, params=start, method="exact", n_updates=1, **options, **FAST, evaluation=None,
              checkpoints=Checkpoints(updates=0))
    return start, res.params


def test_centered_sgd_steps_along_phase_gradient():
    from pymc_rbm.training.negative import deterministic, phase_gradient

    start, after = _one_update(learning_rate=0.1)
    g, _, _ = phase_gradient(deterministic("exact"), None, None, start, DATA.astype(float), centered=True)
    for a, s, d in zip((after.W, after.vbias, after.hbias), (start.W, start.vbias, start.hbias), g):
        np.testing.assert_allclose(a, s + 0.1 * d, rtol=0, atol=1e-14)


def test_adam_and_momentum_step_in_the_centered_parameters():
    """Adam's first step is lr · sign(g) per coordinate of the centered gradient, then mapped to (W, vbias, hbias)."""
    from pymc_rbm.training.gradients import centered_update
    from pymc_rbm.training.negative import centered_phase_gradient, deterministic

    start, after = _one_update(learning_rate=0.01, optimizer="adam")
    g, (mu, lam), _, _ = centered_phase_gradient(deterministic("exact"), None, None, start, DATA.astype(float))
    eps = 1e-8 / np.sqrt(1 - 0.999)  # eps enters before the bias correction (Kingma & Ba, the efficient form)
    step = centered_update(Gradient(*(0.01 * x / (np.abs(x) + eps) for x in g)), mu, lam)
    for a, s, d in zip((after.W, after.vbias, after.hbias), (start.W, start.vbias, start.hbias), step):
        np.testing.assert_allclose(a, s + d, rtol=0, atol=1e-12)
    start, after = _one_update(learning_rate=0.1, optimizer=SGD(0.9))  # the first momentum step is lr · g
    step = centered_update(Gradient(*(0.1 * x for x in g)), mu, lam)
    for a, s, d in zip((after.W, after.vbias, after.hbias), (start.W, start.vbias, start.hbias), step):
        np.testing.assert_allclose(a, s + d, rtol=0, atol=1e-12)


def test_init_data_puts_the_visible_biases_at_the_data_logits():
    data = np.repeat(DATA, 2, axis=0)
    data[:, 0] = 0  # a pixel never on: clipped at 1e-4
    res = fit(data, 4, n_updates=1, learning_rate=1e-12, **FAST, evaluation=None)
    p = np.clip(data.mean(axis=0), 1e-4, 1 - 1e-4)
    np.testing.assert_allclose(res.params.vbias, np.log(p / (1 - p)), atol=1e-6)
    normal = fit(data, 4, n_updates=1, learning_rate=1e-12, **FAST, evaluation=None, params=Init("normal", scale=0.5))
    assert np.abs(normal.params.hbias).max() > 0.01
    with pytest.raises(ValueError, match="start must be"):
        fit(data, 4, n_updates=1, **FAST, params=Init("zeros"))


@pytest.mark.parametrize("momentum", [0.0, 0.5])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shape", [(7, 3), (40, 24), (300, 200)])
def test_compiled_centered_step_moves_the_parameters_as_numpy_does(shape, dtype, momentum, monkeypatch):
    """Centered SGD (plain or with momentum) maps its step in one compiled call of NumPy's arithmetic: the same
    parameters, bit for bit, over two updates (the second one with a velocity)."""
    from pymc_rbm.kernels import compiled
    from pymc_rbm.training import optimizers

    if not compiled.available():
        pytest.skip("needs Numba")
    rng = np.random.default_rng(0)
    n_v, n_h = shape
    arrays = [rng.normal(size=s).astype(dtype) for s in ((n_v, n_h), (n_v,), (n_h,))]
    grad = Gradient(*(rng.normal(size=a.shape).astype(dtype) * 1e-3 for a in arrays))
    offsets = rng.random(n_v).astype(dtype), rng.random(n_h).astype(dtype)

    def moved():
        updater = optimizers.Updater(optimizers.SGD(momentum), 0.0123, "cosine", 100)
        out = tuple(a.copy() for a in arrays)
        state = updater.init(out)
        updater.apply(state, out, grad, 7, offsets)
        updater.apply(state, out, Gradient(*(g[::-1].copy() for g in grad)), 8, offsets)
        return out

    assert optimizers._one_call_step(arrays, grad, offsets)
    fast = moved()
    monkeypatch.setattr(optimizers, "_one_call_step", lambda *args: False)
    for got, want in zip(fast, moved()):
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
