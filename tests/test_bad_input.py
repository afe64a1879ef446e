"""Bad input to public entry points raises AtomsparkError naming the problem (not a stray
TypeError/AttributeError/ValueError from deep inside NumPy or a missing attribute)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from atomspark.mapping.costs import dense_workload, price_dense
from atomspark.mapping.energy import estimate_energy
from atomspark.mapping.hardware import load_hardware
from atomspark.mapping.placement import place
from atomspark.networks import datasets
from atomspark.networks.rsgn.model import (
    RSGNConfig,
    init_params,
    validate_params,
)
from atomspark.networks.rsgn_compile import compile_rsgn_tokens
from atomspark.networks.vn.hebb import learn_dictionary
from atomspark.networks.vn.model import VNModel
from atomspark.networks.vn_compile import compile_vn_model
from atomspark.scenarios.runs.cuba import CubaConfig
from atomspark.sim.core import AtomsparkError
from atomspark.sim.engine import Engine
from atomspark.sim.graph import Graph

SMALL_RSGN = RSGNConfig(n_nodes=8, d_hidden=4, d_in=3, n_classes=2, n_steps=2)


@pytest.fixture(scope="module")
def vn_graph() -> Graph:
    model = VNModel.random(6, [(5, 4)], seed=1)
    return compile_vn_model(model, np.ones(6))


@pytest.fixture(scope="module")
def loihi2():
    return load_hardware("loihi2")


# --- data set generators ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("make", "match"),
    [
        (lambda: datasets.hierarchical_sequences(n=2, length=4), "length"),
        (lambda: datasets.long_range_sequences(n=2, length=8), "length"),
        (lambda: datasets.sparse_dictionary_data(n=2, n_atoms=2, active=3), "active"),
        (lambda: datasets.hierarchical_sequences(n=2, length=16, seed=-1), "seed"),
        (lambda: datasets.long_range_sequences(n=2, length=16, seed=-1), "seed"),
        (lambda: datasets.sparse_dictionary_data(n=2, seed=-1), "seed"),
    ],
)
def test_dataset_generators_name_the_bad_argument(make, match):
    with pytest.raises(AtomsparkError, match=match):
        make()


@pytest.mark.parametrize("fraction", [0.0, 1.0, 1.5, -0.2])
def test_dataset_split_rejects_fraction_outside_unit_interval(fraction):
    data = datasets.long_range_sequences(n=4, length=16)
    with pytest.raises(AtomsparkError, match="train_fraction"):
        data.split(fraction)


# --- model constructors -------------------------------------------------------------------------


def test_vn_from_arrays_rejects_non_sequences():
    with pytest.raises(AtomsparkError, match="S: expected one 2-D array per layer"):
        VNModel.from_arrays(None, None, 0.1)


def test_vn_random_and_learning_reject_negative_seed():
    with pytest.raises(AtomsparkError, match="seed"):
        VNModel.random(6, [(5, 4)], seed=-1)
    model = VNModel.random(6, [(5, 4)], seed=0)
    with pytest.raises(AtomsparkError, match="seed"):
        learn_dictionary(model, np.ones((4, 6)), epochs=1, seed=-3)


def test_rsgn_config_from_meta_needs_a_dict():
    with pytest.raises(AtomsparkError, match="config: expected a dict"):
        RSGNConfig.from_meta([1, 2])


def test_rsgn_init_params_checks_config_and_seed():
    with pytest.raises(AtomsparkError, match="config: expected RSGNConfig"):
        init_params("published")
    with pytest.raises(AtomsparkError, match="seed"):
        init_params(SMALL_RSGN, seed=-1)


def test_rsgn_entry_points_check_config_and_params_types():
    params = init_params(SMALL_RSGN, seed=0)
    with pytest.raises(AtomsparkError, match="config: expected RSGNConfig"):
        compile_rsgn_tokens(params, "published", np.ones((5, 3)))
    with pytest.raises(AtomsparkError, match="params: expected RSGNParams"):
        validate_params({"positions": params.positions}, SMALL_RSGN)


def test_cuba_config_rejects_negative_seed():
    with pytest.raises(AtomsparkError, match="seed"):
        CubaConfig(seed=-1)


# --- engine and graph ---------------------------------------------------------------------------


def test_graph_rejects_non_population():
    with pytest.raises(AtomsparkError, match="populations: expected Population, got str"):
        Graph(["layer0"])


def test_engine_record_needs_population_state_pairs(vn_graph):
    with pytest.raises(AtomsparkError, match="record: expected \\(population, state\\) pairs"):
        Engine(vn_graph).run(2, record=["layer0"])


# --- placement and pricing ----------------------------------------------------------------------


def test_place_rejects_dense_hardware_and_negative_seed(loihi2):
    adjacency = sp.csr_matrix(np.ones((4, 4)))
    with pytest.raises(AtomsparkError, match="neuromorphic hardware"):
        place(adjacency, load_hardware("h100"))
    with pytest.raises(AtomsparkError, match="seed"):
        place(adjacency, loihi2, seed=-1)


def test_estimate_energy_checks_argument_types(vn_graph, loihi2):
    adjacency = vn_graph.unit_adjacency()
    profile = Engine(vn_graph).run(2)
    placement = place(adjacency, loihi2)
    with pytest.raises(AtomsparkError, match="profile: expected an engine Profile"):
        estimate_energy("profile", placement, adjacency, loihi2)
    with pytest.raises(AtomsparkError, match="placement: expected a Placement"):
        estimate_energy(profile, None, adjacency, loihi2)
    with pytest.raises(AtomsparkError, match="'loihi2' is not neuromorphic"):
        estimate_energy(profile, placement, adjacency, "loihi2")


def test_dense_pricing_checks_graph_and_hardware(vn_graph):
    with pytest.raises(AtomsparkError, match="graph: expected an engine Graph"):
        dense_workload("graph", 3)
    with pytest.raises(AtomsparkError, match="expected a DenseHardware"):
        price_dense(vn_graph, 3, dense=42)


@pytest.mark.parametrize("value", ["x", None, [1], float("nan"), 2.5, True])
def test_integer_checks_name_non_numbers(value):
    from atomspark.sim.core import require_int

    with pytest.raises(AtomsparkError, match="seed: must be an integer"):
        require_int("seed", value)


@pytest.mark.parametrize("value", ["x", None, [1]])
def test_positive_checks_name_non_numbers(value):
    from atomspark.sim.core import require_positive

    with pytest.raises(AtomsparkError, match="noise: must be a number"):
        require_positive("noise", value)
