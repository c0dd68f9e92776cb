"""Saved trajectories of :func:`~pymc_rbm.training.fit`: the parameters at spaced updates, and checkpoints.

:class:`Trajectory` is what ``fit`` keeps in memory: the parameters at the
updates of ``save_updates`` (log-spaced by default, :func:`log_spaced_updates`).
With ``checkpoint_dir`` each of them is also written to disk as
``update_<n>.npz``: the entries of a parameter file (``W``, ``vbias`` and
``hbias``, ``sigma`` for a Gaussian RBM, and the name of their class; so the
``load`` of their class, e.g. :meth:`RBMParams.load
<pymc_rbm.params.RBMParams.load>`, reads it as a model) and everything a run
needs to go on exactly where it was: the persistent chains, the optimiser's
state, the bit-generator states of the training and evaluation streams, the
batch order of the current epoch and the position in it, and a fingerprint of
the training data (:func:`data_fingerprint`). ``fit(data, resume=path)``
continues from such a file (or the latest one of a directory), draw for draw
as the run that wrote it would have gone on, after checking that the file is
whole (a damaged one is refused as ``"not a valid checkpoint: <path>: ..."``)
and that ``data`` are those it was trained on.
"""

from __future__ import annotations

import hashlib
import json
import os
import warnings
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
           "load_checkpoint", "latest_checkpoint", "DEFAULT_SAVED", "TrajectoryRecorder", "check_resume", "jsonable",
           "data_fingerprint", "check_checkpoint_state", "check_checkpoint_dir", "invalid_checkpoint"]

#: Saved points of the default trajectory (log-spaced over the run, with the start and the end).
DEFAULT_SAVED = 20

_CHAIN_TYPES = {"RBMState": RBMState, "TemperedState": TemperedState}

#: Chain fields kept as tuples of Python numbers (the PT ladder of training and its rejection accumulators:
#: exact floats that a cast of the chains' arrays to float32 leaves alone), read back as such.
_TUPLE_FIELDS = {"betas": float, "rejection_sum": float, "attempts": int}

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
        raise ValueError(f"Checkpoints.updates must be None, an int or update numbers, got {save_updates!r}")
    if np.ndim(save_updates) == 0:
        n = check_positive_int(save_updates, "Checkpoints.updates", minimum=0)
        return log_spaced_updates(n_updates, n) if n else np.zeros(0, dtype=np.int64)
    arr = np.asarray(save_updates)
    if arr.ndim != 1 or (arr.size and not np.issubdtype(arr.dtype, np.integer)):
        raise ValueError(f"Checkpoints.updates must be a 1-d array of update numbers (integers), got {save_updates!r}")
    if arr.size and (arr.min() < 0 or arr.max() > n_updates):
        raise ValueError(f"Checkpoints.updates must lie in [0, n_updates = {n_updates}], got {arr.min()}..{arr.max()}")
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
    data_fingerprint : str or None
        :func:`data_fingerprint` of the training data (None in checkpoints
        of earlier versions, which did not record it).
    path : str
        The file it was read from (``""`` for one not read from a file).
    average : dict of str to ndarray
        With ``fit(average=...)``: the running mean of the parameters in the
        flat coordinates (``mean_0``, ``mean_1``, ``mean_2``: ``W``, ``vbias``,
        ``hbias``) and the number of updates in it (``count``); else empty.
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
    data_fingerprint: str | None = None
    path: str = ""
    average: dict = field(default_factory=dict)


def data_fingerprint(v: np.ndarray) -> str:
    """A short hash of the training data as ``fit`` reads them: their dtype, shape and bytes (BLAKE2b, 32 hex digits).

    A checkpoint records it, so that a run is resumed on the data it was
    trained on, not on other data of the same shape.
    """
    h = hashlib.blake2b(digest_size=16)
    h.update(f"{v.dtype.str}{v.shape}".encode())
    h.update(np.ascontiguousarray(v).data)
    return h.hexdigest()


def save_checkpoint(directory, cp: Checkpoint) -> str:
    """Write ``cp`` as ``directory/update_<n>.npz`` (created if needed); return the path.

    The file is written under a temporary name and renamed, so that a run
    stopped while writing never leaves a truncated checkpoint behind.
    """
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    arrays = cp.params.stored_arrays()
    arrays.update({"update": np.int64(cp.update), "epoch": np.int64(cp.epoch),
                   "batch_position": np.int64(cp.batch_position)})
    if cp.batch_order is not None:
        arrays["batch_order"] = np.asarray(cp.batch_order)
    meta = {"train_rng": cp.train_rng, "eval_rng": cp.eval_rng, "config": cp.config, "chains": None,
            "data_fingerprint": cp.data_fingerprint}
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
    for name, value in cp.average.items():
        arrays[f"average__{name}"] = np.asarray(value)
    arrays["meta"] = np.array(json.dumps(meta, default=int))
    path = directory / f"update_{cp.update:08d}.npz"
    tmp = directory / f".update_{cp.update:08d}.tmp.npz"
    try:
        np.savez(tmp, **arrays)
        os.replace(tmp, path)
    except BaseException:  # a full disk, Ctrl-C: no partial file is left behind
        tmp.unlink(missing_ok=True)
        raise
    return str(path)


