"""atomspark's Loihi energy/latency model vs the SANA-FE simulator on one small LIF network.

The same network runs on both simulators with the same placement, so the spike counts match and
the energy/latency gap is the cost models' gap, not a difference in activity:
- ``src``: N_SRC LIF neurons driven by integer biases (perfect integrators, each fires every
  ceil(vth / bias) steps);
- ``dst``: N_DST leaky LIF neurons fed by a seeded sparse random projection with integer weights.
Both simulators implement the same update (SANA-FE's ``leaky_integrate_fire`` soma: u *= decay_u,
v *= decay_v, v += bias + u (+ input), spike if v > threshold, hard reset to 0; atomspark's
LIFParams with du = 1 - input_decay, dv = 1 - leak_decay). Integer weights and biases keep SANA-FE's
1/64 potential quantisation exact. Each population is spread over cores of several tiles so that
spike messages cross the mesh.

atomspark side: Engine run, counters priced with ``estimate_energy`` on ``loihi1-sanafe`` (and
``loihi1-davies`` for reference). Peer side: SANA-FE (``pip install sanafe``, or built from
github.com/SLAM-Lab/SANA-FE) on its ``arch/loihi.yaml``. Without SANA-FE the script prints the
atomspark side and how to get the peer.

Run: ``.venv/bin/python benchmarks/compare_sanafe.py [--sanafe-python PATH] [--steps N]``.
The peer runs in its own interpreter (given by --sanafe-python) because it must not be installed in
atomspark's environment.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from atomspark.mapping.energy import estimate_energy
from atomspark.mapping.hardware import load_hardware
from atomspark.mapping.placement import Placement
from atomspark.sim.engine import Engine
from atomspark.sim.graph import Graph, Population, Projection
from atomspark.sim.units.lif import LIFParams

HOW_TO_GET_SANAFE = (
    "SANA-FE not found. Install it in a separate environment, e.g.\n"
    "  python3 -m venv /tmp/sanafe-venv && /tmp/sanafe-venv/bin/pip install sanafe\n"
    "or build it from source (git clone https://github.com/SLAM-Lab/SANA-FE; pip install .;\n"
    "needs cmake, a C++17 compiler, pybind11 and network access for rapidyaml/booksim2), then run\n"
    "  .venv/bin/python benchmarks/compare_sanafe.py --sanafe-python /tmp/sanafe-venv/bin/python"
)


@dataclass(frozen=True)
class NetworkSpec:
    """The shared test network: sizes, dynamics, connectivity and placement (all integers)."""

    n_src: int = 256
    n_dst: int = 256
    density: float = 0.1
    vth: float = 64.0
    dst_leak_decay: float = 0.75  # SANA-FE leak_decay; atomspark dv = 1 - 0.75
    weight_max: int = 12
    units_per_core: int = 64
    core_stride: int = 4  # one used core per tile: cores 0, 4, 8, ... (spikes cross tiles)
    seed: int = 0

    def biases(self) -> np.ndarray:
        """Integer biases 1..16: source firing periods from 4 to 64 steps (v > vth)."""
        return np.random.default_rng(self.seed).integers(1, 17, self.n_src).astype(float)

    def connections(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(src index, dst index, integer weight) of the sparse src -> dst projection."""
        rng = np.random.default_rng(self.seed + 1)
        mask = rng.random((self.n_src, self.n_dst)) < self.density
        src, dst = np.nonzero(mask)
        weights = rng.integers(1, self.weight_max + 1, src.size).astype(float)
        return src, dst, weights

    def unit_core(self) -> np.ndarray:
        """Global core of every unit (src first, then dst)."""
        n = self.n_src + self.n_dst
        return (np.arange(n) // self.units_per_core) * self.core_stride


def atomspark_graph(spec: NetworkSpec) -> Graph:
    """The network as an atomspark Graph (delays 1, float LIF, integer-valued parameters)."""
    src, dst, w = spec.connections()
    weights = sp.csr_matrix((w, (dst, src)), shape=(spec.n_dst, spec.n_src))
    pops = [
        Population("src", spec.n_src, LIFParams(du=1.0, dv=0.0, vth=spec.vth, bias=spec.biases())),
        Population(
            "dst", spec.n_dst, LIFParams(du=1.0, dv=1.0 - spec.dst_leak_decay, vth=spec.vth)
        ),
    ]
    return Graph(pops, [Projection("src", "dst", weights)])


def run_atomspark(spec: NetworkSpec, steps: int, hardware: str) -> dict:
    """Engine run plus estimate_energy with the shared placement."""
    graph = atomspark_graph(spec)
    profile = Engine(graph).run(steps)
    hw = load_hardware(hardware)
    unit_core = spec.unit_core()
    n_cores = int(unit_core.max()) + 1
    placement = Placement(unit_core, n_cores, 1, hw.limits.cores_per_chip, "fixed")
    report = estimate_energy(profile, placement, graph.unit_adjacency(), hw)
    breakdown = report.breakdown
    return {
        "hardware": hardware,
        "spikes": int(profile.events.sum()),
        "spikes_per_population": profile.events.sum(axis=0).tolist(),
        "synops": int(profile.synops.sum()),
        "energy_j": report.energy_per_sample_j,
        "energy_without_static_j": report.energy_per_sample_j - breakdown.static,
        "time_s": report.time_per_sample_s,
        "breakdown_j": {k: float(v) for k, v in report.to_dict()["breakdown"].items()},
        "barrier_s": report.barrier_s,
        "tiles_used": report.tiles_used,
    }


PEER_SCRIPT = textwrap.dedent(
    """
    import json, sys
    import sanafe
    cfg = json.loads(sys.stdin.read())
    arch = sanafe.load_arch(cfg["arch"])
    net = sanafe.Network()
    common = {"threshold": cfg["vth"], "reset": 0.0, "input_decay": 0.0}
    src = net.create_neuron_group("src", cfg["n_src"], model_attributes=dict(common, leak_decay=1.0),
                                  default_synapse_hw_name="loihi_dense_synapse",
                                  soma_hw_name="loihi_lif", log_spikes=True)
    dst = net.create_neuron_group("dst", cfg["n_dst"],
                                  model_attributes=dict(common, leak_decay=cfg["dst_leak_decay"]),
                                  default_synapse_hw_name="loihi_dense_synapse",
                                  soma_hw_name="loihi_lif", log_spikes=True)
    for i, b in enumerate(cfg["biases"]):
        src[i].set_attributes(model_attributes={"bias": float(b)})
    pairs = list(zip(cfg["conn_src"], cfg["conn_dst"]))
    src.connect_neurons_sparse(dst, {"weight": [float(w) for w in cfg["conn_w"]]}, pairs)
    cores = arch.cores()
    unit_core = cfg["unit_core"]
    for i in range(cfg["n_src"]):
        src[i].map_to_core(cores[unit_core[i]])
    for i in range(cfg["n_dst"]):
        dst[i].map_to_core(cores[unit_core[cfg["n_src"] + i]])
    chip = sanafe.SpikingChip(arch)
    chip.load(net)
    res = chip.sim(cfg["steps"])
    print(json.dumps({"sanafe_version": getattr(sanafe, "__version__", "?"),
                      "spikes": res["spikes"], "energy": res["energy"],
                      "sim_time": res["sim_time"], "packets_sent": res["packets_sent"],
                      "neurons_updated": res["neurons_updated"],
                      "neurons_fired": res["neurons_fired"]}))
    """
)


def find_sanafe_arch(python: str) -> str | None:
    """Path of SANA-FE's packaged arch/loihi.yaml, asked of the peer interpreter."""
    code = (
        "import sanafe, pathlib; p = pathlib.Path(sanafe.__file__).parent; "
        "c = sorted(p.rglob('loihi.yaml')); print(c[0] if c else '')"
    )
    try:
        out = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    path = out.stdout.strip()
    return path if out.returncode == 0 and path else None


def sanafe_core_index(core: np.ndarray, hw) -> np.ndarray:
    """SANA-FE's index of atomspark's core: same tile position (x, y) and core within the tile.

    atomspark numbers tiles row-major (x = tile % width), SANA-FE column-major
    (src/arch.cpp: x = tile_id / height, y = tile_id % height)."""
    lim = hw.limits
    tile, within = np.divmod(np.asarray(core), lim.cores_per_tile)
    x, y = tile % lim.mesh_width_tiles, tile // lim.mesh_width_tiles
    return (x * lim.mesh_height_tiles + y) * lim.cores_per_tile + within


def run_sanafe(spec: NetworkSpec, steps: int, python: str, arch: str) -> dict:
    """The same network on SANA-FE in the peer interpreter; returns its result dict."""
    src, dst, w = spec.connections()
    cfg = {
        "arch": arch,
        "steps": steps,
        "n_src": spec.n_src,
        "n_dst": spec.n_dst,
        "vth": spec.vth,
        "dst_leak_decay": spec.dst_leak_decay,
        "biases": spec.biases().tolist(),
        "conn_src": src.tolist(),
        "conn_dst": dst.tolist(),
        "conn_w": w.tolist(),
        "unit_core": sanafe_core_index(spec.unit_core(), load_hardware("loihi1-sanafe")).tolist(),
    }
    out = subprocess.run(
        [python, "-c", PEER_SCRIPT], input=json.dumps(cfg), capture_output=True, text=True
    )
    if out.returncode != 0:
        raise RuntimeError(f"SANA-FE run failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--sanafe-python", default="/tmp/sanafe-venv/bin/python")
    parser.add_argument("--sanafe-arch", default=None, help="default: the package's loihi.yaml")
    parser.add_argument("--out", type=Path, default=None, help="write the results as JSON")
    args = parser.parse_args(argv)
    spec = NetworkSpec()
    result = {
        "spec": spec.__dict__,
        "steps": args.steps,
        "atomspark": {
            h: run_atomspark(spec, args.steps, h) for h in ("loihi1-sanafe", "loihi1-davies")
        },
    }
    ours = result["atomspark"]["loihi1-sanafe"]
    print(f"atomspark ({args.steps} steps): spikes {ours['spikes']}, synops {ours['synops']}")
    for h, r in result["atomspark"].items():
        print(
            f"  {h:14s} energy {r['energy_j'] * 1e6:9.3f} uJ "
            f"(without static {r['energy_without_static_j'] * 1e6:9.3f} uJ), "
            f"time {r['time_s'] * 1e6:9.2f} us"
        )
    arch = args.sanafe_arch or (
        find_sanafe_arch(args.sanafe_python) if Path(args.sanafe_python).exists() else None
    )
    if arch is None:
        print(HOW_TO_GET_SANAFE)
        result["sanafe"] = None
    else:
        peer = run_sanafe(spec, args.steps, args.sanafe_python, arch)
        result["sanafe"] = peer
        result["sanafe_arch"] = arch
        e_peer, t_peer = peer["energy"]["total"], peer["sim_time"]
        result["ratios_atomspark_over_sanafe"] = {
            "spikes_fired": ours["spikes"] / max(peer["neurons_fired"], 1),
            "synaptic_events": ours["synops"] / max(peer["spikes"], 1),
            "energy_total": ours["energy_j"] / e_peer,
            "energy_without_static": ours["energy_without_static_j"] / e_peer,
            "time": ours["time_s"] / t_peer,
        }
        print(
            f"SANA-FE ({arch}): fired {peer['neurons_fired']}, synaptic events {peer['spikes']}, energy {e_peer * 1e6:.3f} uJ "
            f"{ {k: round(v * 1e6, 3) for k, v in peer['energy'].items()} } uJ, "
            f"time {t_peer * 1e6:.2f} us, packets {peer['packets_sent']}"
        )
        for k, v in result["ratios_atomspark_over_sanafe"].items():
            print(f"  atomspark/SANA-FE {k}: {v:.3f}")
    if args.out:
        args.out.write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
