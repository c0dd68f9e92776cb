"""Training RBMs: CD-k, PCD-k, parallel tempering and deterministic gradients.

:func:`~pymc_rbm.training.fitting.fit` trains by gradient ascent on the log-likelihood. The model term of
the gradient comes from Markov chains driven by the kernels of
:mod:`pymc_rbm.kernels` (block Gibbs, flip-the-state, the α mixture; the same
kernels ``pm.sample`` uses), optionally with wormhole moves (Hinton, Welling & Mnih 2003), or
from a deterministic moment computation of :mod:`pymc_rbm.estimators` (exact
enumeration, naive mean field, TAP, Bethe, mixture mean field). The result's
``params`` is an :class:`~pymc_rbm.params.RBMParams` ready for
:class:`pymc_rbm.RBM`. Categorical (Potts) and Gaussian visible units train
through the same loop with CD, PCD and the exact gradient
(:mod:`~pymc_rbm.training.families`).

- :mod:`~pymc_rbm.training.gradients`: data and model terms, exact and approximate gradients.
- :mod:`~pymc_rbm.training.families`: the visible units' sufficient statistics, sweep target and exact moments.
- :mod:`~pymc_rbm.training.negative`: the negative phases (CD, PCD, PT, deterministic; any family's CD, PCD, exact).
- :mod:`~pymc_rbm.training.chains`: the Markov chains of the sampling phases (block Gibbs, any kernel, wormholes).
- :mod:`~pymc_rbm.training.fitting`: :func:`~pymc_rbm.training.fitting.fit` (set-up, loop, result) and the training loop.
- :mod:`~pymc_rbm.training.options`: the records of ``fit``'s options (method, evaluation, checkpoints, start).
- :mod:`~pymc_rbm.training.run`: the set-up of a run: its options checked, the phase, start and chains made.
- :mod:`~pymc_rbm.training.records`: the log-likelihood records (exact or AIS sized to a budget) and the history.
- :mod:`~pymc_rbm.training.divergence`: when a learning rate too large has spoilt a run.
- :mod:`~pymc_rbm.training.optimizers`: gradient ascent with momentum, Adam, learning-rate schedules, clipping,
  and the update of each step.
- :mod:`~pymc_rbm.training.trajectory`: the parameters kept along training, checkpoints and resuming.
- :mod:`~pymc_rbm.training.boltzmann`: learning a fully connected Boltzmann
  machine (Lawrence, Bishop & Jordan 1998, §5.1).

Everything here is NumPy; nothing imports PyMC.
"""

from pymc_rbm.training.boltzmann import BMFit, bm_kl_divergence, bm_model_moments, fit_boltzmann_machine
from pymc_rbm.training.chains import gibbs_sweeps_from_visible, gibbs_sweeps_visible_first
from pymc_rbm.training.fitting import (
    EXACT_EVAL_MAX_BITS,
    METHODS,
    EvaluationFailed,
    FitResult,
    History,
    TrainingStep,
    fit,
)
from pymc_rbm.training.families import BernoulliFamily, CategoricalFamily, GaussianFamily, family_for, family_of
from pymc_rbm.training.gradients import (
    DETERMINISTIC_METHODS,
    Gradient,
    center,
    centered_from_ordinary,
    centered_gradient,
    centered_update,
    data_statistics,
    gradient_from_statistics,
    log_likelihood_gradient,
    model_statistics,
    sample_statistics,
)
from pymc_rbm.training.negative import (
    SAMPLING_METHODS,
    NegativePhase,
    FAMILY_METHODS,
    contrastive_divergence,
    centered_phase_gradient,
    deterministic,
    family_phase,
    parallel_tempering,
    persistent_contrastive_divergence,
    phase_gradient,
)
from pymc_rbm.training.optimizers import SGD, Adam, Ascent
from pymc_rbm.training.options import CD, PCD, PT, Checkpoints, Evaluation, Init, Moments
from pymc_rbm.training.trajectory import Trajectory, load_checkpoint

__all__ = [
    "fit",
    "EvaluationFailed",
    "FitResult",
    "History",
    "TrainingStep",
    "METHODS",
    "SAMPLING_METHODS",
    "DETERMINISTIC_METHODS",
    "FAMILY_METHODS",
    "BernoulliFamily",
    "CategoricalFamily",
    "GaussianFamily",
    "family_of",
    "family_for",
    "family_phase",
    "EXACT_EVAL_MAX_BITS",
    "Gradient",
    "data_statistics",
    "gradient_from_statistics",
    "model_statistics",
    "sample_statistics",
    "log_likelihood_gradient",
    "center",
    "centered_gradient",
    "centered_update",
    "centered_from_ordinary",
    "centered_phase_gradient",
    "SGD",
    "Adam",
    "Ascent",
    "CD",
    "PCD",
    "PT",
    "Moments",
    "Evaluation",
    "Checkpoints",
    "Init",
    "Trajectory",
    "load_checkpoint",
    "gibbs_sweeps_from_visible",
    "NegativePhase",
    "contrastive_divergence",
    "persistent_contrastive_divergence",
    "parallel_tempering",
    "deterministic",
    "gibbs_sweeps_visible_first",
    "phase_gradient",
    "BMFit",
    "bm_model_moments",
    "bm_kl_divergence",
    "fit_boltzmann_machine",
]
