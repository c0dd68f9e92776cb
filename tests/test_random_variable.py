"""The RBM's own logp term: fixed parameters take the cached free energy, with the same values as the graph."""

import numpy as np
import pymc as pm
import pytensor
import pytensor.tensor as pt
import pytest
from pytensor.graph.basic import Apply
from pytensor.graph.op import Op
from pytensor.graph.traversal import ancestors
from pytensor.link.numba.dispatch.basic import numba_funcify_and_cache_key

from pymc_rbm import RBM, RBMParams
from pymc_rbm.energy import free_energy
from pymc_rbm.estimators import log_partition_exact
from pymc_rbm.random_variable import FixedFreeEnergy


def own_term(model):
    """The RBM's own logp term of ``model`` as a function of its value, and the term's graph."""
    term = model.logp(vars=[model["v"]], sum=False)[0]
    return model.compile_fn(term, inputs=[model.rvs_to_values[model["v"]]], on_unused_input="ignore"), term


@pytest.fixture(scope="module")
def params():
    return RBMParams.random(7, 5, scale=1.5, rng=3)


@pytest.fixture(scope="module")
def fixed_and_data(params):
    """The same 4-row RBM with constant parameters and with the parameters as ``pm.Data``."""
    with pm.Model() as fixed:
        RBM("v", params.W, params.vbias, params.hbias, shape=(4, 7))
    with pm.Model() as data:
        W, vbias, hbias = (pm.Data(n, x) for n, x in zip(("W", "vbias", "hbias"), (params.W, params.vbias, params.hbias)))
        RBM("v", W, vbias, hbias, shape=(4, 7))
    return own_term(fixed), own_term(data)


def test_constant_parameters_take_the_cached_free_energy_and_data_parameters_the_graph(fixed_and_data):
    (_, fixed_term), (_, data_term) = fixed_and_data

    def has_cached(term):
        return any(getattr(x, "owner", None) is not None and isinstance(x.owner.op, FixedFreeEnergy) for x in ancestors([term]))

    assert has_cached(fixed_term)
    assert not has_cached(data_term)


