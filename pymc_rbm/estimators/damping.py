"""The damping of a fixed point iteration, grown per start where it oscillates: shared by TAP and Bethe."""

from __future__ import annotations

import numpy as np

__all__ = ["AdaptiveDamping"]

_WINDOW = 25  # iterations between checks of the adaptive damping
_STALL = 0.5  # an oscillating start whose residual fell less than this factor over a window is damped harder
_OSCILLATION = -0.3  # mean cosine of successive updates below which a start oscillates
_MAX_DAMPING = 0.99


class AdaptiveDamping:
    """Per-start damping that grows where a fixed point iteration oscillates.

    Shared by the TAP and Bethe iterations. Each iteration reports, per
    active start, the cosine between its last two (undamped) updates; every
    ``_WINDOW`` iterations a start whose mean cosine over the window was
    below ``_OSCILLATION`` (its updates keep reversing) and whose residual
    did not fall below ``_STALL`` times the window's first gets a stronger
    damping: ``1 - d ← (1 - d) / 2``, at most ``_MAX_DAMPING``. Slow but
    monotone convergence (positive cosines) is left alone.

    Parameters
    ----------
    n : int
        Number of starts.
    damping : float
        Initial damping of every start.
    enabled : bool
        When False the damping never changes.
    """

    def __init__(self, n: int, damping: float, enabled: bool = True):
        self.d = np.full(n, float(damping))
        self.enabled = enabled
        self._window_start = np.full(n, np.inf)
        self._cos_sum = np.zeros(n)
        self._prev = None

    def __getitem__(self, idx):
        return self.d[idx]

    def update(self, it: int, active: np.ndarray, res: np.ndarray, delta: np.ndarray) -> None:
        """Record iteration ``it``: residuals ``res`` and undamped updates ``delta`` of the ``active`` starts."""
        if not self.enabled:
            return
        flat = delta.reshape(delta.shape[0], -1)
        if self._prev is None:
            self._prev = np.zeros((self.d.size, flat.shape[1]))
        prev = self._prev[active]
        norm = np.sqrt((flat * flat).sum(axis=1) * (prev * prev).sum(axis=1))
        with np.errstate(invalid="ignore", divide="ignore"):
            cos = np.where(norm > 0.0, (flat * prev).sum(axis=1) / norm, 0.0)
        self._cos_sum[active] += cos
        self._prev[active] = flat
        first = np.isinf(self._window_start[active])
        self._window_start[active[first]] = res[first]
        if it % _WINDOW:
            return
        oscillating = (self._cos_sum[active] / _WINDOW < _OSCILLATION) & (res > _STALL * self._window_start[active])
        stuck = active[oscillating]
        self.d[stuck] = np.minimum(1.0 - 0.5 * (1.0 - self.d[stuck]), _MAX_DAMPING)
        self._window_start[active] = res
        self._cos_sum[active] = 0.0
