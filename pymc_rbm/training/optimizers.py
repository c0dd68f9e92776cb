"""Optimisers of :func:`~pymc_rbm.training.fit`: gradient ascent with momentum, Adam, schedules, clipping.

An optimiser is a small frozen object with two methods and no hidden state:
``init(arrays) -> state`` makes its state (a dict of arrays, saved with the
checkpoints of :mod:`~pymc_rbm.training.trajectory`), and
``apply(state, arrays, gradient, learning_rate)`` moves the parameter arrays
in place by one ascent step. :func:`schedule_factor` gives the learning-rate
multiplier of an update; :func:`clip` rescales a gradient to a largest norm.
An :class:`Updater` makes one update of ``fit`` from them: schedule,
clipping, weight decay, then the optimiser's step (in the centered
parameters, mapped to ``(W, vbias, hbias)``, with centered gradients).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from pymc_rbm.kernels import compiled, training_steps
from pymc_rbm.training.gradients import Gradient, centered_update
from pymc_rbm.validation import check_real

__all__ = ["Ascent", "SGD", "Adam", "OPTIMIZERS", "DEFAULT_MOMENTUM", "make_optimizer", "SCHEDULES", "check_schedule", "schedule_factor", "clip", "Updater"]

#: Named learning-rate schedules: the multiplier of update ``u`` (0-based) of ``n``.
SCHEDULES = ("constant", "linear", "cosine", "exponential")

#: The momentum of ``optimizer="sgd"`` when none is given. Hinton (2010) recommends 0.5 rising to 0.9; with
#: the learning rate fixed, 0.5 trains MNIST models 14 nats better in 2000 updates and keeps the learning rates that
#: work without momentum stable (0.9 trains better still there, but diverges at learning rates that work without).
DEFAULT_MOMENTUM = 0.5

#: ``"exponential"`` and ``"linear"`` end at this fraction of the learning rate.
FINAL_FRACTION = 0.01


@dataclass(frozen=True, kw_only=True)
class Ascent:
    """What every optimiser of :func:`~pymc_rbm.training.fit` shares: weight decay, clipping, schedule, averaging,
    centering (keyword-only fields of :class:`SGD` and :class:`Adam`).

    Parameters
    ----------
    weight_decay : float, default 0
        L2 penalty on ``W``: ``weight_decay · W`` is subtracted from its gradient.
    max_grad_norm : float, optional
        Gradient clipping: a gradient estimate longer than this is rescaled
        to this norm (before weight decay).
    schedule : {"constant", "linear", "cosine", "exponential"} or callable, optional
        The learning rate of update ``u`` (0-based) is ``fit``'s
        ``learning_rate`` times :func:`schedule_factor`; a callable is
        ``(u, n_updates) -> factor``. Default: ``"constant"`` where the run is
        averaged (``average``, the default of the sampling methods: the mean
        of the oscillating parameters settles them), ``"cosine"`` where not
        (the decay to 0 lets the last parameters settle: at a constant rate
        without averaging they oscillate about the best ones, -7.2 at the end
        of a run on 4x4 bars and stripes whose best record was -3.9). A run on
        a decaying schedule resumes from a checkpoint with its own
        ``n_updates`` only; ``"constant"`` resumes for longer.
    average : float in [0, 1], optional
        Polyak-Ruppert averaging: ``result.params`` is the mean of the
        parameters after each of the last ``ceil(average · n_updates)``
        updates (in the flat coordinates of the family); the parameters after
        the last update are kept as ``result.raw_params``. The records and
        ``best_params`` see what a stop at their update would return (the
        running mean once averaging has begun); the trajectory and the
        callback see the raw parameters. Checkpoints keep the running mean, so
        a resumed run continues it exactly. Default:
        :data:`~pymc_rbm.training.run.DEFAULT_AVERAGE` (0.5, the last half) for
        the sampling methods, at a constant rate: on 4x4 bars and stripes
        -3.534 against -3.638 for the cosine decay without averaging, on MNIST
        784x500 in 150 s -91.7 against -92.8 (``docs/training.md``, "Averaged
        parameters"); 0 (none) for the deterministic methods, whose gradients
        are not noisy. 0 turns it off.
    centered : bool, default True
        Centered gradient ascent (Montavon & Müller 2012; Melchior, Fischer &
        Wiskott 2016) with the batch's data means ``⟨v⟩``, ``⟨p(h|v)⟩`` as
        offsets, for every method
        (:func:`~pymc_rbm.training.gradients.center`); False: the ordinary gradient.
    """

    weight_decay: float = field(default=0.0, repr=False)
    max_grad_norm: float | None = field(default=None, repr=False)
    schedule: Any = field(default=None, repr=False)
    average: float | None = field(default=None, repr=False)
    centered: bool = field(default=True, repr=False)

    def __post_init__(self):
        object.__setattr__(self, "weight_decay", check_real(self.weight_decay, "weight_decay", 0.0))
        if self.max_grad_norm is not None:
            object.__setattr__(self, "max_grad_norm", check_real(self.max_grad_norm, "max_grad_norm", 0.0,
                                                                 lo_open=True))
        if self.schedule is not None:
            check_schedule(self.schedule)
        if self.average is not None:
            object.__setattr__(self, "average", check_real(self.average, "average", 0.0, 1.0))
        object.__setattr__(self, "centered", bool(self.centered))


@dataclass(frozen=True)
class SGD(Ascent):
    """Gradient ascent with (heavy-ball) momentum: ``velocity = momentum · velocity + lr · g``, ``θ += velocity``.

    Parameters
    ----------
    momentum : float in [0, 1), default :data:`DEFAULT_MOMENTUM` (0.5)
        Classical momentum (Hinton 2010); 0 is plain gradient ascent.
    weight_decay, max_grad_norm, schedule, average, centered
        Keyword-only: :class:`Ascent`'s.
    """

    momentum: float = DEFAULT_MOMENTUM

    def __post_init__(self):
        super().__post_init__()
        object.__setattr__(self, "momentum", check_real(self.momentum, "momentum", 0.0, 1.0, hi_open=True))

    def init(self, arrays) -> dict:
        """The optimiser's state for the parameter ``arrays``."""
        return {f"velocity_{i}": np.zeros_like(a) for i, a in enumerate(arrays)} if self.momentum else {}

    def velocity(self, state: dict, gradient, learning_rate: float) -> list:
        """The velocities of ``state`` moved in place by ``gradient`` (momentum > 0): ``v = m v + lr g``."""
        out = []
        for i, g in enumerate(gradient):
            vel = state[f"velocity_{i}"]
            vel *= self.momentum
            vel += learning_rate * g
            out.append(vel)
        return out

    def apply(self, state: dict, arrays, gradient, learning_rate: float) -> None:
        if self.momentum:
            for p, vel in zip(arrays, self.velocity(state, gradient, learning_rate)):
                p += vel
            return
        for p, g in zip(arrays, gradient):
            p += learning_rate * g


@dataclass(frozen=True)
class Adam(Ascent):
    """Adam (Kingma & Ba 2015) for ascent: ``θ += lr · m̂ / (√v̂ + eps)`` with bias-corrected moments.

    Parameters
    ----------
    beta1 : float in [0, 1), default 0.9
    beta2 : float in [0, 1), default 0.999
    eps : float > 0, default 1e-8
    weight_decay, max_grad_norm, schedule, average, centered
        Keyword-only: :class:`Ascent`'s.
    """

    beta1: float = 0.9
    beta2: float = 0.999
    eps: float = 1e-8

    def __post_init__(self):
        super().__post_init__()
        object.__setattr__(self, "beta1", check_real(self.beta1, "beta1", 0.0, 1.0, hi_open=True))
        object.__setattr__(self, "beta2", check_real(self.beta2, "beta2", 0.0, 1.0, hi_open=True))
        object.__setattr__(self, "eps", check_real(self.eps, "eps", 0.0, lo_open=True))

    def init(self, arrays) -> dict:
        """The optimiser's state for the parameter ``arrays``."""
        state = {"t": np.zeros(())}
        for i, a in enumerate(arrays):
            state[f"m_{i}"], state[f"v_{i}"] = np.zeros_like(a), np.zeros_like(a)
        return state

    def apply(self, state: dict, arrays, gradient, learning_rate: float) -> None:
        state["t"] += 1
        t = float(state["t"])
        step = learning_rate * math.sqrt(1.0 - self.beta2**t) / (1.0 - self.beta1**t)
        for i, (p, g) in enumerate(zip(arrays, gradient)):
            m, v = state[f"m_{i}"], state[f"v_{i}"]
            m *= self.beta1
            m += (1.0 - self.beta1) * g
            v *= self.beta2
            v += (1.0 - self.beta2) * np.square(g)
            p += step * m / (np.sqrt(v) + self.eps)


#: The optimisers ``fit(optimizer=...)`` knows by name, with their defaults.
OPTIMIZERS = {"sgd": SGD, "adam": Adam}


def make_optimizer(optimizer) -> Ascent:
    """The optimiser record of ``fit(optimizer=...)``: ``"sgd"`` is ``SGD()``, ``"adam"`` ``Adam()``, a record itself.

    Raises
    ------
    ValueError
        For an unknown name.
    """
    if isinstance(optimizer, Ascent):
        return optimizer
    if isinstance(optimizer, str) and optimizer in OPTIMIZERS:
        return OPTIMIZERS[optimizer]()
    raise ValueError(f"optimizer must be 'sgd', 'adam', or an SGD or Adam record; got {optimizer!r}")


def check_schedule(schedule) -> str | Callable:
    """``schedule`` validated: a name of :data:`SCHEDULES` or a callable ``(update, n_updates) -> factor``."""
    if schedule is None:
        return "constant"
    if callable(schedule):
        return schedule
    if isinstance(schedule, str) and schedule in SCHEDULES:
        return schedule
    raise ValueError(f"schedule must be one of {SCHEDULES} or a callable (update, n_updates) -> factor; "
                     f"got {schedule!r}")


def schedule_factor(schedule, update: int, n_updates: int) -> float:
    """The learning-rate multiplier of update ``update`` (0-based) of ``n_updates``.

    ``"constant"``: 1; ``"linear"``: from 1 to :data:`FINAL_FRACTION` at the last update;
    ``"cosine"``: ``(1 + cos(π u / n)) / 2``; ``"exponential"``: ``FINAL_FRACTION ** (u / n)``;
    a callable: its value, which must be finite and non-negative.
    """
    x = update / max(n_updates, 1)
    if schedule == "constant":
        return 1.0
    if schedule == "linear":
        return 1.0 - (1.0 - FINAL_FRACTION) * x
    if schedule == "cosine":
        return 0.5 * (1.0 + math.cos(math.pi * x))
    if schedule == "exponential":
        return FINAL_FRACTION**x
    factor = float(schedule(update, n_updates))
    if not math.isfinite(factor) or factor < 0:
        raise ValueError(f"schedule({update}, {n_updates}) returned {factor}; it must be finite and >= 0")
    return factor


def clip(gradient: Gradient, max_norm: float | None) -> tuple[Gradient, float]:
    """``gradient`` rescaled to norm ``max_norm`` when it is longer; also its norm before clipping."""
    norm = gradient.norm()
    if max_norm is None or norm <= max_norm:
        return gradient, norm
    scale = max_norm / norm
    return Gradient(*(a * scale for a in gradient)), norm


class Updater:
    """One parameter update of :func:`~pymc_rbm.training.fit`: schedule, clipping, weight decay, then the step.

    Parameters
    ----------
    optimizer : SGD or Adam
    learning_rate : float
    schedule : str or callable
        The schedule in force (:func:`check_schedule`; the optimiser's, or the default its averaging implies).
    n_updates : int
        Length of the run, for the schedule.
    """

    def __init__(self, optimizer: Ascent, learning_rate: float, schedule, n_updates: int):
        self.optimizer = optimizer
        self.learning_rate, self.n_updates = learning_rate, n_updates
        self.schedule = check_schedule(schedule)
        self.weight_decay, self.max_grad_norm = optimizer.weight_decay, optimizer.max_grad_norm

    def config(self) -> dict:
        """The options, as a checkpoint's configuration records them."""
        return {"optimizer": repr(self.optimizer), "learning_rate": self.learning_rate,
                "lr_schedule": self.schedule if isinstance(self.schedule, str) else "callable",
                "weight_decay": self.weight_decay, "max_grad_norm": self.max_grad_norm, "n_updates": self.n_updates}

    def init(self, arrays) -> dict:
        """The optimiser's state for the parameter ``arrays``."""
        return self.optimizer.init(arrays)

    def apply(self, state: dict, arrays, grad: Gradient, update: int, offsets=None) -> float:
        """Move ``arrays`` in place by the step of ``grad`` at update ``update`` (0-based); its norm before clipping.

        With ``offsets`` ``(μ, λ)``, ``grad`` is a centered gradient: the
        optimiser steps in the centered parameters and
        :func:`~pymc_rbm.training.gradients.centered_update` maps the step.
        """
        grad, norm = clip(grad, self.max_grad_norm)
        if self.weight_decay:
            grad = grad._replace(W=grad.W - self.weight_decay * arrays[0])
        lr = self.learning_rate * schedule_factor(self.schedule, update, self.n_updates)
        sgd = offsets is not None and isinstance(self.optimizer, SGD)
        plain = sgd and not self.optimizer.momentum
        if sgd and type(lr) is float and _one_call_step(arrays, grad, offsets):
            if plain:
                training_steps.centered_ascent_step(arrays, grad, offsets, lr)  # the values of the loop below, no FP warnings
            else:  # the step is the new velocity (0 + velocity below): map it with a unit learning rate
                with np.errstate(over="ignore", invalid="ignore"):
                    velocity = self.optimizer.velocity(state, grad, lr)
                training_steps.centered_ascent_step(arrays, Gradient(*velocity), offsets, 1.0)
            return norm
        with np.errstate(over="ignore", invalid="ignore"):  # a divergence is reported by the caller
            if offsets is None:
                self.optimizer.apply(state, arrays, grad, lr)
            elif plain:  # the step is lr · grad: map grad
                for p, g in zip(arrays, centered_update(grad, *offsets)):
                    p += lr * g
            else:
                step = [np.zeros_like(a) for a in arrays]
                self.optimizer.apply(state, step, grad, lr)
                for p, g in zip(arrays, centered_update(Gradient(*step), *offsets)):
                    p += g
        return norm


def _one_call_step(arrays, grad, offsets) -> bool:
    """Whether the centered step runs as one compiled call (:func:`~pymc_rbm.kernels.training_steps.centered_ascent_step`,
    NumPy's arithmetic at any size): Numba installed, every array float32 or float64 of one dtype, C-ordered."""
    W = arrays[0]
    return compiled.available() and W.dtype in (np.float64, np.float32) and all(
        a.dtype == W.dtype and a.flags.c_contiguous for a in (*arrays, *grad, *offsets))