def check_checkpoint_dir(directory) -> None:
    """Refuse a ``checkpoint_dir`` that cannot be a directory (an existing file, or a file on its way), before a run.

    Nothing is created: the directory is made when the first checkpoint is written.
    """
    p = Path(directory)
    if p.exists() and not p.is_dir():
        raise ValueError(f"Checkpoints(directory={str(directory)!r}) is an existing file, not a directory: give a directory "
                         "(it is created when missing)")
    parent = next((a for a in p.absolute().parents if a.exists()), None)
    if parent is not None and not p.exists() and not parent.is_dir():
        raise ValueError(f"Checkpoints(directory={str(directory)!r}) cannot be created: {str(parent)!r} is a file, not a "
                         "directory")


def latest_checkpoint(path) -> Path:
    """``path`` itself if it is a file, else the checkpoint of the largest update in the directory."""
    p = Path(path)
    if p.is_dir():
        files = sorted(p.glob("update_*.npz"))
        if not files:
            raise ValueError(f"Checkpoints(resume={str(path)!r}): the directory holds no checkpoint (update_*.npz)")
        return files[-1]
    if not p.exists() and not p.with_suffix(".npz").exists():
        raise ValueError(f"Checkpoints(resume={str(path)!r}): no such checkpoint file or directory")
    return p


def load_checkpoint(path) -> Checkpoint:
    """Read a checkpoint of :func:`save_checkpoint` (a file, or the latest of a directory).

    Raises
    ------
    ValueError
        For a missing file or an empty directory, a file that is not a
        checkpoint, and a damaged one: ``"not a valid checkpoint: <path>:
        <what is wrong>"`` (its metadata not JSON, an entry missing, chains
        of an unknown kind, a malformed random state, ...).
    """
    p = latest_checkpoint(path)
    with open_npz(p, "a checkpoint written by fit(checkpoint_dir=...)") as f:
        if "meta" not in f.files:
            raise ValueError(f"{p} is not a checkpoint of fit (no 'meta' entry; it holds {sorted(f.files)})")
        arrays = {key: read_npz_array(f, key, p) for key in f.files}
    try:
        return _read_checkpoint(arrays, str(p))
    except _Damaged as err:
        raise invalid_checkpoint(p, err) from None


class _Damaged(Exception):
    """What is wrong with a checkpoint's contents (:func:`invalid_checkpoint` makes the ValueError)."""


def invalid_checkpoint(path, what) -> ValueError:
    """The error for a damaged checkpoint: ``"not a valid checkpoint: <path>: <what is wrong>"``."""
    return ValueError(f"not a valid checkpoint: {path}: {what}")


def _read_checkpoint(arrays: dict, path: str) -> Checkpoint:
    """The :class:`Checkpoint` of a file's entries, or :class:`_Damaged` saying what is wrong."""
    try:
        meta = json.loads(str(arrays.pop("meta")))
    except json.JSONDecodeError as err:
        raise _Damaged(f"its 'meta' entry is not JSON ({err})") from None
    if not isinstance(meta, dict):
        raise _Damaged(f"its 'meta' entry is a JSON {type(meta).__name__}, not an object")
    missing = sorted({"train_rng", "eval_rng", "config", "chains"} - set(meta))
    if missing:
        raise _Damaged(f"its 'meta' entry lacks {missing}")
    if not isinstance(meta["config"], dict):
        raise _Damaged(f"its configuration is a {type(meta['config']).__name__}, not a dict")
    kind = _PARAMS_TYPES.get(meta.get("params", "RBMParams"))
    if kind is None:
        raise _Damaged(f"it holds parameters of an unknown kind {meta['params']!r}")
    missing = sorted((set(kind.ARRAY_NAMES) | {"update", "epoch", "batch_position"}) - set(arrays))
    if missing:
        raise _Damaged(f"it lacks the entries {missing}")
    try:
        params = kind(*(arrays[name] for name in kind.ARRAY_NAMES), dtype=arrays["W"].dtype)
    except (TypeError, ValueError) as err:
        raise _Damaged(f"its parameters are not a {kind.__name__} ({err})") from None
    fingerprint = meta.get("data_fingerprint")
    if fingerprint is not None and not isinstance(fingerprint, str):
        raise _Damaged(f"its data fingerprint is {fingerprint!r}, not a str")
    batch_order = arrays.get("batch_order")
    if batch_order is not None and (batch_order.ndim != 1 or batch_order.dtype.kind not in "iu"):
        raise _Damaged(f"its batch order is of dtype {batch_order.dtype} and shape {batch_order.shape}, not row "
                       "numbers")
    return Checkpoint(
        params=params,
        update=_count(arrays, "update"),
        epoch=_count(arrays, "epoch"),
        chains=_chains(meta["chains"], arrays),
        optimizer_state={k.split("__", 1)[1]: v for k, v in arrays.items() if k.startswith("optimizer__")},
        train_rng=_rng_state(meta["train_rng"], "training"),
        eval_rng=_rng_state(meta["eval_rng"], "evaluation"),
        batch_order=batch_order,
        batch_position=_count(arrays, "batch_position"),
        config=meta["config"],
        data_fingerprint=fingerprint,
        path=path,
        average={k.split("__", 1)[1]: v for k, v in arrays.items() if k.startswith("average__")},
    )


