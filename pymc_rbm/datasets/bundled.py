"""RBMs shipped with the package."""

from __future__ import annotations

__all__ = ["bundled_rbm", "BUNDLED_RBMS"]

#: RBMs shipped with the package, by name (made by scripts in the repository's ``scripts/``).
BUNDLED_RBMS = {
    "bars_and_stripes_4x4": (
        "16 visible x 16 hidden, fitted to MacKay's 32 rows of 4x4 bars and stripes by exact-gradient "
        "ascent (scripts/make_bundled_model.py)"
    ),
}


def bundled_rbm(name: str = "bars_and_stripes_4x4"):
    """An RBM shipped with the package.

    Parameters
    ----------
    name : str, default "bars_and_stripes_4x4"
        A key of :data:`BUNDLED_RBMS`.

    Returns
    -------
    RBMParams

    Examples
    --------
    >>> from pymc_rbm.datasets import bundled_rbm
    >>> bundled_rbm().W.shape
    (16, 16)
    """
    from importlib.resources import files

    from pymc_rbm.params import RBMParams

    if name not in BUNDLED_RBMS:
        raise ValueError(f"unknown bundled RBM {name!r}; available: {sorted(BUNDLED_RBMS)}")
    with files("pymc_rbm.data").joinpath(f"{name}.npz").open("rb") as f:
        return RBMParams.load(f)
