"""The parameters of a binary RBM, their validation, and their other forms.

An RBM over visible units ``v`` in {0, 1}^n_visible and hidden units ``h`` in
{0, 1}^n_hidden has the energy ``E(v, h) = -v·W·h - vbias·v - hbias·h``.
:class:`RBMParams` holds ``W``, ``vbias`` and ``hbias`` as read-only float
arrays, so a value once validated can be shared freely and never changes.

Huang & Toyoizumi (2015) and Lawrence, Bishop & Jordan (1998) write their
models for ±1 spins. :meth:`RBMParams.to_spin`
and :meth:`SpinRBMParams.to_binary` map between the two forms exactly;
``log Z`` of the binary form equals ``log Z`` of the spin form plus
:attr:`SpinRBMParams.log_offset`. Each class names its layer types
(:mod:`pymc_rbm.layers`) as ``visible`` and ``hidden``, so the energies, the
samplers and the estimators read what a unit is from the parameters.
"""

from __future__ import annotations

import hashlib
import os
import warnings
import zipfile
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from pymc_rbm.layers import BERNOULLI, SPIN, Layer, ReLU, bits_form
from pymc_rbm.validation import (
    check_float_array,
    check_float_dtype,
    check_positive_int,
    check_real,
    open_npz,
    read_npz_array,
)

__all__ = ["RBMParams", "ReLURBMParams", "SpinRBMParams", "StoredArrays", "KIND_KEY", "MAX_COMPRESSED_BYTES"]


def _check_shapes(W: np.ndarray, vbias: np.ndarray, hbias: np.ndarray, names=("W", "vbias", "hbias")):
    n_visible, n_hidden = W.shape
    if n_visible == 0 or n_hidden == 0:
        raise ValueError(f"{names[0]} must have at least one visible and one hidden unit, got shape {W.shape}")
    if vbias.shape != (n_visible,):
        raise ValueError(
            f"{names[1]} has shape {vbias.shape}, but {names[0]} of shape {W.shape} needs ({n_visible},)"
        )
    if hbias.shape != (n_hidden,):
        raise ValueError(
            f"{names[2]} has shape {hbias.shape}, but {names[0]} of shape {W.shape} needs ({n_hidden},)"
        )


#: The entry of a parameter file that names the class which wrote it (files of older versions have none).
KIND_KEY = "kind"

#: The largest array (in bytes) that :meth:`StoredArrays.load` decompresses by default: a deflated member
#: may expand to far more than the file's size (9 MB of zeros to 2 GB); ``load(..., max_bytes=)`` raises it.
MAX_COMPRESSED_BYTES = 2**30

#: The parameter classes by name, as files record them.
_KINDS: dict[str, type] = {}


def _file_name(path):
    """A str file name for str, bytes and path-like ``path`` (an open file as it is)."""
    return path if hasattr(path, "read") else os.fsdecode(os.fspath(path))


