"""Small networks built in each producer library, written to NIR by the library's own writer and
run by the library itself: the references tests/test_nir_import.py replays on the engine.

    python tests/nir_producer_cases.py            # rewrites tests/data/nir/<case>.nir + .npz

Every case runs the producer's own modules step by step on seeded input spikes (float32, the
libraries' default) and records each neuron layer's spikes and voltage after the step (after the
reset). The networks use the settings each library's NIR file states: reset to v_reset = 0
right after the spike (snnTorch `reset_mechanism="zero", reset_delay=False`; Sinabs
`SingleSpike` and `MembraneReset`, no lower bound on v); per-neuron parameter tensors (the
writers of snnTorch 1.0 and Sinabs 3.1 mis-shape scalar ones). Weights are scaled up so every
layer spikes.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

DATA = Path(__file__).parent / "data" / "nir"
STEPS = 60


@dataclass(frozen=True)
class Case:
    name: str
    producer: str  # the --producer convention that reads its file
    build: Callable  # () -> (nir graph, step function, input shape, {module index: layer})


def _scaled(layer, k: float):
    import torch

    with torch.no_grad():
        layer.weight.mul_(k)
    return layer


# --- snnTorch ---------------------------------------------------------------------------------


def _snn_reset(net) -> None:
    """snnTorch keeps hidden state in its modules; the writer's trace run changed it."""
    from snntorch import utils

    utils.reset(net)


def _snn_kw():
    return {"init_hidden": True, "reset_mechanism": "zero", "reset_delay": False}


def snntorch_recurrent():
    """Affine -> Synaptic (CubaLIF) -> Affine -> RLeaky (LIF with an all-to-all recurrent
    Affine: a nested LIF/w_rec pair in the file)."""
    import snntorch as snn
    import torch
    from snntorch.export_nir import export_to_nir

    torch.manual_seed(0)
    full = lambda n, v: torch.full((n,), v)  # noqa: E731
    lin1, lin2 = _scaled(torch.nn.Linear(6, 5), 3), _scaled(torch.nn.Linear(5, 3), 3)
    syn = snn.Synaptic(alpha=full(5, 0.8), beta=full(5, 0.9), threshold=full(5, 1.0), **_snn_kw())
    rl = snn.RLeaky(beta=full(3, 0.7), threshold=full(3, 1.0), linear_features=3, output=True,
                    **_snn_kw())  # fmt: skip
    net = torch.nn.Sequential(lin1, syn, lin2, rl)
    graph = export_to_nir(net, torch.zeros(6))

    def step(x):
        s1 = syn(lin1(x))
        s2, v2 = rl(lin2(s1))
        return {"1": (s1, syn.mem), "3.lif": (s2, v2)}

    step.reset = lambda: _snn_reset(net)
    return graph, step, (6,), net


def snntorch_conv():
    """Conv2d -> Leaky -> AvgPool2d -> Flatten -> Linear -> Leaky."""
    import snntorch as snn
    import torch
    from snntorch.export_nir import export_to_nir

    torch.manual_seed(1)
    conv = _scaled(torch.nn.Conv2d(2, 3, 3, padding=1), 3)
    lk1 = snn.Leaky(beta=torch.full((3, 6, 6), 0.85), threshold=torch.ones(3, 6, 6), **_snn_kw())
    pool, flat = torch.nn.AvgPool2d((2, 2), (2, 2)), torch.nn.Flatten(start_dim=0)
    lin = _scaled(torch.nn.Linear(27, 4, bias=False), 4)
    lk2 = snn.Leaky(beta=torch.full((4,), 0.9), threshold=torch.ones(4), **_snn_kw())
    net = torch.nn.Sequential(conv, lk1, pool, flat, lin, lk2)
    graph = export_to_nir(net, torch.zeros(2, 6, 6))  # unbatched: its type check fails on a batch

    def step(x):
        s1 = lk1(conv(x.reshape(1, 2, 6, 6)))
        s2 = lk2(lin(flat(pool(s1))))
        return {"1": (s1, lk1.mem), "5": (s2, lk2.mem)}

    step.reset = lambda: _snn_reset(net)
    return graph, step, (2, 6, 6), net


# --- Norse ------------------------------------------------------------------------------------