def _count(arrays: dict, key: str) -> int:
    """The entry ``key`` as an int >= 0, or :class:`_Damaged`."""
    a = arrays[key]
    if a.ndim != 0 or a.dtype.kind not in "iu" or int(a) < 0:
        raise _Damaged(f"its {key!r} entry is {a!r}, not a count (an integer >= 0)")
    return int(a)


def _chains(kind, arrays: dict):
    """The persistent chains of kind ``kind`` (a name of :data:`_CHAIN_TYPES`, or None) from their entries."""
    if kind is None:
        return None
    if kind not in _CHAIN_TYPES:
        raise _Damaged(f"its chains are of an unknown kind {kind!r} (known: {sorted(_CHAIN_TYPES)})")
    fields = {k.split("__", 1)[1]: v for k, v in arrays.items() if k.startswith("chains__")}
    try:
        if "n_rounds" in fields:
            fields["n_rounds"] = int(fields["n_rounds"])
        for name, cast in _TUPLE_FIELDS.items():  # a PT ladder and its accumulators (absent in older checkpoints)
            if name in fields:
                if fields[name].ndim != 1:
                    raise ValueError(f"{name} has shape {fields[name].shape}, not one value per rung or pair")
                fields[name] = tuple(cast(x) for x in fields[name])
        return _CHAIN_TYPES[kind](**fields)
    except (TypeError, ValueError) as err:
        raise _Damaged(f"its chain entries {sorted(fields)} do not make a {kind} ({err})") from None


#: The bit generators whose states a checkpoint may hold.
_BIT_GENERATORS = ("PCG64", "PCG64DXSM", "Philox", "SFC64", "MT19937")


def _rng_state(state, stream: str) -> dict:
    """``state`` if a bit generator takes it (checked on a fresh one), else :class:`_Damaged`."""
    name = state.get("bit_generator") if isinstance(state, dict) else None
    if name not in _BIT_GENERATORS:
        raise _Damaged(f"its {stream} random state names no bit generator of {_BIT_GENERATORS} ({state!r:.200})")
    try:
        getattr(np.random, name)().state = state
    except (KeyError, TypeError, ValueError, OverflowError) as err:
        raise _Damaged(f"its {stream} random state is not a {name} state ({type(err).__name__}: {err})") from None
    return state


