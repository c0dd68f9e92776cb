"""Checks of user input that more than one module needs."""

from __future__ import annotations

import math
import numbers
import os
import zipfile

import numpy as np

__all__ = [
    "check_binary",
    "check_bool",
    "check_float_array",
    "check_float_dtype",
    "check_positive_int",
    "check_real",
    "check_sampling_dtype",
    "open_npz",
    "read_npz_array",
]


def check_binary(
    data, n_visible: int | None = None, *, name: str = "data", dtype=np.float64, values: tuple = (0, 1)
) -> np.ndarray:
    """A float copy of two-valued ``data``, or a ValueError that says what is wrong.

    Parameters
    ----------
    data : array_like of shape (..., n_visible)
        Values in ``values``, {0, 1} by default (booleans allowed there).
    n_visible : int, optional
        Required size of the last axis.
    name : str
        How the error message calls the input.
    dtype : numpy dtype, default float64
        Type of the returned copy.
    values : tuple of two numbers, default (0, 1)
        The two values a unit may take (``(-1, 1)`` for spins).

    Returns
    -------
    ndarray of shape (..., n_visible)
        A new array; ``data`` itself is never modified.
    """
    low, high = values
    allowed = f"{{{low:g}, {high:g}}}"
    arr = np.asarray(data)
    if arr.dtype.kind not in "biuf" or (arr.dtype.kind == "b" and low != 0):
        kinds = "numeric or boolean" if low == 0 else "numeric"
        raise ValueError(f"{name} must be {kinds} with values in {allowed}, got dtype {arr.dtype}")
    if arr.ndim == 0:
        raise ValueError(f"{name} must have at least one dimension (the units), got a scalar")
    if n_visible is not None and arr.shape[-1] != n_visible:
        raise ValueError(
            f"{name} has {arr.shape[-1]} units in its last dimension (shape {arr.shape}), "
            f"but the RBM has n_visible = {n_visible}"
        )
    bad = ~((arr == low) | (arr == high))
    if bad.any():
        first = np.argwhere(bad)[0]
        raise ValueError(
            f"{name} must be binary (values in {allowed}); found {int(bad.sum())} other value(s), "
            f"e.g. {arr[tuple(first)].item()!r} at index {tuple(int(i) for i in first)}"
        )
    return arr.astype(dtype, copy=True)


def check_positive_int(value, name: str, minimum: int = 1, why: str = "", *, allow_none: bool = False):
    """``value`` as an int of at least ``minimum``, or a ValueError naming ``name``.

    Parameters
    ----------
    value : int
        Booleans and non-integers (``2.0`` included) are refused.
    name : str
        The argument's name, for the message.
    minimum : int, default 1
    why : str, optional
        Appended to the message (e.g. why the minimum is what it is).
    allow_none : bool, default False
        Let None through (returned as None).

    Returns
    -------
    int or None
    """
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        what = "a positive integer" if minimum == 1 else f"an integer of at least {minimum}"
        raise ValueError(f"{name} must be {what}{why}, got {value!r}")
    return int(value)


def check_real(
    value,
    name: str,
    lo: float = -math.inf,
    hi: float = math.inf,
    *,
    hi_open: bool = False,
    lo_open: bool = False,
    finite: bool = True,
) -> float:
    """``value`` as a float in the interval ``[lo, hi]``, or a ValueError naming ``name``.

    Parameters
    ----------
    value : real number
        Booleans, complex numbers, strings and NaN are refused.
    name : str
        The argument's name, for the message.
    lo, hi : float, default -inf and inf
        Bounds of the interval.
    hi_open, lo_open : bool, default False
        Exclude ``hi`` (``lo``) itself.
    finite : bool, default True
        Refuse ``±inf`` as well.

    Returns
    -------
    float
    """
    if isinstance(value, (bool, np.bool_, str, bytes)) or np.iscomplexobj(value):
        raise ValueError(f"{name} must be a real number, got {value!r}")
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a real number, got {value!r}") from None
    if math.isnan(x) or (finite and math.isinf(x)):
        raise ValueError(f"{name} must be a finite real number, got {value!r}")
    if not (lo <= x <= hi) or (hi_open and x == hi) or (lo_open and x == lo):
        interval = f"{'(' if lo_open else '['}{lo}, {hi}{')' if hi_open else ']'}"
        raise ValueError(f"{name} must lie in {interval}, got {value!r}")
    return x


