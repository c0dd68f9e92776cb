"""Temporary: the old private home of the annealing path, re-exporting its public names from their new modules.

Issue 25 moved them to :mod:`~pymc_rbm.estimators.path`, :mod:`~pymc_rbm.estimators.base_rate`,
:mod:`~pymc_rbm.estimators.schedules`, :mod:`~pymc_rbm.estimators.ladder` and
:mod:`~pymc_rbm.estimators.reliability`. Delete this module once nothing imports it.
"""

from pymc_rbm.estimators.base_rate import base_rate_vbias
from pymc_rbm.estimators.ladder import check_init, count_moves, initial_log_z
from pymc_rbm.estimators.path import (
    AnnealingPath,
    PathPoint,
    annealing_path,
    log_mean_exp,
    path_blas_threads,
    softplus_sum_,
)
from pymc_rbm.estimators.path_arguments import as_path, single_model_path
from pymc_rbm.estimators.reliability import COLLAPSED_SHARE, check_occupancy, check_start, spread_stderr
from pymc_rbm.estimators.schedules import (
    DEFAULT_SCHEDULE_SEGMENTS,
    PilotRun,
    check_schedule,
    default_schedule,
    pilot_run,
    thermodynamic_length,
)

__all__ = [
    "AnnealingPath",
    "PathPoint",
    "annealing_path",
    "as_path",
    "single_model_path",
    "path_blas_threads",
    "log_mean_exp",
    "softplus_sum_",
    "base_rate_vbias",
    "DEFAULT_SCHEDULE_SEGMENTS",
    "default_schedule",
    "check_schedule",
    "PilotRun",
    "pilot_run",
    "thermodynamic_length",
    "count_moves",
    "check_init",
    "initial_log_z",
    "COLLAPSED_SHARE",
    "check_occupancy",
    "spread_stderr",
    "check_start",
]