class StoredArrays:
    """What every parameter class shares: equality by value, a fingerprint, and ``.npz`` save and load.

    A subclass names its read-only float arrays in :attr:`ARRAY_NAMES` (the
    keys of its file, in the order of its constructor) and may prefix its
    fingerprint with :attr:`FINGERPRINT_TAG`, so that models of different
    kinds never share one.
    """

    ARRAY_NAMES: ClassVar[tuple[str, ...]] = ("W", "vbias", "hbias")
    FINGERPRINT_TAG: ClassVar[bytes] = b""

    def _arrays(self) -> list[np.ndarray]:
        return [getattr(self, k) for k in self.ARRAY_NAMES]

    @property
    def dtype(self) -> np.dtype:
        """Floating type of the parameters."""
        return self.W.dtype

    @property
    def n_visible(self) -> int:
        """Number of visible units (the first axis of ``W``)."""
        return self.W.shape[0]

    @property
    def n_hidden(self) -> int:
        """Number of hidden units (the last axis of ``W``)."""
        return self.W.shape[-1]

    def __eq__(self, other) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return all(np.array_equal(a, b) for a, b in zip(self._arrays(), other._arrays()))

    __hash__ = None  # arrays: equality by value, no hashing

    def fingerprint(self) -> str:
        """A short hash of the model: its kind, shapes and the float64 values of its arrays.

        Equal models (the same values, whatever their dtype) have equal
        fingerprints; estimates of ``log Z`` record the fingerprint of the
        model they were made for, so they are never applied to another one.

        Returns
        -------
        str
            32 hexadecimal digits (BLAKE2b).
        """
        h = hashlib.blake2b(digest_size=16)
        h.update(self.FINGERPRINT_TAG)
        for a in self._arrays():
            h.update(str(a.shape).encode())
            h.update(np.ascontiguousarray(a, dtype=np.float64).tobytes())
        return h.hexdigest()

    def stored_arrays(self) -> dict:
        """The entries of this model's file: its arrays by :attr:`ARRAY_NAMES`, and its kind (:data:`KIND_KEY`)."""
        return {**dict(zip(self.ARRAY_NAMES, self._arrays())), KIND_KEY: np.array(type(self).__name__)}

    def save(self, path) -> None:
        """Write the parameters to an ``.npz`` file (no pickle), with the name of their class.

        Parameters
        ----------
        path : str, bytes or os.PathLike
            Destination; numpy appends ``.npz`` when missing.
        """
        np.savez(_file_name(path), **self.stored_arrays())

    @classmethod
    def load(cls, path, *, dtype=np.float64, max_bytes: int | None = None):
        """Read parameters written by :meth:`save` (the keys of :attr:`ARRAY_NAMES`).

        ``path`` is a file name (``"model"`` finds the ``model.npz`` that
        ``save("model")`` wrote; str, bytes or path-like) or an open binary
        file. Pickled objects are refused, and so are empty, truncated or
        corrupt files and missing keys, with a ValueError that says so,
        before any array is allocated; a file saved by another parameter
        class (its kind is recorded since this version) is refused with the
        name of the class that reads it; a file of another kind of model
        from before fails the constructor's shape checks.

        Parameters
        ----------
        path : str, bytes, os.PathLike or binary file
        dtype : numpy floating dtype, default float64
        max_bytes : int, optional
            The largest array a compressed (deflated) file may announce
            (default :data:`MAX_COMPRESSED_BYTES`): a larger one is refused
            before anything is decompressed. Raise it to read a larger model
            from a trusted file.
        """
        keys = cls.ARRAY_NAMES
        path = _file_name(path)
        max_bytes = MAX_COMPRESSED_BYTES if max_bytes is None else check_positive_int(max_bytes, "max_bytes")
        with open_npz(path, f"a parameter file written by {cls.__name__}.save (an .npz of {', '.join(keys)})") as f:
            check_kind(f, cls, path)
            missing = set(keys) - set(f.files)
            if missing:
                raise ValueError(f"{path} lacks the key(s) {sorted(missing)}; it holds {sorted(f.files)}")
            arrays = []
            for key in keys:
                check_compressed_size(f, key, path, max_bytes)
                arrays.append(read_npz_array(f, key, path))
        return cls(*arrays, dtype=dtype)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        _KINDS[cls.__name__] = cls


def check_kind(archive, cls, path) -> None:
    """Refuse an archive whose recorded kind of parameters (:data:`KIND_KEY`) is not ``cls``.

    An archive without the entry (written before it was recorded) passes,
    with a warning when it holds the arrays of another class that ``cls``
    would drop (the ``sigma`` of a Gaussian RBM read by ``RBMParams.load``).
    """
    if KIND_KEY not in archive.files:
        for name, other in _KINDS.items():
            extra = set(other.ARRAY_NAMES) - set(cls.ARRAY_NAMES)
            if extra and extra <= set(archive.files):
                warnings.warn(
                    f"{path} holds the array(s) {sorted(extra)} of a {name}, which {cls.__name__}.load drops: "
                    f"if {name}.save wrote it, read it with {other.__module__}.{name}.load",
                    UserWarning,
                    stacklevel=3,
                )
        return
    check_compressed_size(archive, KIND_KEY, path, 1024)
    entry = read_npz_array(archive, KIND_KEY, path)
    if entry.ndim != 0 or entry.dtype.kind != "U":
        raise ValueError(f"{path}: its entry {KIND_KEY!r} should name a parameter class, but holds {entry.dtype} "
                         f"of shape {entry.shape}")
    kind = str(entry)
    if kind == cls.__name__:
        return
    other = _KINDS.get(kind)
    if other is None:
        raise ValueError(f"{path} holds parameters of an unknown kind {kind!r}; {cls.__name__}.load reads the "
                         f"files of {cls.__name__}.save")
    raise ValueError(f"{path} holds {kind} parameters (written by {kind}.save), which {cls.__name__}.load does not "
                     f"read: read it with {other.__module__}.{kind}.load")