def check_float_dtype(dtype, name: str = "dtype") -> np.dtype:
    """``dtype`` as a real floating numpy dtype, or a ValueError.

    Integer types would truncate the parameters of an RBM and complex types
    have no meaning for them; both are refused.
    """
    try:
        dt = np.dtype(dtype)
    except TypeError:
        raise ValueError(f"{name} must be a floating numpy dtype such as float64 or float32, got {dtype!r}") from None
    if dt.kind != "f":
        raise ValueError(
            f"{name} must be a real floating type (float64 or float32), got {dt}: "
            + ("integers would truncate the values" if dt.kind in "biu" else "the parameters are real numbers")
        )
    return dt


def check_sampling_dtype(dtype, name: str = "dtype") -> np.dtype:
    """``dtype`` as float64 or float32, the types the sampling kernels run in, or a ValueError."""
    dt = check_float_dtype(dtype, name)
    if dt not in (np.dtype(np.float64), np.dtype(np.float32)):
        raise ValueError(f"{name} must be float64 or float32 (the types the sampling kernels run in), got {dt}")
    return dt


def check_float_array(
    value, name: str, ndim: int | None = None, *, dtype=np.float64, finite: bool = True, readonly: bool = False
) -> np.ndarray:
    """A new float array of ``value``, or a ValueError naming ``name``.

    Anything ``np.asarray`` accepts is taken (lists, arrays, objects with
    ``__array__`` such as tensors of other libraries); the input itself is
    never modified.

    Parameters
    ----------
    value : array_like
        Real numbers (booleans and integers are converted exactly).
    name : str
        The argument's name, for the message.
    ndim : int, optional
        Required number of dimensions.
    dtype : numpy floating dtype, default float64
        Type of the copy (see :func:`check_float_dtype`).
    finite : bool, default True
        Refuse NaN and infinite values.
    readonly : bool, default False
        Return the copy read-only (the arrays of :class:`~pymc_rbm.params.RBMParams`).

    Returns
    -------
    ndarray
        A copy that shares no memory with ``value``, writeable unless ``readonly``.
    """
    if type(value) is np.ndarray and value.dtype == dtype and (ndim is None or value.ndim == ndim):
        # the common case (fit builds RBMParams of its float64 arrays at every update): copy and check at once
        # (the sum is finite when every entry is; where it is not, the full checks below say why)
        arr = value.copy()
        if not finite or math.isfinite(arr.sum()):
            if readonly:
                arr.setflags(write=False)
            return arr
    dtype = check_float_dtype(dtype)
    try:
        raw = np.asarray(value)
    except Exception as err:  # noqa: BLE001 - whatever the object raises, say what was expected
        raise ValueError(f"{name} must be an array of real numbers, got {type(value).__name__}: {err}") from None
    if raw.dtype.kind == "c":
        raise ValueError(f"{name} must be real, got complex values (dtype {raw.dtype}); pass the real part explicitly")
    if raw.dtype.kind not in "biufO":
        raise ValueError(f"{name} must be numeric, got {type(value).__name__} of dtype {raw.dtype}")
    if raw.dtype.kind == "O":
        if any(x is None or isinstance(x, (str, bytes)) for x in raw.flat):
            raise ValueError(f"{name} must be numeric, got {type(value).__name__} holding None or text")
        try:
            raw = raw.astype(np.float64)
        except (TypeError, ValueError) as err:
            raise ValueError(f"{name} must be numeric, got {type(value).__name__} of dtype {raw.dtype}: {err}") from None
    with np.errstate(over="ignore", invalid="ignore"):  # values beyond the dtype become inf: reported below
        arr = np.array(raw, dtype=dtype, copy=True)
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name} must have {ndim} dimension(s), got shape {arr.shape}")
    if finite and not np.all(np.isfinite(arr)):
        bad = int(arr.size - np.count_nonzero(np.isfinite(arr)))
        raise ValueError(f"{name} contains {bad} non-finite value(s) (NaN or inf)")
    if readonly:
        arr.setflags(write=False)
    return arr


