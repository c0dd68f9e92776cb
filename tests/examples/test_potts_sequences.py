"""examples/potts_sequences.py: its training (fit on the generated sequence family) learns the two motifs."""

import runpy
from pathlib import Path

import numpy as np

from pymc_rbm.categorical import CategoricalRBMParams, log_prob_exact

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "potts_sequences.py"


def test_training_learns_the_motifs(capsys):
    example = runpy.run_path(str(EXAMPLE))
    rng = np.random.default_rng(1)
    data = example["sequence_family"](500, rng)
    params = example["train"](data, n_hidden=4, steps=200, rate=0.1, rng=rng)
    assert isinstance(params, CategoricalRBMParams) and params.W.shape == (6, 4, 4)
    printed = capsys.readouterr().out
    assert printed.count("mean log-likelihood") == 6
    # the independent-site start is -5.66 nats; the two motifs with 10% mutations are worth about -3.3
    assert log_prob_exact(data, params).mean() > -4.5
    motifs = log_prob_exact(example["MOTIFS"], params)
    assert np.all(motifs > np.log(0.05)), np.exp(motifs)