def check_compressed_size(archive, key: str, path, max_bytes: int) -> None:
    """Refuse a compressed member ``key`` that announces more than ``max_bytes`` bytes, before it is read.

    A stored member's size is bounded by the file's (:func:`~pymc_rbm.validation.read_npz_array`
    refuses a header that announces more); a deflated one can announce any size.
    """
    try:
        info = archive.zip.getinfo(f"{key}.npy")
    except KeyError:
        return  # read_npz_array says what is wrong
    if info.compress_type != zipfile.ZIP_STORED and info.file_size > max_bytes:
        raise ValueError(
            f"{path}: the compressed array {key!r} announces {info.file_size} bytes ({info.file_size / 2**30:.3g} "
            f"GiB) once decompressed, more than the {max_bytes} bytes read by default: if the file is trusted, "
            f"pass max_bytes={info.file_size} (or more) to load it"
        )


@dataclass(frozen=True, eq=False)
class RBMParams(StoredArrays):
    """Parameters of a binary restricted Boltzmann machine.

    Parameters
    ----------
    W : array_like of shape (n_visible, n_hidden)
        Couplings between visible and hidden units.
    vbias : array_like of shape (n_visible,)
        Visible biases.
    hbias : array_like of shape (n_hidden,)
        Hidden biases.
    dtype : numpy floating dtype, default float64
        Floating type of the stored arrays; integer and complex types are
        refused (they would truncate the weights or drop a part of them).
    hidden : Layer, optional
        The hidden layer type: Bernoulli units when omitted. ``hidden=ReLU(gamma)``
        (:class:`~pymc_rbm.layers.ReLU`) returns a :class:`ReLURBMParams`, which
        carries ``gamma`` as one of its arrays.

    Notes
    -----
    The arrays are copied and made read-only: an ``RBMParams`` never aliases
    the caller's arrays, so nothing the caller does later changes it, and
    nothing done with it changes the caller's data.

    Examples
    --------
    >>> import numpy as np
    >>> from pymc_rbm import RBMParams
    >>> p = RBMParams(np.zeros((3, 2)), np.zeros(3), np.zeros(2))
    >>> p.n_visible, p.n_hidden
    (3, 2)
    """

    W: np.ndarray
    vbias: np.ndarray
    hbias: np.ndarray
    #: Layer types: units in {0, 1}.
    visible: ClassVar[Layer] = BERNOULLI
    hidden: ClassVar[Layer] = BERNOULLI

    def __new__(cls, *args, hidden=None, **kwargs):
        if hidden is None or hidden == BERNOULLI:
            return super().__new__(cls)
        if isinstance(hidden, ReLU):
            if len(args) > 3 or set(kwargs) - {"W", "vbias", "hbias", "dtype"}:
                raise TypeError("RBMParams(W, vbias, hbias, hidden=ReLU(gamma), dtype=...) takes no other arguments")
            return ReLURBMParams(*args, gamma=hidden.gamma, **kwargs)
        raise TypeError(
            f"RBMParams takes hidden=None (Bernoulli units) or hidden=ReLU(gamma), got {hidden!r}; spins, categorical "
            "and Gaussian units have their own classes (SpinRBMParams, CategoricalRBMParams, GaussianRBMParams)"
        )

    def __init__(self, W, vbias, hbias, *, dtype=np.float64, hidden=None):
        W = check_float_array(W, "W", 2, dtype=dtype, readonly=True)
        vbias = check_float_array(vbias, "vbias", 1, dtype=dtype, readonly=True)
        hbias = check_float_array(hbias, "hbias", 1, dtype=dtype, readonly=True)
        _check_shapes(W, vbias, hbias)
        object.__setattr__(self, "W", W)
        object.__setattr__(self, "vbias", vbias)
        object.__setattr__(self, "hbias", hbias)

    @classmethod
    def viewing(cls, W: np.ndarray, vbias: np.ndarray, hbias: np.ndarray) -> RBMParams:
        """Parameters that follow arrays the caller keeps moving in place: read-only views, not copies.

        For loops that update their parameters in place at every step, such
        as :func:`~pymc_rbm.training.fit`, and read them through an
        ``RBMParams`` (the constructor's copy and checks cost more than a
        small model's update). Unlike the constructor's result, this one
        changes whenever the arrays do: hand a copy (``RBMParams(p.W,
        p.vbias, p.hbias)``) to anything that keeps it.

        Parameters
        ----------
        W : ndarray of shape (n_visible, n_hidden)
        vbias : ndarray of shape (n_visible,)
        hbias : ndarray of shape (n_hidden,)
            Finite floating arrays of one dtype (finiteness is the caller's to keep).
        """
        if any(type(a) is not np.ndarray or a.dtype != W.dtype for a in (W, vbias, hbias)):
            raise TypeError("RBMParams.viewing takes NumPy arrays of one floating dtype")
        check_float_dtype(W.dtype)
        arrays = [a.view() for a in (W, vbias, hbias)]
        _check_shapes(*arrays)
        params = object.__new__(cls)
        for name, a in zip(cls.ARRAY_NAMES, arrays):
            a.setflags(write=False)
            object.__setattr__(params, name, a)
        return params

    def __repr__(self) -> str:
        return f"RBMParams(n_visible={self.n_visible}, n_hidden={self.n_hidden}, dtype={self.dtype})"

    def transpose(self) -> RBMParams:
        """The same model with the roles of the two layers swapped.

        Returns
        -------
        RBMParams
            ``W.T`` with the biases exchanged; it has the same partition
            function, and its "visible" layer is this model's hidden layer.
        """
        return RBMParams(self.W.T, self.hbias, self.vbias, dtype=self.dtype)

    def astype(self, dtype) -> RBMParams:
        """A copy with arrays of another floating type."""
        return RBMParams(self.W, self.vbias, self.hbias, dtype=dtype)

    # ---------------------------------------------------------- constructors
    @classmethod
    def random(
        cls,
        n_visible: int,
        n_hidden: int,
        *,
        scale: float = 1.0,
        bias_scale: float | None = None,
        distribution: str = "uniform",
        rng=None,
    ) -> RBMParams:
        """A random RBM, for tests and experiments (stochastic).

        Parameters
        ----------
        n_visible, n_hidden : int
            Layer sizes.
        scale : float, default 1.0
            Finite and >= 0. Weights are drawn uniformly from ``[-scale, scale]`` (the
            setting of Brügge, Fischer & Igel 2013, Fig. 3) or, with ``distribution="normal"``,
            from a normal distribution with standard deviation ``scale``.
        bias_scale : float, optional
            The same for the biases; defaults to ``scale``.
        distribution : {"uniform", "normal"}
            Law of the entries.
        rng : numpy.random.Generator or seed, optional
            Source of randomness.

        Returns
        -------
        RBMParams
        """
        scale = check_real(scale, "scale", 0.0)
        bias_scale = scale if bias_scale is None else check_real(bias_scale, "bias_scale", 0.0)
        rng = np.random.default_rng(rng)
        if distribution == "uniform":
            draw = lambda s, shape: rng.uniform(-s, s, size=shape)  # noqa: E731
        elif distribution == "normal":
            draw = lambda s, shape: rng.normal(0.0, s, size=shape)  # noqa: E731
        else:
            raise ValueError(f"distribution must be 'uniform' or 'normal', got {distribution!r}")
        return cls(
            draw(scale, (n_visible, n_hidden)),
            draw(bias_scale, n_visible),
            draw(bias_scale, n_hidden),
        )

    @classmethod
    def from_sklearn(cls, model) -> RBMParams:
        """Parameters of a fitted scikit-learn ``BernoulliRBM``.

        scikit-learn is not imported: any object with the fitted attributes
        ``components_`` (shape ``(n_hidden, n_visible)``),
        ``intercept_visible_`` and ``intercept_hidden_`` works.
        """
        missing = [a for a in ("components_", "intercept_visible_", "intercept_hidden_") if not hasattr(model, a)]
        if missing:
            raise ValueError(
                f"{type(model).__name__} has no attribute(s) {', '.join(missing)}: "
                "pass a fitted sklearn.neural_network.BernoulliRBM"
            )
        return cls(np.asarray(model.components_).T, model.intercept_visible_, model.intercept_hidden_)

    # ------------------------------------------------------------- save/load
    # ------------------------------------------------------------ spin form
    def to_spin(self) -> SpinRBMParams:
        """The equivalent model over ±1 spins (exact).

        With ``v = (s + 1) / 2`` and ``h = (t + 1) / 2`` the energy becomes
        ``E = -s·J·t - a·s - b·t`` minus ``J = W / 4``,
        ``a = vbias / 2 + W.sum(1) / 4``, ``b = hbias / 2 + W.sum(0) / 4`` and
        a constant ``log_offset = W.sum() / 4 + vbias.sum() / 2 + hbias.sum() / 2``
        (:attr:`SpinRBMParams.log_offset`), so ``log Z_binary = log Z_spin + log_offset``.
        """
        W = self.W
        return SpinRBMParams(
            W / 4.0,
            self.vbias / 2.0 + W.sum(axis=1) / 4.0,
            self.hbias / 2.0 + W.sum(axis=0) / 4.0,
            dtype=self.dtype,
        )


