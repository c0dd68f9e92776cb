"""Two narrow orthogonal ridges in ``n_dim`` dimensions (Hinton, Welling & Mnih 2003, §5), and their exact density."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy.special import logsumexp

from pymc_rbm.validation import check_positive_int, check_real

__all__ = ["two_ridges", "two_ridges_logpdf", "RidgeGeometry", "ridge_geometry"]


class RidgeGeometry(NamedTuple):
    """The two ridges of :func:`two_ridges` as numbers, before and after the rotation.

    Attributes
    ----------
    centers : ndarray of shape (2, 2)
        Centre of each ridge, before the rotation.
    scales : ndarray of shape (2, 2)
        Side length of each ridge along axis 0 and axis 1.
    rotation : ndarray of shape (2, 2)
        Rotation applied to the first two coordinates.
    """

    centers: np.ndarray
    scales: np.ndarray
    rotation: np.ndarray


def ridge_geometry(length, width, offset, angle) -> RidgeGeometry:
    """The validated geometry of the two ridges of :func:`two_ridges` (deterministic).

    Parameters
    ----------
    length, width, offset, angle : float
        As in :func:`two_ridges`.

    Returns
    -------
    RidgeGeometry

    Raises
    ------
    ValueError
        For a length or width that is not > 0, or an offset or angle that
        is not a finite number.

    Examples
    --------
    >>> from pymc_rbm.datasets.ridges import ridge_geometry
    >>> ridge_geometry(2.0, 0.1, 1.5, 0.0).centers.tolist()
    [[0.0, 1.5], [1.5, 0.0]]
    """
    length = check_real(length, "length", 0.0, lo_open=True)
    width = check_real(width, "width", 0.0, lo_open=True)
    try:
        offset, angle = float(offset), float(angle)
    except (TypeError, ValueError):
        raise ValueError(f"offset and angle must be numbers, got {offset!r} and {angle!r}") from None
    if not (np.isfinite(offset) and np.isfinite(angle)):
        raise ValueError(f"offset and angle must be finite, got {offset!r} and {angle!r}")
    centers = np.array([[0.0, offset], [offset, 0.0]])
    scales = np.array([[length, width], [width, length]])
    a = np.deg2rad(angle)
    rotation = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
    return RidgeGeometry(centers, scales, rotation)


def _check_profile(profile: str) -> None:
    if profile not in ("uniform", "gaussian"):
        raise ValueError(f"profile must be 'uniform' or 'gaussian', got {profile!r}")


def two_ridges(
    n_samples: int,
    n_dim: int,
    *,
    length: float = 2.0,
    width: float = 0.1,
    offset: float = 1.5,
    angle: float = 45.0,
    noise_std: float = 0.02,
    profile: str = "uniform",
    balanced: bool = True,
    rng=None,
    return_labels: bool = False,
):
    """Points on two narrow orthogonal ridges in ``n_dim`` dimensions (Hinton, Welling & Mnih 2003, §5). Stochastic.

    Hinton, Welling & Mnih (2003, §5) sample "1024 data points
    along two very narrow orthogonal ridges ..., with half of the cases in
    each mode" (Fig. 3: "uniformly distributed on 2 orthogonal narrow
    rectangles"), and for ``n`` of 2 to 32: "The first two components of each
    point were sampled uniformly from two axis-aligned narrow orthogonal
    ridges and then rotated by 45° around the origin ... The remaining n − 2
    components of each data point were sampled independently from a sharp
    univariate Gaussian with mean 0 and std. 0.02."

    Here, before the rotation, ridge 0 is the rectangle of side ``length``
    along axis 0 and ``width`` along axis 1 centred at ``(0, offset)``, and
    ridge 1 is its mirror image under exchange of the two axes: side
    ``width`` along axis 0 and ``length`` along axis 1, centred at
    ``(offset, 0)``. The first two coordinates are then rotated
    counterclockwise by ``angle`` degrees about the origin.

    Parameters
    ----------
    n_samples : int
        Number of points, ``>= 0`` (Hinton, Welling & Mnih 2003 use 1024).
    n_dim : int
        Dimension of the points, ``>= 2`` (Hinton, Welling & Mnih 2003 use 2, 4, 8, 16, 32).
    length, width : float, default 2.0 and 0.1
        Sides of each ridge. Hinton, Welling & Mnih (2003) give no numbers, only a picture whose
        axes run from -3 to 3; these defaults are our choice (aspect 20:1).
    offset : float, default 1.5
        Distance of each ridge's centre from the origin. The ridges are
        disjoint when ``offset >= (length + width) / 2``, as with the
        defaults.
    angle : float, default 45.0
        Rotation of the first two coordinates in degrees (the paper's 45°;
        0 keeps the ridges axis-aligned).
    noise_std : float, default 0.02
        Standard deviation of the remaining ``n_dim - 2`` coordinates.
    profile : {"uniform", "gaussian"}, default "uniform"
        ``"uniform"``: uniform on each rectangle, as in the paper.
        ``"gaussian"``: a Gaussian per ridge with the same mean and covariance
        as the rectangle (standard deviations ``length / sqrt(12)`` along and
        ``width / sqrt(12)`` across), whose log density is smooth everywhere.
    balanced : bool, default True
        Exactly half of the points on each ridge, in random order, as in the
        paper (for odd ``n_samples`` the last point's ridge is a coin flip);
        False draws each point's ridge independently with probability 1/2.
    rng : numpy.random.Generator or seed, optional
        Source of randomness.
    return_labels : bool, default False
        Also return the ridge of each point.

    Returns
    -------
    x : ndarray of shape (n_samples, n_dim), dtype float64
        The points.
    labels : ndarray of shape (n_samples,), dtype int64
        Ridge (0 or 1) of each point (only with ``return_labels=True``).

    See Also
    --------
    two_ridges_logpdf : log density of the mixture these points come from.

    Examples
    --------
    >>> from pymc_rbm.datasets import two_ridges
    >>> x, labels = two_ridges(1024, 8, rng=0, return_labels=True)
    >>> x.shape, int(labels.sum())
    ((1024, 8), 512)
    """
    n_samples = check_positive_int(n_samples, "n_samples", 0)
    n_dim = check_positive_int(n_dim, "n_dim", 2)
    _check_profile(profile)
    geometry = ridge_geometry(length, width, offset, angle)
    noise_std = check_real(noise_std, "noise_std", 0.0, lo_open=True)
    rng = np.random.default_rng(rng)

    if balanced:
        half = n_samples // 2
        odd = rng.integers(2, size=n_samples % 2)  # the ridge of a last, odd point
        labels = rng.permutation(np.concatenate([np.zeros(half, np.int64), np.ones(half, np.int64), odd]))
    else:
        labels = rng.integers(2, size=n_samples)

    if profile == "uniform":
        unit = rng.random((n_samples, 2)) - 0.5
    else:
        unit = rng.standard_normal((n_samples, 2)) / np.sqrt(12.0)
    plane = geometry.centers[labels] + unit * geometry.scales[labels]
    x = np.empty((n_samples, n_dim))
    x[:, :2] = plane @ geometry.rotation.T
    x[:, 2:] = noise_std * rng.standard_normal((n_samples, n_dim - 2))
    return (x, labels) if return_labels else x


def two_ridges_logpdf(
    x,
    n_dim: int,
    *,
    length: float = 2.0,
    width: float = 0.1,
    offset: float = 1.5,
    angle: float = 45.0,
    noise_std: float = 0.02,
    profile: str = "uniform",
) -> np.ndarray:
    """Exact log density of the mixture that :func:`two_ridges` samples from.

    ``p(x) = (p_0(x) + p_1(x)) / 2`` with ``p_k`` the density of ridge ``k``
    (uniform on its rectangle, or its Gaussian) in the first two coordinates,
    times independent normal densities of standard deviation ``noise_std``
    in the other ``n_dim - 2``. Minus this is an energy with the same ridges.

    Parameters
    ----------
    x : array_like of shape (..., n_dim)
        Points.
    n_dim : int
        Dimension of the points, ``>= 2``; must equal ``x.shape[-1]``.
    length, width, offset, angle, noise_std, profile
        As in :func:`two_ridges`; pass the same values.

    Returns
    -------
    ndarray of shape (...)
        ``log p(x)``; ``-inf`` off both rectangles for ``profile="uniform"``
        (points on a rectangle's boundary count as inside).

    Examples
    --------
    >>> import numpy as np
    >>> from pymc_rbm.datasets import two_ridges, two_ridges_logpdf
    >>> x = two_ridges(3, 2, rng=0)
    >>> np.allclose(two_ridges_logpdf(x, 2), np.log(0.5 / (2.0 * 0.1)))
    True
    """
    n_dim = check_positive_int(n_dim, "n_dim", 2)
    _check_profile(profile)
    geometry = ridge_geometry(length, width, offset, angle)
    noise_std = check_real(noise_std, "noise_std", 0.0, lo_open=True)
    x = np.asarray(x, dtype=np.float64)
    if x.ndim == 0 or x.shape[-1] != n_dim:
        raise ValueError(f"x must have shape (..., {n_dim}) for n_dim = {n_dim}, got shape {x.shape}")

    plane = x[..., :2] @ geometry.rotation  # undo the rotation: R^T x for each point
    log_ridge = []
    for center, scale in zip(geometry.centers, geometry.scales):
        z = (plane - center) / scale  # rectangle -> [-1/2, 1/2]^2
        if profile == "uniform":
            inside = np.all(np.abs(z) <= 0.5, axis=-1)
            log_ridge.append(np.where(inside, -np.log(np.prod(scale)), -np.inf))
        else:
            sd = scale / np.sqrt(12.0)
            log_ridge.append(np.sum(-0.5 * (z * np.sqrt(12.0)) ** 2 - np.log(sd * np.sqrt(2 * np.pi)), axis=-1))
    log_plane = logsumexp(np.stack(log_ridge), axis=0) - np.log(2.0)
    rest = x[..., 2:] / noise_std
    log_rest = np.sum(-0.5 * rest**2, axis=-1) - (n_dim - 2) * np.log(noise_std * np.sqrt(2 * np.pi))
    return log_plane + log_rest
