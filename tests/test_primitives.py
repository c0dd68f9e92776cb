"""pymc_rbm.primitives: the product formed in blocks of rows."""

from __future__ import annotations

import numpy as np

from pymc_rbm.primitives import PRODUCT_ROWS, product


def test_product_in_blocks_is_the_matrix_product_for_any_batch_shape():
    rng = np.random.default_rng(0)
    M = rng.normal(size=(300, 40))
    x = (rng.random((3, PRODUCT_ROWS, 300)) < 0.3).astype(np.int8)  # 768 rows: three blocks
    out = product(x, M)
    assert out.shape == (3, PRODUCT_ROWS, 40) and out.dtype == np.float64
    np.testing.assert_allclose(out, x @ M, rtol=1e-12, atol=1e-12)
    # a block's rows depend on the number of rows only: the same input gives the same bits again
    assert product(x, M).tobytes() == out.tobytes()
    small = x[0, :2]  # below the size that BLAS may thread: x @ M itself
    assert product(small, M).tobytes() == (small @ M).tobytes()
    assert product(x[0, 0], M).tobytes() == (x[0, 0] @ M).tobytes()  # one row
    assert product(x[:1, 0], M).tobytes() == (x[:1, 0] @ M).tobytes()  # one row of a matrix


def test_product_of_tensors_is_symbolic():
    import pytensor.tensor as pt

    v = pt.matrix("v")
    out = product(v, np.ones((3, 2)))
    assert out.eval({v: np.ones((4, 3))}).tolist() == [[3.0, 3.0]] * 4
