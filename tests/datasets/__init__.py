"""Tests of pymc_rbm.datasets, one module per data set."""
