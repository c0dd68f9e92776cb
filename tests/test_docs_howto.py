"""docs/howto_prior_likelihood.md runs as written, and what it says it shows is true.

The page's ```python blocks are executed in order in one namespace (as a reader would paste them); the tests
then check its results against enumeration: each row's posterior of the missing cells, the Gaussian prior's
prediction of the unread units and the posterior letters of the categorical prior are computed exactly here,
independently of the samplers.
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import numpy as np
import pytest
from scipy.special import logsumexp

PAGE = Path(__file__).resolve().parents[1] / "docs" / "howto_prior_likelihood.md"


def python_blocks(text: str) -> list[str]:
    """The bodies of the page's fenced ```python blocks, in order."""
    return re.findall(r"^```python\n(.*?)^```", text, flags=re.MULTILINE | re.DOTALL)


@pytest.fixture(scope="module")
def page():
    """The namespace left by running every python block of the page in order."""
    namespace = {"__name__": "howto_prior_likelihood"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the page's own warnings are caught where it shows them
        for i, block in enumerate(python_blocks(PAGE.read_text(encoding="utf-8")), start=1):
            exec(compile(block, f"{PAGE.name}, python block {i}", "exec"), namespace)  # noqa: S102
    return namespace


def test_the_page_has_its_blocks():
    blocks = python_blocks(PAGE.read_text(encoding="utf-8"))
    assert len(blocks) >= 10
    for block in blocks:
        compile(block, PAGE.name, "exec")


def test_the_three_forms_of_the_likelihood_are_per_unit_evidence_and_get_exact_draws(page):
    from pymc_rbm.step_methods.enumerated import exact_draws_pay

    assert page["fast"] == {"elementwise": True, "potential": True, "readings": True}
    for name in page["fast"]:
        model = page[name]
        assert exact_draws_pay(model["v"], model), name


def test_a_term_coupling_rows_takes_the_general_path_and_says_so_once(page):
    assert page["step"].other_terms.structure is None
    assert len(page["slow_path"]) == 1
    assert "'counts'" in page["slow_path"][0] and "'v'" in page["slow_path"][0]


def test_the_posterior_puts_flipped_pixels_back(page):
    truth, noisy, p_on = page["truth"], page["noisy"], page["p_on"]
    assert ((p_on > 0.5) == truth).mean() > (noisy == truth).mean()
    flip = page["idata"].posterior["flip"].values
    assert 0.05 < flip.mean() < 0.4  # 96 pixels, about a fifth of them flipped
    assert page["mixing_problems"](page["idata"], name="v") == []
    assert page["units"]["rhat"].shape == (8, 16)
    assert page["ess_free_energy"](page["idata"]) > 100


def test_unread_pixels_are_completed_by_the_prior(page):
    truth, seen, p_seen = page["truth"], page["seen"], page["p_seen"]
    assert (~seen).sum() > 10
    assert ((p_seen[~seen] > 0.5) == truth[~seen]).mean() > 0.7  # a coin would get half


def test_gaps_in_the_rbm_data_are_filled_by_their_exact_conditional(page):
    """Each row's missing cells follow the RBM with the observed cells clamped: enumerated here."""
    from pymc_rbm.energy import free_energy
    from pymc_rbm.estimators import binary_states

    params, gappy, filled = page["params"], page["gappy"], page["filled"]
    for k in range(gappy.shape[0]):
        lost = np.isnan(gappy[k])
        if not lost.any():
            continue
        fills = binary_states(int(lost.sum()))
        rows = np.repeat(np.nan_to_num(gappy[k])[None], len(fills), axis=0)
        rows[:, lost] = fills
        log_p = -free_energy(rows, params)
        exact = np.exp(log_p - logsumexp(log_p)) @ fills
        np.testing.assert_allclose(filled[k, lost], exact, atol=0.1, err_msg=f"row {k}")


def test_the_gaussian_prior_predicts_the_unread_units_as_enumeration_does(page):
    """``E[x_unread | y] = Σ_h p(h | y) μ_h[3:]``, ``p(h | y) ∝ p(h) Π_i N(y_i; μ_h,i, σ_i² + 0.3²)``."""
    from pymc_rbm.gaussian import hidden_marginal, visible_mean

    gparams, y, x_mean = page["gparams"], page["y"], page["x_mean"]
    hs, p_h = hidden_marginal(gparams)
    mu = visible_mean(hs, gparams)  # (2**n_hidden, n_visible): each component's mean
    var = gparams.sigma[:3] ** 2 + 0.3**2
    for k in range(y.shape[0]):
        log_w = np.log(p_h) - 0.5 * (((y[k] - mu[:, :3]) ** 2) / var).sum(axis=1)
        w = np.exp(log_w - logsumexp(log_w))
        np.testing.assert_allclose(x_mean[k, 3:], w @ mu[:, 3:], atol=0.35, err_msg=f"row {k}")
        assert np.all(np.abs(x_mean[k, :3] - y[k]) < 1.0)  # the read units stay near their readings


def test_the_posterior_letters_match_enumeration(page):
    """Each sequence's posterior ``p(s) Π_j table[s_j, read_j]`` over all 4**8 sequences."""
    from pymc_rbm.categorical import log_prob_exact

    cparams, reads, table, letter_probs = page["cparams"], page["reads"], page["table"], page["letter_probs"]
    n_sites, q = cparams.n_visible, cparams.n_states
    every = np.indices((q,) * n_sites).reshape(n_sites, -1).T  # (q**n_sites, n_sites)
    log_prior = log_prob_exact(every, cparams)
    for k in range(reads.shape[0]):
        log_post = log_prior + np.log(table[every, reads[k]]).sum(axis=1)
        post = np.exp(log_post - logsumexp(log_post))
        exact = np.stack([post @ (every == c) for c in range(q)], axis=-1)  # (n_sites, q)
        np.testing.assert_allclose(letter_probs[k], exact, atol=0.1, err_msg=f"sequence {k}")


def test_the_scores_are_what_the_page_says(page):
    from pymc_rbm.categorical import log_prob_exact as categorical_log_prob
    from pymc_rbm.estimators import log_partition_exact

    assert page["est"].method == "exact"
    assert page["est"].log_z == pytest.approx(log_partition_exact(page["params"]).log_z, abs=1e-9)
    checks, exact = page["checks"], page["exact"]
    assert checks["unvisited_modes"] == 1 and len(checks["warnings"]) == 1
    assert any(issubclass(w.category, RuntimeWarning) for w in page["caught"])
    assert exact - page["by_ais"].log_z > 0.5  # AIS saw one mode of two: about log 2 low
    ladder = page["by_ladder"]
    assert abs(ladder.log_z - exact) < 5 * ladder.stderr + 0.05
    assert page["cat_est"].method == "exact"
    np.testing.assert_allclose(page["log_likelihood"](page["cparams"], page["seqs"], log_z=page["cat_est"]),
                               categorical_log_prob(page["seqs"], page["cparams"]), rtol=1e-12)
