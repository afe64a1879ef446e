"""An imported NIR graph (its closed form, networks/nir_closed.py) run in torch, batched and
dense: what a GPU user runs for the same network.

Each step, every projection is one matrix product of its source's spikes from `delay` steps
before (a ring of past spikes), and every population one LIF update, the engine's float LIF:
u <- u (1 - du) + in, v <- v (1 - dv) + u + bias, spike when v > vth, then v = v_reset. Source
populations emit their spike trains. Any device and dtype; inside
scenarios/compare/gpu_precision.PrecisionMode every product rounds its operands to that format.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
import torch
from atomspark.sim.core import AtomsparkError
from atomspark.sim.graph import Graph
from atomspark.sim.units.lif import LIFParams


@dataclass
class NirTorch:
    """Tensors of one closed graph on one device, every projection a dense matrix."""

    graph: Graph
    sources: tuple[str, ...]
    weights: list[torch.Tensor]
    delays: list[int]
    params: dict[str, dict[str, torch.Tensor]]
    device: torch.device
    dtype: torch.dtype

    @classmethod
    def build(cls, graph: Graph, sources, device="cpu", dtype=torch.float32) -> NirTorch:
        device = torch.device(device)
        weights, delays = [], []
        for proj in graph.projections:
            if proj.uniform_delay is None:
                raise AtomsparkError(
                    f"projection {proj.source}->{proj.target}: the torch path takes one delay "
                    "per projection"
                )
            n_tgt, n_src = proj.shape
            m = sp.csr_matrix((proj.data, proj.indices, proj.indptr), shape=(n_src, n_tgt))
            weights.append(torch.as_tensor(m.T.toarray(), dtype=dtype, device=device))
            delays.append(max(1, int(proj.uniform_delay)))
        params = {}
        for p in graph.populations:
            if p.name in sources:
                continue
            if not isinstance(p.params, LIFParams) or p.params.refractory:
                raise AtomsparkError(f"population {p.name!r}: the torch path runs float LIF only")
            st = p.params.init_state(p.size)
            k = p.params
            params[p.name] = {key: torch.as_tensor(np.broadcast_to(val, (p.size,)).copy(),
                                                    dtype=dtype, device=device)
                              for key, val in (("du", k.du), ("dv", k.dv), ("vth", k.vth),
                                               ("bias", st["bias"]), ("v_reset", k.v_reset),
                                               ("u0", st["u"]), ("v0", st["v"]))}  # fmt: skip
        return cls(graph, tuple(sources), weights, delays, params, device, dtype)

    def run(self, trains: dict[str, np.ndarray], steps: int) -> dict[str, torch.Tensor]:
        """Spikes of every population, (steps, batch, size); trains: source -> (batch, steps,
        size) or (steps, size) spike arrays."""
        g, dev, dt = self.graph, self.device, self.dtype
        x = {}
        for name in self.sources:
            a = np.asarray(trains[name])
            a = a[None] if a.ndim == 2 else a
            x[name] = torch.as_tensor(a[:, :steps], dtype=dt, device=dev)
        batch = next(iter(x.values())).shape[0]
        depth = max(self.delays, default=1) + 1
        ring = {p.name: torch.zeros((depth, batch, p.size), dtype=dt, device=dev)
                for p in g.populations}  # fmt: skip
        u = {n: q["u0"].expand(batch, -1).clone() for n, q in self.params.items()}
        v = {n: q["v0"].expand(batch, -1).clone() for n, q in self.params.items()}
        out = {p.name: torch.zeros((steps, batch, p.size), dtype=dt, device=dev)
               for p in g.populations}  # fmt: skip
        for t in range(steps):
            drive = {n: torch.zeros_like(u[n]) for n in self.params}
            for proj, w, d in zip(g.projections, self.weights, self.delays):
                if proj.target in drive:
                    pre = ring[proj.source][(t - d) % depth]
                    drive[proj.target] = drive[proj.target] + (w @ pre.T).T
            for p in g.populations:
                if p.name in x:
                    s = x[p.name][:, t]
                else:
                    q = self.params[p.name]
                    u[p.name] = u[p.name] * (1 - q["du"]) + drive[p.name]
                    v[p.name] = v[p.name] * (1 - q["dv"]) + u[p.name] + q["bias"]
                    fired = v[p.name] > q["vth"]
                    v[p.name] = torch.where(fired, q["v_reset"].expand_as(v[p.name]), v[p.name])
                    s = fired.to(dt)
                ring[p.name][t % depth] = s
                out[p.name][t] = s
        return out
