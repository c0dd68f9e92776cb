"""The one result type that every log Z estimator returns."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["LogPartitionEstimate"]


@dataclass(frozen=True)
class LogPartitionEstimate:
    """An estimate of ``log Z`` with its uncertainty and diagnostics.

    Attributes
    ----------
    log_z : float
        The estimate (natural logarithm).
    method : str
        The estimator's name, as given to :func:`~pymc_rbm.estimators.log_partition`.
    stderr : float
        Standard error of a stochastic estimate; 0 for exact and
        deterministic methods.
    interval : tuple of float, optional
        A confidence interval where the method defines one (AIS: ±3σ).
    diagnostics : dict
        Method-specific: iterations and residual of fixed points, log
        importance weights and their ESS, adapted free energies, ...

    Notes
    -----
    ``float(estimate)`` is ``estimate.log_z``, so an estimate can be passed
    wherever a number is expected (for example ``RBM(..., log_partition=est)``).
    """

    log_z: float
    method: str
    stderr: float = 0.0
    interval: tuple[float, float] | None = None
    diagnostics: dict = field(default_factory=dict, compare=False)

    def __float__(self) -> float:
        return float(self.log_z)

    def __repr__(self) -> str:
        unc = f" ± {self.stderr:.3g}" if self.stderr else ""
        return f"LogPartitionEstimate(method={self.method!r}, log_z={self.log_z:.6f}{unc})"
