"""Tests of the exact harness pymc_rbm.testing, one module per module of the package."""
