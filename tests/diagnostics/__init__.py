"""Tests of pymc_rbm.diagnostics, one module per module of the package."""
