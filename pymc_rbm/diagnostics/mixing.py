"""What is wrong with the chains of an RBM variable: stuck chains, disagreeing chains, a dead ladder, in words
(:func:`mixing_problems`); R-hat and ESS of its units, with the units that never change set apart
(:func:`unit_diagnostics`).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import xarray as xr

__all__ = ["RHAT_LIMIT", "OVERLAP_LIMIT", "mixing_problems", "unit_diagnostics"]

#: R-hat of the free energy above which :func:`mixing_problems` says the chains disagree.
RHAT_LIMIT = 1.05
#: Total variation between two chains' state frequencies above which they are said to visit different states.
OVERLAP_LIMIT = 0.9


def _state_frequencies(states: np.ndarray) -> dict:
    keys, counts = np.unique(states, axis=0, return_counts=True)
    return {k.tobytes(): c / states.shape[0] for k, c in zip(keys, counts)}


def _chains_apart(rows: np.ndarray) -> float:
    """Largest total variation between two chains' state frequencies (0 when states rarely repeat)."""
    n_chains, n_draws = rows.shape[:2]
    worst = 0.0
    for r in range(rows.shape[2]):
        freqs = [_state_frequencies(rows[c, :, r]) for c in range(n_chains)]
        if any(len(f) > n_draws // 2 for f in freqs):  # states rarely repeat: frequencies say nothing
            continue
        for a in range(n_chains):
            for b in range(a + 1, n_chains):
                keys = set(freqs[a]) | set(freqs[b])
                tv = 0.5 * sum(abs(freqs[a].get(k, 0.0) - freqs[b].get(k, 0.0)) for k in keys)
                worst = max(worst, tv)
    return worst


def _sample_stat(stats, key: str, shape: tuple[int, ...]):
    """A sampler stat as a float array of shape (chain, draw, ...), or None when absent or of another shape."""
    if stats is None or key not in stats:
        return None
    values = stats[key].transpose("chain", "draw", ...).values
    if values.dtype == object:  # PyMC's trace stores vector stats of some steps as objects
        values = np.stack(values.ravel()).reshape(*values.shape, -1)
    values = values.astype(np.float64)
    return values if values.shape[:2] == shape else None


def _mixing_inputs(tree, name: str):
    """The draws of ``name`` and the step methods' stats of a ``pm.sample`` result, for :func:`mixing_problems`."""
    if isinstance(tree, xr.Dataset):  # a posterior group on its own
        posterior, stats = tree, None
    else:
        if "posterior" not in tree.children:
            raise ValueError(f"the DataTree has no group 'posterior'; it has {sorted(tree.children)}")
        posterior = tree["posterior"]
        stats = tree["sample_stats"] if "sample_stats" in tree.children else None
    if name not in posterior.data_vars:
        raise ValueError(
            f"the posterior has no variable {name!r} (pass the RBM variable's name as name=); "
            f"it has {sorted(posterior.data_vars)}"
        )
    values = posterior[name].transpose("chain", "draw", ...).values
    chains_draws = values.shape[:2]
    found = {key: _sample_stat(stats, key, chains_draws)
             for key in ("swap_accept_pairs", "round_trips", "n_temperatures", "ladder_carries")}
    fe = _sample_stat(stats, "free_energy", chains_draws)
    # F(v) recorded per draw (and per row of a batched variable); of no use if it belongs to another variable
    found["free_energy"] = fe if fe is not None and fe.size == int(np.prod(values.shape[:-1])) else None
    return values, found


def mixing_problems(
    draws,
    free_energy=None,
    *,
    name: str = "v",
    swap_accept_pairs=None,
    round_trips=None,
    n_temperatures=None,
    ladder_carries=None,
    tempered: bool = False,
) -> list[str]:
    """What is wrong with the chains of an RBM variable, in words (empty when nothing is seen).

    An exactly invariant sampler that does not move between the modes of
    the target gives wrong answers without an error; these checks catch the
    usual signs:

    - a chain (or a row of a batched variable) whose state never changed
      while other chains saw other states (chains that all hold one state,
      having started apart, point to a concentrated distribution instead);
    - chains that disagree: the rank-normalised R-hat of the free energy
      ``F(v)`` across chains above :data:`RHAT_LIMIT` (ArviZ's ``rhat``), or,
      where every chain revisits its states, two chains whose visited states
      barely overlap (total variation between their state frequencies above
      :data:`OVERLAP_LIMIT`: modes of equal free energy that R-hat cannot
      tell apart);
    - replica exchange whose ladder does not carry states: a neighbouring
      pair that never swapped, or no replica that crossed the whole ladder.

    Parameters
    ----------
    draws : array_like of shape (n_chains, n_draws, ..., n_visible), or xarray.DataTree
        The posterior draws of the variable, or what ``pm.sample`` returned:
        then the draws are ``posterior[name]``, and ``free_energy`` and the
        ladder statistics, where not given, are read from the
        ``sample_stats`` the package's step methods record (``free_energy``,
        ``swap_accept_pairs``, ``round_trips``, ``n_temperatures``), as
        ``pm.sample`` does after sampling.
    free_energy : array_like of shape (n_chains, n_draws, ...), optional
        ``F(v)`` of each draw (per row of a batched variable).
    name : str, default "v"
        The variable's name: used in the messages, and read from a DataTree.
    swap_accept_pairs : array_like of shape (n_chains, n_draws, n_pairs), optional
        Swap acceptance probability of each pair per draw (NaN where not
        attempted or beyond the ladder), as ``ReplicaExchange`` records it;
        a pair whose mean is below ``1 / n_draws`` counts as never swapping.
    round_trips : array_like of shape (n_chains, n_draws), optional
        Cumulative round trips of the replicas.
    n_temperatures : array_like of shape (n_chains, n_draws), optional
    ladder_carries : array_like of bool of shape (n_chains, n_draws), optional
        False where tuning found that the ladder carries almost no replica
        across (and restarted it from the modes the model's replica visited,
        or kept it) and gave the model's replica the rest of each draw's sweeps
        (the no-round-trip message then says so).
    tempered : bool, default False
        Whether the chains came from ``ReplicaExchange`` (changes the advice).

    Returns
    -------
    list of str

    Raises
    ------
    ValueError
        For a DataTree without a ``posterior`` group or without the variable ``name``.

    Examples
    --------
    >>> import numpy as np
    >>> from pymc_rbm.diagnostics import mixing_problems
    >>> draws = np.zeros((2, 50, 4), dtype=np.int8)
    >>> draws[1, :, 0] = 1  # chain 1 holds another state than chain 0, and neither moves
    >>> len(mixing_problems(draws))
    1
    """
    if isinstance(draws, xr.DataTree | xr.Dataset):
        draws, found = _mixing_inputs(draws, name)
        free_energy = found["free_energy"] if free_energy is None else free_energy
        swap_accept_pairs = found["swap_accept_pairs"] if swap_accept_pairs is None else swap_accept_pairs
        round_trips = found["round_trips"] if round_trips is None else round_trips
        n_temperatures = found["n_temperatures"] if n_temperatures is None else n_temperatures
        ladder_carries = found["ladder_carries"] if ladder_carries is None else ladder_carries
        tempered = tempered or n_temperatures is not None
    out = []
    x = np.asarray(draws)
    if x.ndim < 3 or x.shape[1] < 2:
        return out
    advice = (
        "Give its ReplicaExchange step more rungs (adapt=LadderAdaptation(max_temperatures=...)), sweeps or draws"
        if tempered
        else "Sample it with ExactDraws where its smaller layer can be enumerated, else ReplicaExchange (what "
        "pm.sample picks for RBMs with constant parameters), more sweeps per draw, or wormhole moves"
    )
    n_chains, n_draws = x.shape[:2]
    rows = x.reshape(n_chains, n_draws, -1, x.shape[-1])
    constant = np.all(rows == rows[:, :1], axis=(1, 3))  # (n_chains, n_rows)
    # a chain that kept one state is stuck when another chain saw other states of that row (all chains start
    # apart, so chains that all settle on one state say the distribution is concentrated there)
    stuck = np.zeros_like(constant)
    for c, r in zip(*np.nonzero(constant)):
        others = np.delete(rows[:, :, r], c, axis=0)
        stuck[c, r] = others.size > 0 and bool(np.any(others != rows[c, 0, r]))
    if stuck.any():
        chains = np.flatnonzero(stuck.any(axis=1)).tolist()
        out.append(
            f"The RBM variable '{name}' did not move in chain(s) {chains}: {int(stuck.sum())} chain-row(s) kept one "
            f"state for all {n_draws} draws while other chains saw other states. Those draws are not samples of "
            f"its distribution: the sampler is stuck in a mode. {advice}."
        )
    if free_energy is not None and n_chains >= 2:
        from arviz_stats.base import array_stats  # imported on first use: it takes seconds

        fe = np.asarray(free_energy, dtype=np.float64).reshape(n_chains, n_draws, -1)
        worst = 1.0
        for r in range(fe.shape[2]):
            series = fe[:, :, r]
            still = np.ptp(series, axis=1) == 0.0
            if still.any():  # ArviZ would divide by a zero within-chain variance
                seen = series[~still]
                held = series[still, 0]
                if seen.size and not all(np.isclose(seen, f, rtol=0.0, atol=1e-9).any() for f in held):
                    worst = math.inf  # a chain held a free energy that no moving chain ever had
                if np.ptp(held) > 1e-9:
                    worst = math.inf  # still chains hold different free energies
                continue
            with np.errstate(divide="ignore", invalid="ignore"):  # a folded series can be constant: NaN, ignored
                worst = max(worst, float(array_stats.rhat(series, chain_axis=0, draw_axis=1)))
        if worst > RHAT_LIMIT:
            out.append(
                f"The chains of the RBM variable '{name}' disagree: the R-hat of its free energy is {worst:.3f} "
                f"(> {RHAT_LIMIT}). They sit in different modes and do not move between them; their draws do "
                f"not represent its distribution. {advice}, and compare the chains before trusting them."
            )
    if n_chains >= 2 and not out:
        apart = _chains_apart(rows)
        if apart > OVERLAP_LIMIT:
            out.append(
                f"The chains of the RBM variable '{name}' visit different states: the total variation between "
                f"two chains' state frequencies is {apart:.2f} (> {OVERLAP_LIMIT}). Each stays in its own "
                f"mode; their draws do not represent its distribution. {advice}."
            )
    if swap_accept_pairs is not None and n_temperatures is not None:
        k = np.asarray(n_temperatures)
        pairs = np.asarray(swap_accept_pairs, dtype=np.float64)
        for c in range(pairs.shape[0]):
            if k[c].max() < 2:
                continue
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                mean = np.nanmean(pairs[c], axis=0)[: int(k[c, -1]) - 1]
            never = np.flatnonzero(mean < 1.0 / n_draws)  # fewer than one swap expected in the whole run
            if never.size:
                out.append(
                    f"Replica exchange for '{name}', chain {c}: the pair(s) of rungs {never.tolist()} never "
                    "swapped. States cannot cross the ladder there; allow more rungs (adapt=LadderAdaptation(max_temperatures=...)) or "
                    "a longer tune phase."
                )
            elif round_trips is not None and np.asarray(round_trips)[c, -1] == 0:
                carried = ladder_carries is None or bool(np.asarray(ladder_carries)[c, -1])
                out.append(
                    f"Replica exchange for '{name}', chain {c}: no replica crossed the ladder and back in "
                    f"{n_draws} draws; the tempered replicas did not reach the model. "
                    + ("" if carried else "Tuning found so too and gave the model's replica most of each draw's "
                       "sweeps: the draws rest on its own moves between modes. ")
                    + "Use more sweeps per draw or more draws, or start the ladder from a mixture of the model's "
                    "modes (ReplicaExchange(reference=\"mixture\"), or mixture_reference of data)."
                )
    return out


def unit_diagnostics(data, var_name: str = "v", *, group: str = "posterior") -> xr.Dataset:
    """Sampled mean, R-hat and bulk ESS of every unit of a binary variable, the units that never change set apart.

    ``az.rhat`` and ``az.summary`` divide by a zero within-chain variance for
    every unit that held one value in all draws (a pixel that its data, or
    the RBM, fixes), with a ``RuntimeWarning`` each, and report ESS = n draws
    for it. Here such units are marked ``constant``, without a warning, and
    the others get ArviZ's default R-hat and ESS, as ``az.summary`` lists them.

    Parameters
    ----------
    data : xarray.DataTree, Dataset or DataArray
        What ``pm.sample`` returned, one of its groups, or the variable's
        draws with dimensions ``chain`` and ``draw``.
    var_name : str, default "v"
        The variable, read from a DataTree or Dataset.
    group : str, default "posterior"
        Group of a DataTree.

    Returns
    -------
    xarray.Dataset
        Over the variable's dimensions besides ``chain`` and ``draw``
        (``(K, n_visible)`` for ``RBM("v", ..., shape=(K, n_visible))``), with
        their coordinates:

        - ``mean``: the unit's mean over all draws (its marginal
          ``p(v_i = 1)`` as sampled);
        - ``constant``: True where the unit held one value in every draw of
          every chain;
        - ``rhat``: ArviZ's rank-normalised split R-hat (``az.rhat``'s
          default); NaN for a constant unit, ``inf`` where every chain held
          one value but not all chains the same (the chains disagree and
          none moves);
        - ``ess_bulk``: ArviZ's bulk ESS (``az.ess``'s default); NaN for a
          constant unit, 0.0 where the chains held different values.

    Raises
    ------
    ValueError
        For a missing group or variable, or draws without ``chain`` and
        ``draw`` dimensions.

    Examples
    --------
    >>> import numpy as np
    >>> import xarray as xr
    >>> from pymc_rbm.diagnostics import unit_diagnostics
    >>> v = np.random.default_rng(0).integers(0, 2, size=(2, 100, 3))
    >>> v[:, :, 1] = 1  # unit 1 is always on
    >>> d = unit_diagnostics(xr.DataArray(v, dims=("chain", "draw", "v_dim_0")))
    >>> d["constant"].values, bool(np.isnan(d["rhat"][1])), bool(d["rhat"][0] < 1.05)
    (array([False,  True, False]), True, True)
    """
    from pymc_rbm.diagnostics.autocorr import _quantity_from_tree

    if isinstance(data, xr.DataTree | xr.Dataset):
        data = _quantity_from_tree(data, var_name, group)
    if not isinstance(data, xr.DataArray):
        raise TypeError(f"data must be a DataTree, Dataset or DataArray, got {type(data).__name__}")
    missing = [d for d in ("chain", "draw") if d not in data.dims]
    if missing:
        raise ValueError(f"the draws have dimensions {data.dims}, but not {missing}")
    draws = data.transpose("chain", "draw", ...)
    unit_dims, unit_shape = draws.dims[2:], draws.shape[2:]
    x = draws.values.astype(np.float64).reshape(*draws.shape[:2], -1)  # (chain, draw, unit)
    still = np.all(x == x[:, :1], axis=(0, 1))  # every chain held one value
    constant = still & np.all(x[:, 0] == x[0, 0], axis=0)
    apart = still & ~constant  # each chain held one value, not all the same one
    rhat = np.full(x.shape[2], np.nan)
    ess = np.full(x.shape[2], np.nan)
    rhat[apart], ess[apart] = math.inf, 0.0
    if (~still).any():
        from arviz_stats.base import array_stats  # imported on first use: it takes seconds

        series = np.moveaxis(x[:, :, ~still], -1, 0)  # (unit, chain, draw)
        with np.errstate(divide="ignore", invalid="ignore"):  # a split half or folded series can be constant
            rhat[~still] = array_stats.rhat(series, chain_axis=1, draw_axis=2)
            ess[~still] = array_stats.ess(series, chain_axis=1, draw_axis=2, method="bulk")
    values = {"mean": x.mean(axis=(0, 1)), "constant": constant, "rhat": rhat, "ess_bulk": ess}
    coords = {d: draws.coords[d] for d in unit_dims if d in draws.coords}
    return xr.Dataset({k: (unit_dims, a.reshape(unit_shape)) for k, a in values.items()}, coords=coords)