def norse_cells():
    """Affine -> LIFCell (CubaLIF) -> Affine -> LIFBoxCell (LIF) -> Affine -> IAFCell (IF)
    -> Affine -> LIBoxCell (LI, the voltage readout)."""
    import norse.torch as nt
    import torch

    torch.manual_seed(2)
    lin = [_scaled(torch.nn.Linear(a, b), 4) for a, b in ((6, 5), (5, 4), (4, 4), (4, 3))]
    c1 = nt.LIFCell(nt.LIFParameters(tau_syn_inv=torch.full((5,), 200.0),
                    tau_mem_inv=torch.full((5,), 100.0), v_leak=torch.zeros(5),
                    v_th=torch.full((5,), 0.1)))  # fmt: skip
    c2 = nt.LIFBoxCell(nt.LIFBoxParameters(tau_mem_inv=torch.full((4,), 150.0),
                       v_leak=torch.zeros(4), v_th=torch.full((4,), 0.2)))  # fmt: skip
    c3 = nt.IAFCell(nt.IAFParameters(v_th=torch.full((4,), 0.5)))
    c4 = nt.LIBoxCell(nt.LIBoxParameters(tau_mem_inv=torch.full((3,), 120.0),
                      v_leak=torch.zeros(3)))  # fmt: skip
    net = nt.SequentialState(lin[0], c1, lin[1], c2, lin[2], c3, lin[3], c4)
    graph = nt.to_nir(net, torch.zeros(1, 6))
    state = [None] * 4

    def step(x):
        out, y = {}, x[None]
        for k, (ln, cell) in enumerate(zip(lin, (c1, c2, c3, c4))):
            y, state[k] = cell(ln(y), state[k])
            v = state[k].v if hasattr(state[k], "v") else y
            out[str(2 * k + 1)] = (y[0] if k < 3 else None, v[0])
        return out

    def reset():
        state[:] = [None] * 4

    step.reset = reset
    return graph, step, (6,), net


# --- Sinabs -----------------------------------------------------------------------------------


def sinabs_conv():
    """Conv2d -> IAF (IF) -> SumPool2d -> Flatten -> Affine -> LIF -> Affine -> ExpLeak (LI)."""
    import sinabs
    import sinabs.layers as sl
    import torch
    from sinabs.activation import MembraneReset, SingleSpike

    torch.manual_seed(3)
    kw = {"spike_fn": SingleSpike, "reset_fn": MembraneReset(), "min_v_mem": None,
          "batch_size": 1}  # fmt: skip
    conv = _scaled(torch.nn.Conv2d(2, 4, 3, padding=1), 3)
    iaf = sl.IAFSqueeze(spike_threshold=1.0, **kw)
    pool, flat = sl.SumPool2d(2), torch.nn.Flatten()
    lin = _scaled(torch.nn.Linear(36, 5), 3)
    lif = sl.LIFSqueeze(tau_mem=torch.full((5,), 8.0), spike_threshold=torch.ones(5),
                        norm_input=False, **kw)  # fmt: skip
    lin2 = _scaled(torch.nn.Linear(5, 2), 2)
    li = sl.ExpLeakSqueeze(tau_mem=torch.full((2,), 5.0), batch_size=1, norm_input=False)
    net = torch.nn.Sequential(conv, iaf, pool, flat, lin, lif, lin2, li)
    graph = sinabs.to_nir(net, torch.zeros(1, 2, 6, 6))
    graph.infer_types()  # Sinabs leaves the Conv2d's input type empty; nir.write needs it

    def step(x):
        s1 = iaf(conv(x.reshape(1, 2, 6, 6)))
        s2 = lif(lin(flat(pool(s1))))
        v3 = li(lin2(s2))
        return {"1": (s1[0], iaf.v_mem[0]), "5": (s2[0], lif.v_mem[0]), "7": (None, v3[0])}

    step.reset = lambda: [m.reset_states() for m in (iaf, lif, li)]
    return graph, step, (2, 6, 6), net


CASES = [
    Case("snntorch_recurrent", "snntorch", snntorch_recurrent),
    Case("snntorch_conv", "snntorch", snntorch_conv),
    Case("norse_cells", "norse", norse_cells),
    Case("sinabs_conv", "sinabs", sinabs_conv),
]


def input_spikes(shape: tuple[int, ...], seed: int = 7, rate: float = 0.3) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (rng.random((STEPS, int(np.prod(shape)))) < rate).astype(np.float32)


def run_case(case: Case, out: Path) -> dict[str, np.ndarray]:
    """Write `out/<case>.nir` with the producer's writer; return the producer's traces."""
    import nir
    import torch

    warnings.filterwarnings("ignore")
    graph, step, shape, net = case.build()
    out.mkdir(parents=True, exist_ok=True)
    nir.write(str(out / f"{case.name}.nir"), graph)
    step.reset()  # fresh state: the writer ran the network once to trace it
    x = input_spikes(shape)
    rec: dict[str, list] = {}
    with torch.no_grad():
        for t in range(STEPS):
            for node, (s, v) in step(torch.as_tensor(x[t])).items():
                if s is not None:
                    rec.setdefault(f"s:{node}", []).append(s.detach().numpy().reshape(-1).copy())
                rec.setdefault(f"v:{node}", []).append(v.detach().numpy().reshape(-1).copy())
    saved = {k: np.array(v) for k, v in rec.items()}
    saved["input"] = x
    return saved


def main() -> None:
    for case in CASES:
        saved = run_case(case, DATA)
        np.savez_compressed(DATA / f"{case.name}.npz", **saved)
        n = sum(int(v.sum()) for k, v in saved.items() if k.startswith("s:"))
        print(f"{case.name}: {n} spikes in {STEPS} steps")


if __name__ == "__main__":
    main()