def test_the_cached_term_equals_the_graph_and_minus_f_minus_log_z(params, fixed_and_data):
    (fixed, _), (data, _) = fixed_and_data
    rng = np.random.default_rng(0)
    log_z = log_partition_exact(params).log_z
    for _ in range(5):
        v = rng.integers(0, 2, (4, 7))
        v[1, 3] = 2  # a row that is not binary: -inf in both
        expected = -free_energy(v.astype(float), params) - log_z
        expected[1] = -np.inf
        np.testing.assert_allclose(fixed({"v": v}), expected, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(data({"v": v}), fixed({"v": v}), rtol=1e-12, atol=1e-12)


class IdentityCached(FixedFreeEnergy):
    """The likely mistake: a cache keyed on the array's identity (the negative control)."""

    def perform(self, node, inputs, output_storage):
        [v] = inputs
        if self._last is None or self._last[0] is not v:
            self._last = (v, -free_energy(v.astype(np.float64), self.params))
        output_storage[0][0] = self._last[1].copy()


def cached_values(op, params):
    """The Op's outputs for one array changed in place between calls, and their exact values."""
    v = np.zeros((4, 7), dtype=np.int64)
    got, exact = [], []
    for row in range(3):
        v[row, row] = 1  # the same array, mutated
        storage = [None]
        op.perform(None, [v], [storage])
        storage[0][:] = 0.0  # a caller that overwrites the result must not corrupt the cache
        op.perform(None, [v], [storage])
        got.append(storage[0])
        exact.append(-free_energy(v.astype(np.float64), params))
    return np.array(got), np.array(exact)


def test_the_cache_follows_the_value_when_it_is_changed_in_place_and_the_identity_cache_does_not(params):
    got, exact = cached_values(FixedFreeEnergy(params), params)
    np.testing.assert_allclose(got, exact, rtol=1e-12, atol=1e-12)
    stale, exact = cached_values(IdentityCached(params), params)
    assert not np.allclose(stale, exact)


def test_nuts_on_the_other_variables_sees_the_same_log_density_with_fixed_or_data_parameters(params):
    rng = np.random.default_rng(1)
    y, B = rng.normal(size=(4, 2)), rng.normal(size=(7, 2))
    states = [np.ones((4, 7), dtype=np.int64)] + [rng.integers(0, 2, (4, 7)) for _ in range(3)]
    values = {}
    for kind in ("fixed", "data"):
        with pm.Model() as model:
            arrays = (params.W, params.vbias, params.hbias)
            W, vbias, hbias = arrays if kind == "fixed" else (
                pm.Data(n, x) for n, x in zip(("W", "vbias", "hbias"), arrays))
            v = RBM("v", W, vbias, hbias, shape=(4, 7))
            sigma = pm.HalfNormal("sigma", 1.0)
            pm.Normal("y", v @ B, sigma, observed=y)
        f = model.logp_dlogp_function([sigma], ravel_inputs=True)
        values[kind] = []
        for k, state in enumerate(states + states[:1]):  # back to the first state: the cache is refreshed
            f.set_extra_values({"v": state})
            values[kind].append(f(np.array([0.3 * (k + 1)])))
    for (lf, gf), (ld, gd) in zip(values["fixed"], values["data"]):
        np.testing.assert_allclose(lf, ld, rtol=1e-12)
        np.testing.assert_allclose(gf, gd, rtol=1e-12)



class ObjectModeFreeEnergy(Op):
    """The same computation as a Python Op without a compiled form (the negative control: Numba's object-mode
    fallback)."""

    __props__ = ()

    def __init__(self, params):
        self.inner = FixedFreeEnergy(params)

    def make_node(self, value):
        return Apply(self, [value], [pt.dvector()])

    def perform(self, node, inputs, output_storage):
        self.inner.perform(node, inputs, output_storage)


def numba_cache_key(op_type, params):
    """The Numba cache key of a compiled function of ``op_type(params)`` of a value of 4 x 7, checked against
    the free energy (None: not cacheable, so compiled afresh by every ``pm.sample`` that holds it)."""
    value = pt.lmatrix("v")
    f = pytensor.function([value], op_type(params)(value).sum() * 2.0, mode="NUMBA")
    v = np.eye(4, 7, dtype=np.int64)
    np.testing.assert_allclose(f(v), -2.0 * free_energy(v.astype(np.float64), params).sum(), rtol=1e-12)
    return numba_funcify_and_cache_key(f.maker.fgraph)[1]


@pytest.mark.filterwarnings("ignore:Numba will use object mode")
def test_compiled_functions_that_hold_the_term_are_cacheable_and_the_object_mode_fallback_is_not(params):
    assert numba_cache_key(FixedFreeEnergy, params) is not None
    assert numba_cache_key(ObjectModeFreeEnergy, params) is None


def test_the_number_of_a_compiled_op_stays_valid_while_any_equal_op_lives(params):
    import gc
    import weakref

    from pymc_rbm.random_variable import _live_op_perform, _register_live_op

    v = np.eye(4, 7, dtype=np.int64)
    first, second = FixedFreeEnergy(params), FixedFreeEnergy(params)
    key = 0x5E57  # a number no compiled Op takes (the real ones are 56-bit hashes)
    _register_live_op(key, first)
    _register_live_op(key, second)
    keep_first_only = weakref.WeakValueDictionary()  # the negative control: one Op per number, the first
    keep_first_only.setdefault(key, first)
    keep_first_only.setdefault(key, second)
    del first
    gc.collect()
    np.testing.assert_allclose(_live_op_perform(key, 1, (v,)), -free_energy(v.astype(np.float64), params), rtol=1e-12)
    assert key not in keep_first_only  # its function holding `second` would find no Op