@dataclass(frozen=True, eq=False)
class SpinRBMParams:
    """An RBM over ±1 spins: ``E(s, t) = -s·J·t - vfield·s - hfield·t``.

    Parameters
    ----------
    J : array_like of shape (n_visible, n_hidden)
        Couplings.
    vfield : array_like of shape (n_visible,)
        Fields on the visible spins.
    hfield : array_like of shape (n_hidden,)
        Fields on the hidden spins.
    """

    J: np.ndarray
    vfield: np.ndarray
    hfield: np.ndarray
    #: Layer types: units in {-1, +1}.
    visible: ClassVar[Layer] = SPIN
    hidden: ClassVar[Layer] = SPIN

    def __init__(self, J, vfield, hfield, *, dtype=np.float64):
        J = check_float_array(J, "J", 2, dtype=dtype, readonly=True)
        vfield = check_float_array(vfield, "vfield", 1, dtype=dtype, readonly=True)
        hfield = check_float_array(hfield, "hfield", 1, dtype=dtype, readonly=True)
        _check_shapes(J, vfield, hfield, names=("J", "vfield", "hfield"))
        object.__setattr__(self, "J", J)
        object.__setattr__(self, "vfield", vfield)
        object.__setattr__(self, "hfield", hfield)

    @property
    def n_visible(self) -> int:
        """Number of visible spins."""
        return self.J.shape[0]

    @property
    def n_hidden(self) -> int:
        """Number of hidden spins."""
        return self.J.shape[1]

    # The names every energy, sampler and estimator reads (:mod:`pymc_rbm.energy`).
    @property
    def W(self) -> np.ndarray:
        """The couplings ``J``."""
        return self.J

    @property
    def vbias(self) -> np.ndarray:
        """The visible fields ``vfield``."""
        return self.vfield

    @property
    def hbias(self) -> np.ndarray:
        """The hidden fields ``hfield``."""
        return self.hfield

    @property
    def dtype(self) -> np.dtype:
        """Floating type of the stored arrays."""
        return self.J.dtype

    def __repr__(self) -> str:
        return f"SpinRBMParams(n_visible={self.n_visible}, n_hidden={self.n_hidden}, log_offset={self.log_offset:.6g})"

    def to_binary(self) -> RBMParams:
        """The equivalent binary model (exact inverse of :meth:`RBMParams.to_spin`).

        ``W = 4 J``, ``vbias = 2 vfield - 2 J.sum(1)``, ``hbias = 2 hfield - 2 J.sum(0)``: the
        :func:`~pymc_rbm.layers.bits_form` of the spin layers.
        """
        form = bits_form(self.J, self.vfield, self.hfield, self.visible, self.hidden)
        return RBMParams(form.W, form.vbias, form.hbias, dtype=self.J.dtype)

    @property
    def log_offset(self) -> float:
        """``log Z`` of :meth:`to_binary`'s model minus ``log Z`` of this one.

        ``vfield.sum() + hfield.sum() - J.sum()``: the energy constant that
        the change of variables ``v = (s + 1) / 2``, ``h = (t + 1) / 2`` adds.
        """
        return -bits_form(self.J, self.vfield, self.hfield, self.visible, self.hidden).log_offset


