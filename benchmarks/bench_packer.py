"""The placer's spread search (mapping/placement.pack_spread) with the block packer against the
unit-by-unit packer it replaced (mapping/pack_reference.pack_spread_units), on the chip-vs-GPU
map's VN graphs at three sizes.

Each size: the map's graph (a random dictionary in the demo's shape, fixed point, as
scenarios/compare/map_points.vn_price builds it), its node-layout compartments and packing
groups (the map's strategy, partition; the bisection is timed once and reported apart: both
packers take the same groups), then `--pairs` interleaved pairs, each running the reference
search and the block search once in turn (which runs first alternates). Process CPU time, min
and median per packer; the placements are checked equal. Load average before and after.

    python benchmarks/bench_packer.py [--pairs 5] [--out docs/results/chip_vs_gpu/map]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from pathlib import Path

import numpy as np
from atomspark.mapping import placement
from atomspark.mapping.hardware import DEFAULT_CHIP, load_hardware
from atomspark.mapping.layouts import node_layout
from atomspark.mapping.pack_reference import pack_spread_units
from atomspark.mapping.placement import pack_spread
from atomspark.mapping.quantize import fixed_vn_runner
from atomspark.networks.sample_runner import vn_runner
from atomspark.scenarios.compare.map_points import _vn_model

SIZES = ([192, 128], [384, 256], [768, 512])  # atoms per layer: 320, 640, 1,280 atoms
FRAC_BITS = 12  # the demo's fixed point (docs/results/chip_vs_gpu/demo.json)


def _cpu(fn):
    t0 = time.process_time()
    out = fn()
    return time.process_time() - t0, out


def _networkx_bisection(graph, hw):
    """node_layout with every bisection swept by networkx (the complete-graph draw switched
    off): the reference for the groups and their time."""
    keep = placement.complete_and_uniform
    placement.complete_and_uniform = lambda sym: False
    try:
        return _cpu(lambda: node_layout(graph, hw, "partition", None, None))
    finally:
        placement.complete_and_uniform = keep


def time_size(layers: list[int], hw, pairs: int, kl_reference: bool) -> dict:
    graph = fixed_vn_runner(vn_runner(_vn_model(layers)), frac_bits=FRAC_BITS).graph
    groups_s, cmap = _cpu(lambda: node_layout(graph, hw, "partition", None, None))
    kl = {}
    if kl_reference:
        kl_s, kl_map = _networkx_bisection(graph, hw)
        same = [g.tolist() for g in kl_map.groups] == [g.tolist() for g in cmap.groups]
        kl = {"partition_networkx_s": kl_s, "same_groups": bool(same)}
    args = (cmap.groups, cmap.adjacency, cmap.synapses, hw, "partition", cmap.blocks)
    times = {"unit by unit": [], "blocks": []}
    results = {}
    for i in range(pairs):
        order = [("unit by unit", pack_spread_units), ("blocks", pack_spread)]
        for name, fn in order if i % 2 == 0 else order[::-1]:
            t, results[name] = _cpu(lambda fn=fn: fn(*args))
            times[name].append(t)
    ref, new = results["unit by unit"][0], results["blocks"][0]
    same = len(ref) == len(new) and all(
        np.array_equal(a.unit_core, b.unit_core) for a, b in zip(ref, new)
    )
    row = {
        "atoms_per_layer": layers,
        "atoms": int(sum(layers)),
        "synapses": int(cmap.adjacency.nnz),
        "placements": [p.n_cores for p in new],
        "same_placements": bool(same),
        "partition_s": groups_s,
        **kl,
        **{
            f"{k}_cpu_s": {"min": min(v), "median": statistics.median(v), "all": v}
            for k, v in times.items()
        },  # fmt: skip
    }
    row["speedup_median"] = row["unit by unit_cpu_s"]["median"] / row["blocks_cpu_s"]["median"]
    return row


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--pairs", type=int, default=5)
    p.add_argument("--out", default="docs/results/chip_vs_gpu/map")
    p.add_argument("--no-kl-reference", action="store_true",
                   help="skip timing the bisection swept by networkx (minutes at 1,280 atoms)")  # fmt: skip
    args = p.parse_args()
    hw = load_hardware(DEFAULT_CHIP)
    load_before = list(os.getloadavg())
    rows = []
    for layers in SIZES:
        rows.append(time_size(layers, hw, args.pairs, not args.no_kl_reference))
        r = rows[-1]
        print(f"{r['atoms']} atoms ({r['synapses']:,} synapses): unit by unit "
              f"{r['unit by unit_cpu_s']['median']:.3f} s, blocks {r['blocks_cpu_s']['median']:.3f} "
              f"s (median CPU, {args.pairs} pairs), x{r['speedup_median']:.1f}, same placements "
              f"{r['same_placements']}, partition {r['partition_s']:.1f} s "
              f"(networkx {r.get('partition_networkx_s', float('nan')):.1f} s, same groups "
              f"{r.get('same_groups')})")  # fmt: skip
    out = {
        "what": "pack_spread (the placer's search over caps and squeezes) on the map's VN "
        "graphs: block packer vs the unit-by-unit packer it replaced; the partition (Kernighan-Lin "
        "bisection) timed once, drawn directly for a complete graph of equal weights and swept "
        "by networkx",
        "command": f"python benchmarks/bench_packer.py --pairs {args.pairs} --out {args.out}",
        "hardware": DEFAULT_CHIP,
        "pairs": args.pairs,
        "rows": rows,
        "load_average_before": load_before,
        "load_average_after": list(os.getloadavg()),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs (shared)",
    }
    folder = Path(args.out)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "packer_speed.json").write_text(json.dumps(out, indent=2) + "\n")
    print(f"wrote {folder / 'packer_speed.json'}")


if __name__ == "__main__":
    main()
