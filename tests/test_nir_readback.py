"""NIR read back by an independent consumer: nirtorch's graph interpreter runs the exported file.

The consumer sees only the NIR file: nirtorch wires the graph (its own Linear mapping, its own
handling of the recurrent edge) and the CubaLIF nodes run NIR's documented equations

    tau_syn dI/dt = -I + w_in S,    tau_mem dv/dt = (v_leak - v) + r I,    z = v > v_th -> v_reset

by forward Euler with the file's dt (metadata dt_steps = 1), updating I before v as snnTorch's
Synaptic neuron does. Nothing of atomspark's LIFParams is read. Two conventions differ and are
mapped, not hidden: the engine's external input enters the current of the same step (as NIR's
S does), but every atomspark projection takes one step while nirtorch evaluates a feed-forward
edge within the step, so a population behind k feed-forward projections runs k steps early in
the consumer (its recurrent edge takes one step in both). The downstream population starts at
rest with no bias, so the shift is exact.
"""

import numpy as np
import pytest
import scipy.sparse as sp
from atomspark.mapping.nir_export import export_nir
from atomspark.sim.engine import Engine
from atomspark.sim.graph import Graph, Population, Projection
from atomspark.sim.units.lif import LIFParams

pytestmark = pytest.mark.torch
nir = pytest.importorskip("nir")
torch = pytest.importorskip("torch")
nirtorch = pytest.importorskip("nirtorch")

STEPS = 200
ATOL = 1e-9  # float64 on both sides; only the order of the Euler arithmetic differs


class EulerCubaLIF(torch.nn.Module):
    """nir.CubaLIF by forward Euler with step dt, read from the NIR node alone."""

    def __init__(self, node: "nir.CubaLIF", dt: float) -> None:
        super().__init__()
        as_t = lambda a: torch.as_tensor(np.asarray(a, dtype=np.float64))  # noqa: E731
        self.dt = dt
        self.tau_syn, self.tau_mem = as_t(node.tau_syn), as_t(node.tau_mem)
        self.r, self.v_leak, self.w_in = as_t(node.r), as_t(node.v_leak), as_t(node.w_in)
        self.v_th, self.v_reset = as_t(node.v_threshold), as_t(node.v_reset)

    def forward(self, s: torch.Tensor, state=None):
        i, v = state if state is not None else (torch.zeros_like(self.r),) * 2
        i = i + self.dt / self.tau_syn * (-i + self.w_in * s)
        v = v + self.dt / self.tau_mem * (self.v_leak - v + self.r * i)
        z = (v > self.v_th).to(v.dtype)
        v = torch.where(z > 0, self.v_reset, v)
        return z, (i, v)


def _graph(rng) -> Graph:
    """Bias-driven, input-driven LIF layer -> dense projection -> recurrent LIF layer."""
    w_ff = rng.uniform(-0.2, 0.6, (6, 8))
    w_rec = sp.random(6, 6, density=0.4, random_state=3, format="csr")
    w_rec.data = rng.uniform(-0.5, 0.3, w_rec.nnz)
    pops = [
        Population("drive", 8, LIFParams(du=0.3, dv=0.1, vth=1.0, bias=rng.uniform(0, 0.15, 8))),
        Population("lif", 6, LIFParams(du=0.2, dv=0.05, vth=1.0, v_reset=-0.1)),
    ]
    return Graph(pops, [Projection("drive", "lif", w_ff), Projection("lif", "lif", w_rec)])


def test_nirtorch_runs_the_exported_lif_network_like_the_engine(tmp_path, rng):
    graph = _graph(rng)
    report = export_nir(graph, tmp_path / "net.nir", inputs=("drive",), outputs=("lif",))
    assert report.unsupported == []
    x = (rng.random((STEPS, 8)) < 0.2) * 0.5  # spikes of weight 0.5 into the drive's current

    engine = Engine(graph)
    engine.run(
        STEPS, inputs={"drive": x}, record=(("drive", "v"), ("lif", "v")), record_events=True
    )
    ref = {}
    for name, size in (("drive", 8), ("lif", 6)):
        steps, units = engine.event_log[name]
        ref[name] = np.zeros((STEPS, size))
        ref[name][steps, units] = 1.0

    back = nir.read(report.path)
    dt = float(back.metadata["dt_steps"])
    node_map = {nir.CubaLIF: lambda node: EulerCubaLIF(node, dt)}
    module = nirtorch.nir_to_torch(back, node_map, dtype=torch.float64)
    state, out, v = None, [], {"drive": [], "lif": []}
    with torch.no_grad():
        for t in range(STEPS):
            z, state = module(torch.as_tensor(x[t]), state)
            out.append(z.numpy().copy())
            for name in v:
                v[name].append(state[name][1].numpy().copy())
    out = np.array(out)
    v = {k: np.array(a) for k, a in v.items()}

    # not vacuous: both layers spike often (measured: 422 and 634 spikes in 200 steps)
    assert ref["drive"].sum() > 200 and ref["lif"].sum() > 200
    # drive: same step in both; lif: one feed-forward projection, so one step early in nirtorch
    np.testing.assert_allclose(v["drive"], engine.traces[("drive", "v")], atol=ATOL, rtol=0)
    np.testing.assert_allclose(v["lif"][:-1], engine.traces[("lif", "v")][1:], atol=ATOL, rtol=0)
    np.testing.assert_array_equal(out[:-1], ref["lif"][1:])
    assert ref["lif"][0].sum() == 0  # the step nirtorch does not see in the engine is silent