def check_checkpoint_state(checkpoint: Checkpoint, optimizer_state: dict, n_samples: int, batch_size) -> None:
    """Refuse a checkpoint whose optimiser state or place in the batch order does not fit the run it continues.

    Parameters
    ----------
    checkpoint : Checkpoint
    optimizer_state : dict of str to ndarray
        The state the run's optimiser starts from: the keys and shapes the checkpoint's must have.
    n_samples : int
    batch_size : int or None

    Raises
    ------
    ValueError
        ``"not a valid checkpoint: <path>: ..."``.
    """
    saved, path = checkpoint.optimizer_state, checkpoint.path
    if set(saved) != set(optimizer_state):
        raise invalid_checkpoint(path, f"its optimiser state holds {sorted(saved)}, but the optimiser "
                                       f"{checkpoint.config.get('optimizer')} keeps {sorted(optimizer_state)}")
    for key, want in optimizer_state.items():
        got = saved[key]
        if np.shape(got) != np.shape(want) or got.dtype.kind not in "fiu" or not np.all(np.isfinite(got)):
            raise invalid_checkpoint(path, f"its optimiser state {key!r} is {got.dtype} of shape {np.shape(got)} "
                                           f"(finite float of shape {np.shape(want)} expected)")
    order = checkpoint.batch_order
    if batch_size is None or order is None:
        return
    if not np.array_equal(np.sort(order), np.arange(n_samples)):
        raise invalid_checkpoint(path, f"its batch order is not an order of the {n_samples} rows")
    if not 0 <= checkpoint.batch_position <= -(-n_samples // batch_size):
        raise invalid_checkpoint(path, f"its batch position {checkpoint.batch_position} lies outside the epoch")


class TrajectoryRecorder:
    """Keeps the parameters at the saved updates, and writes them as checkpoints when asked.

    Parameters
    ----------
    saved : array_like of int
        The updates to keep (:func:`check_save_updates`).
    directory : str or os.PathLike or None
        Where :func:`save_checkpoint` writes each kept point; None: kept in memory only.

    Attributes
    ----------
    failed : list of str
        The checkpoints that could not be written (each with a warning that names the error).
    """

    def __init__(self, saved, directory):
        self.saved = set(int(u) for u in saved)
        self.directory = directory
        self.kept = Trajectory()
        self.failed: list[str] = []

    @property
    def paths(self):
        return self.kept.paths

    def keep(self, update: int, params, snapshot) -> None:
        """Keep ``params()`` (an :class:`~pymc_rbm.params.RBMParams`) if ``update`` is a saved one, and write
        ``snapshot(update)`` (a :class:`Checkpoint`); neither is called for the other updates.

        A checkpoint that cannot be written (a full disk) is not fatal: the
        run goes on, keeps its result in memory and tries the later
        checkpoints, with a RuntimeWarning that names the error."""
        if update not in self.saved:
            return
        self.kept.updates.append(update)
        self.kept.params.append(params())
        if self.directory is None:
            return
        try:
            self.kept.paths.append(save_checkpoint(self.directory, snapshot(update)))
        except OSError as err:
            self.failed.append(str(Path(self.directory) / f"update_{update:08d}.npz"))
            warnings.warn(
                f"fit could not write the checkpoint of update {update} in {str(self.directory)!r} "
                f"({type(err).__name__}: {err}); training goes on and its result is returned in memory "
                "(result.trajectory.paths lists the checkpoints written): free space or give another checkpoint_dir "
                "for the next run",
                RuntimeWarning,
                skip_file_prefixes=(os.path.dirname(os.path.abspath(__file__)),),  # the caller of fit
            )

    def result(self) -> Trajectory:
        """The points kept so far."""
        return self.kept


def check_resume(checkpoint, config: dict, params, chains, n_updates: int, fingerprint: str | None = None) -> None:
    """Refuse to resume a checkpoint with options other than its own, with params / chains of the caller, or on
    other data than it was trained on (``fingerprint``: :func:`data_fingerprint` of the data given; a checkpoint
    of an earlier version, which records none, is resumed with a warning)."""
    if params is not None or chains is not None:
        raise ValueError("a resumed run continues the checkpoint's parameters and chains: give neither params= nor "
                         "chains= in the method's record")
    ignore = {"n_updates"} if config.get("lr_schedule") == "constant" else set()
    changed = sorted(k for k in set(config) | set(checkpoint.config) - ignore
                     if k not in ignore and checkpoint.config.get(k) != jsonable(config.get(k)))
    if changed:
        detail = ", ".join(
            f"{k}: {checkpoint.config.get(k)!r} there, {jsonable(config.get(k))!r} here" for k in changed
        )
        raise ValueError(f"the checkpoint was written with other options ({detail}): resume with the same ones")
    if fingerprint is not None and checkpoint.data_fingerprint is None:
        warnings.warn(
            f"the checkpoint {checkpoint.path} records no fingerprint of its training data (it was written by an "
            "earlier version): fit cannot check that data= are those it was trained on, and resumes on them",
            RuntimeWarning,
            skip_file_prefixes=(os.path.dirname(os.path.abspath(__file__)),),
        )
    elif fingerprint is not None and fingerprint != checkpoint.data_fingerprint:
        raise ValueError(
            f"the checkpoint {checkpoint.path} was written by a run on other training data (of the same shape "
            f"({config.get('n_samples')}, {config.get('n_visible')}) but other values or another order of the rows): "
            "resume on the data the run was trained on, or start a new run on these"
        )
    if checkpoint.update >= n_updates:
        raise ValueError(f"the checkpoint is at update {checkpoint.update}; n_updates = {n_updates} leaves nothing "
                         "to do (n_updates counts all updates, those before the checkpoint included)")


def jsonable(x):
    """``x`` as it reads back from a checkpoint's JSON configuration."""
    return json.loads(json.dumps(x, default=str))
