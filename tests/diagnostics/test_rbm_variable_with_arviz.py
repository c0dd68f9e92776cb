"""The example of docs/sampling.md, "Looking at an RBM variable with ArviZ", runs as written and says what it claims."""

from __future__ import annotations

import pathlib
import re
import warnings

import numpy as np
import pytest

DOCS = pathlib.Path(__file__).parents[2] / "docs" / "sampling.md"
HEADING = "### Looking at an RBM variable with ArviZ"


def _example() -> str:
    text = DOCS.read_text()
    assert HEADING in text, f"{DOCS} has no section {HEADING!r}"
    section = text.split(HEADING, 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, flags=re.DOTALL)
    assert len(blocks) == 1, "the section should hold one python example"
    return blocks[0]


def test_the_docs_example_of_an_rbm_variable_with_arviz_runs_quietly():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    namespace = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            exec(compile(_example(), str(DOCS), "exec"), namespace)
        finally:
            plt.close("all")
    runtime = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
    assert runtime == []  # no division warnings from constant units
    each, total, pooled = namespace["each"], namespace["total"], namespace["pooled"]
    # 20 rows with their own data: the default is the sum of the per-row ESS, pooling the rows collapses
    assert each.shape == (20,) and np.all(each > 300)
    assert total == pytest.approx(each.sum())
    assert total > 20_000 and pooled < 100  # as the docs say
    units = namespace["units"]
    assert units["rhat"].dims == ("v_dim_0", "v_dim_1") and units["rhat"].shape == (20, 16)
    assert 0 < namespace["n_constant"] < 320  # the data fix some pixels, not all
    moving = ~units["constant"].values
    assert np.all(np.isnan(units["rhat"].values[~moving])) and np.all(units["rhat"].values[moving] < 1.05)
