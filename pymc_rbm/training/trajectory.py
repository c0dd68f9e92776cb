"""Saved trajectories of :func:`~pymc_rbm.training.fit`: the parameters at spaced updates, and checkpoints.

:class:`Trajectory` is what ``fit`` keeps in memory: the parameters at the
updates of ``save_updates`` (log-spaced by default, :func:`log_spaced_updates`).
With ``checkpoint_dir`` each of them is also written to disk as
``update_<n>.npz``: the keys of the parameters (``W``, ``vbias`` and ``hbias``,
and ``sigma`` for a Gaussian RBM; so the ``load`` of their class, e.g.
:meth:`RBMParams.load <pymc_rbm.params.RBMParams.load>`, reads it as a model)
and everything a run needs to go on exactly where it was: the persistent
chains, the optimiser's state, the bit-generator states of the training and
evaluation streams, the batch order of the current epoch and the position in
it. ``fit(data, resume=path)`` continues from such a file (or the latest one of a
directory), draw for draw as the run that wrote it would have gone on.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from pymc_rbm.categorical.params import CategoricalRBMParams
from pymc_rbm.gaussian import GaussianRBMParams
from pymc_rbm.kernels.state import RBMState
from pymc_rbm.kernels.tempering import TemperedState
from pymc_rbm.params import RBMParams
from pymc_rbm.validation import check_positive_int, open_npz, read_npz_array

__all__ = ["Trajectory", "Checkpoint", "log_spaced_updates", "check_save_updates", "save_checkpoint",
           "load_checkpoint", "latest_checkpoint", "DEFAULT_SAVED", "TrajectoryRecorder", "check_resume", "jsonable"]

#: Saved points of the default trajectory (log-spaced over the run, with the start and the end).
DEFAULT_SAVED = 20

_CHAIN_TYPES = {"RBMState": RBMState, "TemperedState": TemperedState}

#: The parameter classes a checkpoint may hold, by the name written in it (none written: binary).
_PARAMS_TYPES = {cls.__name__: cls for cls in (RBMParams, CategoricalRBMParams, GaussianRBMParams)}


def log_spaced_updates(n_updates: int, n_saved: int = DEFAULT_SAVED) -> np.ndarray:
    """About ``n_saved`` update numbers log-spaced in ``[1, n_updates]``, with 0 and ``n_updates``.

    Examples
    --------
    >>> log_spaced_updates(1000, 5).tolist()
    [0, 1, 6, 32, 178, 1000]
    """
    n_updates = check_positive_int(n_updates, "n_updates")
    points = np.unique(np.round(np.geomspace(1, n_updates, max(n_saved, 2))).astype(np.int64))
    return np.concatenate([[0], points])


def check_save_updates(save_updates, n_updates: int) -> np.ndarray:
    """``fit``'s ``save_updates`` as sorted unique update numbers.

    None: :func:`log_spaced_updates` (:data:`DEFAULT_SAVED` points); an int
    ``n``: ``n`` log-spaced points (0: none); an array: those updates (each in
    ``[0, n_updates]``).
    """
    if save_updates is None:
        return log_spaced_updates(n_updates)
    if isinstance(save_updates, (bool, np.bool_)):
        raise ValueError(f"save_updates must be None, an int or update numbers, got {save_updates!r}")
    if np.ndim(save_updates) == 0:
        n = check_positive_int(save_updates, "save_updates", minimum=0)
        return log_spaced_updates(n_updates, n) if n else np.zeros(0, dtype=np.int64)
    arr = np.asarray(save_updates)
    if arr.ndim != 1 or (arr.size and not np.issubdtype(arr.dtype, np.integer)):
        raise ValueError(f"save_updates must be a 1-d array of update numbers (integers), got {save_updates!r}")
    if arr.size and (arr.min() < 0 or arr.max() > n_updates):
        raise ValueError(f"save_updates must lie in [0, n_updates = {n_updates}], got {arr.min()}..{arr.max()}")
    return np.unique(arr.astype(np.int64))


@dataclass
class Trajectory:
    """The parameters kept along training.

    Attributes
    ----------
    updates : list of int
        The updates after which parameters were kept (0: the start).
    params : list of RBMParams
        The parameters at those updates: a ladder of models from the start to
        the end, whose log-likelihoods show the training curve.
    paths : list of str
        The checkpoint files written (empty without ``checkpoint_dir``).
    """

    updates: list = field(default_factory=list)
    params: list = field(default_factory=list)
    paths: list = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.updates)


@dataclass
class Checkpoint:
    """Everything :func:`~pymc_rbm.training.fit` needs to continue a run exactly (read by :func:`load_checkpoint`).

    Attributes
    ----------
    params : RBMParams, CategoricalRBMParams or GaussianRBMParams
    update, epoch : int
    chains : RBMState, TemperedState or None
    optimizer_state : dict of str to ndarray
    train_rng, eval_rng : dict
        ``bit_generator.state`` of the two streams.
    batch_order : ndarray or None
        The current epoch's order of the rows (None: batch learning or none drawn yet).
    batch_position : int
        Batches of the current epoch already used.
    config : dict
        The options that must not change on resume (method, k, batch size...).
    """

    params: RBMParams
    update: int
    epoch: int
    chains: Any
    optimizer_state: dict
    train_rng: dict
    eval_rng: dict
    batch_order: np.ndarray | None
    batch_position: int
    config: dict


def save_checkpoint(directory, cp: Checkpoint) -> str:
    """Write ``cp`` as ``directory/update_<n>.npz`` (created if needed); return the path.

    The file is written under a temporary name and renamed, so that a run
    stopped while writing never leaves a truncated checkpoint behind.
    """
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    arrays = {name: getattr(cp.params, name) for name in cp.params.ARRAY_NAMES}
    arrays.update({"update": np.int64(cp.update), "epoch": np.int64(cp.epoch),
                   "batch_position": np.int64(cp.batch_position)})
    if cp.batch_order is not None:
        arrays["batch_order"] = np.asarray(cp.batch_order)
    meta = {"train_rng": cp.train_rng, "eval_rng": cp.eval_rng, "config": cp.config, "chains": None}
    if type(cp.params) is not RBMParams:
        meta["params"] = type(cp.params).__name__
    if cp.chains is not None:
        kind = type(cp.chains).__name__
        if kind not in _CHAIN_TYPES:
            raise TypeError(f"checkpoints keep RBMState or TemperedState chains, not {kind}")
        meta["chains"] = kind
        for name, value in cp.chains._asdict().items():
            if value is not None:
                arrays[f"chains__{name}"] = np.asarray(value)
    for name, value in cp.optimizer_state.items():
        arrays[f"optimizer__{name}"] = np.asarray(value)
    arrays["meta"] = np.array(json.dumps(meta, default=int))
    path = directory / f"update_{cp.update:08d}.npz"
    tmp = directory / f".update_{cp.update:08d}.tmp.npz"
    np.savez(tmp, **arrays)
    os.replace(tmp, path)
    return str(path)


def latest_checkpoint(path) -> Path:
    """``path`` itself if it is a file, else the checkpoint of the largest update in the directory."""
    p = Path(path)
    if p.is_dir():
        files = sorted(p.glob("update_*.npz"))
        if not files:
            raise ValueError(f"resume={str(path)!r}: the directory holds no checkpoint (update_*.npz)")
        return files[-1]
    if not p.exists() and not p.with_suffix(".npz").exists():
        raise ValueError(f"resume={str(path)!r}: no such checkpoint file or directory")
    return p


def load_checkpoint(path) -> Checkpoint:
    """Read a checkpoint of :func:`save_checkpoint` (a file, or the latest of a directory)."""
    p = latest_checkpoint(path)
    with open_npz(p, "a checkpoint written by fit(checkpoint_dir=...)") as f:
        if "meta" not in f.files:
            raise ValueError(f"{p} is not a checkpoint of fit (no 'meta' entry; it holds {sorted(f.files)})")
        arrays = {key: read_npz_array(f, key, p) for key in f.files}
    meta = json.loads(str(arrays.pop("meta")))
    chains = None
    if meta["chains"] is not None:
        fields = {k.split("__", 1)[1]: v for k, v in arrays.items() if k.startswith("chains__")}
        if "n_rounds" in fields:
            fields["n_rounds"] = int(fields["n_rounds"])
        chains = _CHAIN_TYPES[meta["chains"]](**fields)
    kind = _PARAMS_TYPES.get(meta.get("params", "RBMParams"))
    if kind is None:
        raise ValueError(f"{p} holds parameters of an unknown kind {meta['params']!r}")
    return Checkpoint(
        params=kind(*(arrays[name] for name in kind.ARRAY_NAMES), dtype=arrays["W"].dtype),
        update=int(arrays["update"]),
        epoch=int(arrays["epoch"]),
        chains=chains,
        optimizer_state={k.split("__", 1)[1]: v for k, v in arrays.items() if k.startswith("optimizer__")},
        train_rng=meta["train_rng"],
        eval_rng=meta["eval_rng"],
        batch_order=arrays.get("batch_order"),
        batch_position=int(arrays["batch_position"]),
        config=meta["config"],
    )


class TrajectoryRecorder:
    """Keeps the parameters at the saved updates, and writes them as checkpoints when asked.

    Parameters
    ----------
    saved : array_like of int
        The updates to keep (:func:`check_save_updates`).
    directory : str or os.PathLike or None
        Where :func:`save_checkpoint` writes each kept point; None: kept in memory only.
    """

    def __init__(self, saved, directory):
        self.saved = set(int(u) for u in saved)
        self.directory = directory
        self.kept = Trajectory()

    @property
    def paths(self):
        return self.kept.paths

    def keep(self, update: int, params, snapshot) -> None:
        """Keep ``params()`` (an :class:`~pymc_rbm.params.RBMParams`) if ``update`` is a saved one, and write
        ``snapshot(update)`` (a :class:`Checkpoint`); neither is called for the other updates."""
        if update not in self.saved:
            return
        self.kept.updates.append(update)
        self.kept.params.append(params())
        if self.directory is not None:
            self.kept.paths.append(save_checkpoint(self.directory, snapshot(update)))

    def result(self) -> Trajectory:
        """The points kept so far."""
        return self.kept


def check_resume(checkpoint, config: dict, params, chains, n_updates: int) -> None:
    """Refuse to resume a checkpoint with options other than its own, or with params / chains of the caller."""
    if params is not None or chains is not None:
        raise ValueError("resume= continues the checkpoint's parameters and chains: give neither params= nor chains=")
    ignore = {"n_updates"} if config.get("lr_schedule") == "constant" else set()
    changed = sorted(k for k in set(config) | set(checkpoint.config) - ignore
                     if k not in ignore and checkpoint.config.get(k) != jsonable(config.get(k)))
    if changed:
        detail = ", ".join(
            f"{k}: {checkpoint.config.get(k)!r} there, {jsonable(config.get(k))!r} here" for k in changed
        )
        raise ValueError(f"the checkpoint was written with other options ({detail}): resume with the same ones")
    if checkpoint.update >= n_updates:
        raise ValueError(f"the checkpoint is at update {checkpoint.update}; n_updates = {n_updates} leaves nothing "
                         "to do (n_updates counts all updates, those before the checkpoint included)")


def jsonable(x):
    """``x`` as it reads back from a checkpoint's JSON configuration."""
    return json.loads(json.dumps(x, default=str))