@dataclass(frozen=True, eq=False)
class ReLURBMParams(StoredArrays):
    """An RBM with binary visible units and ReLU hidden units (:class:`~pymc_rbm.layers.ReLU`).

    ``E(v, h) = -v·W·h - vbias·v - hbias·h + Σ_j γ_j h_j² / 2`` with ``v`` in
    {0, 1}^n_visible and ``h >= 0``: given ``v`` hidden unit ``j`` is the normal
    ``N(f_j / γ_j, 1 / γ_j)`` truncated to ``[0, ∞)``, ``f = hbias + v·W``. The
    free energy (:func:`pymc_rbm.energy.free_energy`) sums the hidden layer out with
    its log normaliser; ``log Z`` is exact by enumerating the visible layer.
    ``RBMParams(W, vbias, hbias, hidden=ReLU(gamma))`` makes one.

    Parameters
    ----------
    W : array_like of shape (n_visible, n_hidden)
    vbias : array_like of shape (n_visible,)
    hbias : array_like of shape (n_hidden,)
    gamma : float or array_like of shape (n_hidden,), default 1
        Precisions of the hidden units, finite and > 0 (a scalar applies to every unit).
    dtype : numpy floating dtype, default float64

    Examples
    --------
    >>> import numpy as np
    >>> from pymc_rbm import RBMParams
    >>> from pymc_rbm.layers import ReLU
    >>> p = RBMParams(np.zeros((3, 2)), np.zeros(3), np.zeros(2), hidden=ReLU(2.0))
    >>> type(p).__name__, p.gamma.tolist()
    ('ReLURBMParams', [2.0, 2.0])
    """

    FINGERPRINT_TAG: ClassVar[bytes] = b"relu"
    ARRAY_NAMES: ClassVar[tuple[str, ...]] = ("W", "vbias", "hbias", "gamma")
    W: np.ndarray
    vbias: np.ndarray
    hbias: np.ndarray
    gamma: np.ndarray
    visible: ClassVar[Layer] = BERNOULLI

    def __init__(self, W, vbias, hbias, gamma=1.0, *, dtype=np.float64):
        W = check_float_array(W, "W", 2, dtype=dtype, readonly=True)
        vbias = check_float_array(vbias, "vbias", 1, dtype=dtype, readonly=True)
        hbias = check_float_array(hbias, "hbias", 1, dtype=dtype, readonly=True)
        _check_shapes(W, vbias, hbias)
        layer = ReLU(gamma).for_units(W.shape[1])  # checks gamma > 0 and finite, broadcasts a scalar
        gamma = check_float_array(layer.gamma, "gamma", 1, dtype=dtype, readonly=True)
        if not np.all(gamma > 0):
            raise ValueError(f"gamma must stay > 0 in {np.dtype(dtype)}; rescale the hidden units")
        for key, value in (("W", W), ("vbias", vbias), ("hbias", hbias), ("gamma", gamma)):
            object.__setattr__(self, key, value)

    @property
    def hidden(self) -> ReLU:
        """The hidden layer type: ReLU units of precisions ``gamma``."""
        return ReLU(self.gamma)

    def __repr__(self) -> str:
        return f"ReLURBMParams(n_visible={self.n_visible}, n_hidden={self.n_hidden}, dtype={self.dtype})"

    def astype(self, dtype) -> ReLURBMParams:
        """A copy with arrays of another floating type."""
        return ReLURBMParams(self.W, self.vbias, self.hbias, self.gamma, dtype=dtype)
