"""The divergence guard of :func:`~pymc_rbm.training.fit`: when a learning rate too large has spoilt the run."""

from __future__ import annotations

import math
import os
import warnings

import numpy as np

from pymc_rbm.params import RBMParams

__all__ = ["Divergence", "DIVERGENCE_SCALE"]

#: Training stops as diverged when a parameter's magnitude exceeds this, or 100 times the largest
#: magnitude of the starting parameters if that is larger: no RBM worth sampling has such weights,
#: and a learning rate far too large gets there in a few updates.
DIVERGENCE_SCALE = 1e4


class Divergence:
    """Whether training diverged: non-finite or exploding parameters, or a collapsing log-likelihood."""

    def __init__(self, params: RBMParams, learning_rate: float):
        start = max(float(np.abs(a).max()) for a in (params.W, params.vbias, params.hbias))
        self.scale = max(DIVERGENCE_SCALE, 100.0 * start)
        self.learning_rate = learning_rate
        self.drop = params.n_visible * math.log(2.0)
        self.reason, self.at = "", 0

    def parameters(self, arrays, update: int) -> bool:
        """True (and the reason kept) when the parameters after ``update`` are no longer usable."""
        self.at = update
        largest = [float(np.abs(a).max()) for a in arrays]  # NaN or inf where an entry is: one pass each
        if not all(math.isfinite(x) for x in largest):
            self.reason = "the parameters became non-finite"
        elif max(largest) > self.scale:
            self.reason = f"a parameter reached {max(largest):.3g} (beyond {self.scale:.3g})"
        return bool(self.reason)

    def log_likelihood(self, ll: float, best: float, update: int) -> bool:
        """True when a record collapsed: non-finite, or ``n_visible · log 2`` nats below the best one."""
        self.at = update
        if not math.isfinite(ll):
            self.reason = f"the recorded log-likelihood became {ll}"
        elif math.isfinite(best) and ll < best - self.drop:
            self.reason = (
                f"the recorded log-likelihood fell to {ll:.6g} from its best {best:.6g} (a drop of more than "
                f"n_visible · log 2 = {self.drop:.4g} nats)"
            )
        return bool(self.reason)

    def warn(self, best_update) -> None:
        kept = (
            f"best_params are those of update {best_update}, the best recorded log-likelihood"
            if best_update is not None
            else "nothing was recorded: best_params are the last parameters before it"
        )
        warnings.warn(
            f"fit stopped at update {self.at}: {self.reason}. The learning rate {self.learning_rate:g} is too "
            f"large for this model and method: try {self.learning_rate / 10:g} or less. params are the last "
            f"finite parameters; {kept} (stop_reason='diverged')",
            RuntimeWarning,
            skip_file_prefixes=(os.path.dirname(os.path.abspath(__file__)),),  # the caller of fit
        )
