"""The result types of the estimators: every log Z estimate, and the moments of an RBM."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

__all__ = ["LogPartitionEstimate", "Moments", "fingerprint_of"]


class Moments(NamedTuple):
    """First and mixed second moments of an RBM, ``⟨v⟩``, ``⟨h⟩`` and ``⟨v hᵀ⟩``, however obtained.

    What the approximations return (naive and mixture mean field, TAP,
    Bethe) and the statistics of samples (the training's data and model
    terms); :class:`~pymc_rbm.enumeration.ExactMoments`, a ``Moments``
    too, is what enumeration computes exactly.

    Attributes
    ----------
    v : ndarray of shape (n_visible,)
        ``⟨v_i⟩``.
    h : ndarray of shape (n_hidden,)
        ``⟨h_j⟩``.
    vh : ndarray of shape (n_visible, n_hidden)
        ``⟨v_i h_j⟩``, the derivative of ``log Z`` with respect to ``W``.
    """

    v: np.ndarray
    h: np.ndarray
    vh: np.ndarray


#: What a :class:`LogPartitionEstimate` can be (its ``kind``).
KINDS = ("estimate", "exact", "approximation", "lower bound")


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
    kind : {"estimate", "exact", "approximation", "lower bound"}, default "estimate"
        What the number is: a stochastic ``"estimate"`` (with ``stderr``),
        the ``"exact"`` value, a deterministic ``"approximation"`` with no
        error bound and on neither side of ``log Z`` for sure (TAP, Bethe),
        or a deterministic ``"lower bound"`` (naive and mixture mean field).
        The last two show in the ``repr``: a ``stderr`` of 0 does not make
        them exact, and on the MNIST models they are off by several to tens
        of nats (docs/estimators.md).
    diagnostics : dict
        Method-specific: iterations and residual of fixed points, log
        importance weights and their ESS, adapted free energies, ...
    fingerprint : str, optional
        :meth:`~pymc_rbm.params.RBMParams.fingerprint` of the model it was
        computed for (set by every estimator); an estimate is refused for
        another model (:meth:`check_model`). None: unknown, not checked.

    Notes
    -----
    ``float(estimate)`` is ``estimate.log_z``, so an estimate can be passed
    wherever a number is expected (for example ``RBM(..., log_partition=est)``).
    """

    log_z: float
    method: str
    stderr: float = 0.0
    interval: tuple[float, float] | None = None
    kind: str = "estimate"
    diagnostics: dict = field(default_factory=dict, compare=False)
    fingerprint: str | None = field(default=None, compare=False)

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {self.kind!r}")

    def check_model(self, params) -> None:
        """Raise a ValueError when this estimate was computed for a model other than ``params``.

        Parameters
        ----------
        params : RBMParams
        """
        if self.fingerprint is not None and self.fingerprint != params.fingerprint():
            raise ValueError(
                f"this {self.method!r} estimate of log Z (log_z = {self.log_z:.6g}) was computed for another "
                f"model than the one given (fingerprint {self.fingerprint[:12]}... against "
                f"{params.fingerprint()[:12]}...); estimate log Z of this model, or pass a plain number to "
                "override the check"
            )

    def __float__(self) -> float:
        return float(self.log_z)

    def __repr__(self) -> str:
        unc = f" ± {self.stderr:.3g}" if self.stderr else ""
        note = {"approximation": ", an approximation without error bound", "lower bound": ", a lower bound"}
        return f"LogPartitionEstimate(method={self.method!r}, log_z={self.log_z:.6f}{unc}{note.get(self.kind, '')})"



def fingerprint_of(model) -> str | None:
    """The fingerprint of an RBMParams, or of the one target of an annealing path (``models``); else None."""
    models = getattr(model, "models", [model])
    return models[0].fingerprint() if len(models) == 1 and hasattr(models[0], "fingerprint") else None
