"""One placement truth: pricing and the deployment report fit a network the same way, for every
unit model; a mapping that does not fit is never priced; static power is scoped the same way on
the chip as on the GPU."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from atomspark.mapping.core_fit import core_use, over_limit
from atomspark.mapping.costs import compare_costs
from atomspark.mapping.deployment import deployment_report
from atomspark.mapping.energy import estimate_energy
from atomspark.mapping.hardware import load_hardware
from atomspark.mapping.layouts import fit_graph, split_cost_model
from atomspark.mapping.quantize import quantize_lif_graph, quantize_rsgn_graph, quantize_vn_graph
from atomspark.mapping.vn_standard import vn_standard_graph
from atomspark.networks import rsgn
from atomspark.networks.rsgn_compile import compile_rsgn_tokens
from atomspark.networks.vn import VNModel
from atomspark.networks.vn_compile import compile_vn_model
from atomspark.sim.graph import Graph, Population, Projection
from atomspark.sim.profile import Profile
from atomspark.sim.unit_model import registered_models
from atomspark.sim.units.lif import LIFParams


def _rsgn_graph(mode: str, n: int = 40, d: int = 16) -> tuple[Graph, np.ndarray]:
    extra = {"k_nearest": 6, "cutoff": 0.2} if mode == "sparse" else {}
    cfg = rsgn.RSGNConfig(mode=mode, n_nodes=n, d_hidden=d, n_classes=3, n_steps=2, **extra)
    params = rsgn.init_params(cfg, seed=0)
    tokens = np.random.default_rng(0).standard_normal((6, cfg.d_in))
    return compile_rsgn_tokens(params, cfg, tokens), params.positions


def _lif_graph() -> Graph:
    rng = np.random.default_rng(0)
    pops = [
        Population("a", 30, LIFParams(0.1, 0.1, 1.0)),
        Population("b", 20, LIFParams(0.1, 0.1, 1.0)),
    ]
    return Graph(pops, [Projection("a", "b", rng.uniform(0, 0.5, (20, 30)))])


def _graphs() -> dict[str, tuple[Graph, np.ndarray | None]]:
    vn = compile_vn_model(
        VNModel.random(16, [(24, 8), (12, 4)], lam=[0.1, 0.1], seed=0), np.ones(16)
    )
    published, positions = _rsgn_graph("published")
    return {
        "vn": (vn, None),
        "vn_fixed": (quantize_vn_graph(vn), None),
        "lif": (_lif_graph(), None),
        "lif_fixed": (quantize_lif_graph(_lif_graph()), None),
        "rsgn": (published, positions),
        "rsgn_fixed": (quantize_rsgn_graph(published), positions),
        "rsgn_fixed_split": (quantize_rsgn_graph(published, split_w_h=True), positions),
        # sigma-delta units as VN's standard-process export builds them (two per signed atom)
        "sigma_delta": (vn_standard_graph(vn), None),
        "sigma_delta_fixed": (vn_standard_graph(vn, frac_bits=12), None),
    }


def _busy_profile(graph: Graph, steps: int = 4) -> Profile:
    """Every unit updates and fires every step (counts only matter for pricing)."""
    sizes = graph.sizes
    prof = Profile.empty([p.name for p in graph.populations], sizes, steps)
    for name in ("events", "updates", "active"):
        getattr(prof, name)[:] = sizes
    prof.synops[:] = sizes * 3
    prof.unit_events = [np.full(int(s), steps) for s in sizes]
    return prof


def _tight(hw, fan_in: int):
    return dataclasses.replace(
        hw, limits=dataclasses.replace(hw.limits, max_fan_in_axons_per_core=fan_in)
    )


GRAPHS = _graphs()


def test_every_unit_model_is_covered():
    """Every built-in unit model (tests register examples of their own, which are not priced)."""
    builtin = {
        m.name for m in registered_models() if m.params_type.__module__.startswith("atomspark.")
    }
    assert builtin == set(GRAPHS)


@pytest.mark.parametrize("name", sorted(GRAPHS))
@pytest.mark.parametrize("fan_in", [4096, 300, 12])
def test_pricing_and_deployment_agree_on_fit(name, fan_in):
    graph, positions = GRAPHS[name]
    hw = _tight(load_hardware("loihi2"), fan_in)
    rep = deployment_report(graph, hw, positions=positions)
    cost = compare_costs(graph, _busy_profile(graph), hw, "h100", n_samples=1, positions=positions)
    assert rep.fits == cost.fits
    if rep.fits:
        assert cost.neuromorphic.cores_used == len(rep.cores)
        assert cost.fit.layout == rep.layout
    else:
        assert cost.neuromorphic is None and cost.energy_ratio is None
        assert cost.to_dict()["neuromorphic"] is None and rep.problems


@pytest.mark.parametrize("fan_in", [4096, 700, 300, 12])
def test_an_infeasible_placement_is_never_priced(fan_in):
    """Whatever layout is priced, every one of its cores is within every limit; when the node
    layout breaks the axon limit the split layout is tried, and when it breaks too, no energy."""
    graph, positions = GRAPHS["rsgn"]
    hw = _tight(load_hardware("loihi2"), fan_in)
    fit = fit_graph(graph, hw, positions=positions)
    cost = compare_costs(graph, _busy_profile(graph), hw, "h100", positions=positions)
    if not fit.fits:
        assert cost.neuromorphic is None and fit.problems
        return
    cores = core_use(fit.placement.unit_core, fit.cmap.adjacency, fit.cmap.synapses, hw)
    assert over_limit(cores, hw) == []
    assert max(c.fan_in_axons for c in cores) <= fan_in
    assert cost.neuromorphic.energy_per_sample_j > 0


def test_published_rsgn_node_layout_does_not_fit_and_split_does():
    graph, positions = _rsgn_graph("published", n=96, d=64)
    hw = load_hardware("loihi2")
    node = fit_graph(graph, hw, layout="node", positions=positions)
    assert not node.fits and "fan-in 6080 exceeds 4096" in node.problems[0]
    split = fit_graph(graph, hw, positions=positions)
    assert split.fits and split.layout == "split" and split.tried[0]["fits"] is False


def test_split_layout_keeps_the_engine_synops_and_adds_the_norm():
    graph, positions = _rsgn_graph("sparse")
    hw = load_hardware("loihi2")
    fit = fit_graph(graph, hw, layout="split", positions=positions)
    prof = _busy_profile(graph)
    scalar = fit.cmap.to_profile(prof)
    n, d = graph.total_units, 16
    upd = prof.updates.sum()
    pool = split_cost_model(graph).pool.nnz
    pooled = np.rint(prof.updates.sum(axis=1) * pool / n).sum()
    # messages x d and a flag per message, W_h d^2 per update, the norm's three terms (B -> R)
    # and four control values (R -> B) per compartment and update, the pool exchange (float:
    # one part each)
    assert scalar.synops.sum() == prof.synops.sum() * (d + 1) + upd * d * (d + 3 + 4) + pooled
    assert scalar.population_sizes.tolist() == [n * d, n * d, n]


def test_static_power_scope():
    graph, _ = GRAPHS["vn"]
    hw = load_hardware("loihi2")
    fit = fit_graph(graph, hw)
    prof = _busy_profile(graph)
    kw = {"n_samples": 1}
    shared = estimate_energy(
        prof, fit.placement, fit.cmap.adjacency, hw, static_scope="shared", **kw
    )
    device = estimate_energy(
        prof, fit.placement, fit.cmap.adjacency, hw, static_scope="device", **kw
    )
    p, t = hw.static_power_per_core_w, shared.time_per_sample_s
    assert shared.breakdown.static == pytest.approx(p * shared.cores_used * t)
    assert device.breakdown.static == pytest.approx(p * hw.limits.cores_per_chip * t)
    assert device.static_scope == "device" and shared.static_scope == "shared"