def check_bool(value, name: str) -> bool:
    """``value`` as a bool, or a TypeError: only True and False (Python's or NumPy's) are taken.

    ``1``, ``"yes"`` and ``None`` are refused rather than read by their truth value.
    """
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def open_npz(path, expected: str):
    """An ``.npz`` archive opened without pickle, or an error that says what the file is instead.

    Parameters
    ----------
    path : str, os.PathLike or binary file
        A name without the ``.npz`` suffix that :func:`numpy.savez` appends
        is found too.
    expected : str
        What the file should hold, for the messages (e.g. "an .npz of the
        arrays W, vbias, hbias").

    Returns
    -------
    numpy.lib.npyio.NpzFile
        Use it as a context manager; read arrays with :func:`read_npz_array`.

    Raises
    ------
    FileNotFoundError
        No such file (nor one with ``.npz`` appended).
    ValueError
        An empty, truncated or corrupt file, a single ``.npy`` array, a
        pickle, or any other format.
    """
    source = path
    if not hasattr(path, "read"):
        source = os.fspath(path)
        if not os.path.exists(source) and os.path.exists(f"{source}.npz"):
            source = f"{source}.npz"  # what np.savez wrote for this name
        if not os.path.exists(source):
            raise FileNotFoundError(f"no such file: {path} (nor {path}.npz); expected {expected}")
    try:
        archive = np.load(source, allow_pickle=False)
    except (ValueError, OSError, EOFError, zipfile.BadZipFile) as err:  # empty, truncated, pickled, other formats
        raise ValueError(f"{path} is not {expected}: it is empty, truncated or of another format ({err})") from None
    if not isinstance(archive, np.lib.npyio.NpzFile):
        raise ValueError(f"{path} holds a single array, not {expected}")
    return archive


def read_npz_array(archive, key: str, path) -> np.ndarray:
    """The array ``key`` of an archive from :func:`open_npz`, checked against its stored size before it is read.

    A header that announces more data than the archive holds (a truncated
    or forged file) is refused before anything is allocated; so are
    pickled (object) arrays and corrupt data.
    """
    try:
        info = archive.zip.getinfo(f"{key}.npy")
        with archive.zip.open(info) as member:
            version = np.lib.format.read_magic(member)
            fmt = np.lib.format
            shape, _, dtype = (fmt.read_array_header_1_0 if version == (1, 0) else fmt.read_array_header_2_0)(member)
    except (ValueError, OSError, EOFError, KeyError, zipfile.BadZipFile) as err:
        raise ValueError(f"{path}: the array {key!r} is corrupt or truncated ({err})") from None
    if dtype.hasobject:
        raise ValueError(f"{path} holds pickled (object) arrays, which are refused (array {key!r})")
    n_bytes = math.prod(shape) * dtype.itemsize
    if n_bytes > info.file_size:
        raise ValueError(
            f"{path}: the header of {key!r} announces shape {shape} of {dtype} ({n_bytes} bytes), but the "
            f"archive holds only {info.file_size} bytes for it: the file is truncated or corrupt"
        )
    try:
        return archive[key]
    except (ValueError, OSError, EOFError, zipfile.BadZipFile) as err:
        raise ValueError(f"{path}: the array {key!r} is corrupt or truncated ({err})") from None
