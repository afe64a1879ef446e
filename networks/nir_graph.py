"""Build an engine Graph from a NIR graph read by nir_file.py, under one producer's convention.

- Nested subgraphs are flattened (names joined by '.'); an edge into a subgraph enters its Input
  node, an edge out of it leaves its Output node; their Input/Output nodes pass values through.
- Every neuron node (nir_conventions.NEURON_KINDS) becomes a population; every top-level Input a
  relay population that spikes when its input is 1 (inputs are spikes).
- The stateless nodes between two populations (nir_ops.LINEAR_KINDS and Delay) are composed
  along every path into one projection per (source, target) pair: the product of their matrices,
  the sum over parallel paths; biases become a constant drive into the target's current.
- Timing: producers evaluate a feed-forward edge within the step, while every engine projection
  takes at least one step. Population n runs `offset[n]` steps behind the producer (its step t
  is the engine's step t + offset[n]); an edge with producer delay p (Delay nodes, and one step
  on an edge that closes a cycle, as nirtorch and the producers' recurrent cells run it) becomes
  an engine delay p + offset[target] - offset[source] >= 1. A cycle whose engine delay would be
  below 1 is refused. The constant drives start at the target's step 0.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from atomspark.networks.nir_conventions import (
    CONVENTIONS,
    NEURON_KINDS,
    Convention,
    NeuronMap,
    neuron_map,
)
from atomspark.networks.nir_file import NirNode, NirRecord
from atomspark.networks.nir_ops import LINEAR_KINDS, linear_op, param
from atomspark.sim.core import AtomsparkError
from atomspark.sim.graph import Graph, Population, Projection
from atomspark.sim.units.lif import LIFParams

PASS_KINDS = ("Input", "Output", "Delay")
SUPPORTED = ("Input", "Output", *LINEAR_KINDS, *NEURON_KINDS, "Delay", "NIRGraph")
RELAY = LIFParams(du=1.0, dv=1.0, vth=0.5)  # input relay: spikes at the step its input is 1


@dataclass(frozen=True)
class Drive:
    """A constant current into `population` from its step `onset` on (the producer's biases)."""

    population: str
    value: np.ndarray
    onset: int


@dataclass(frozen=True)
class NirGraph:
    graph: Graph
    convention: Convention
    inputs: dict[str, str]  # NIR Input node -> relay population
    outputs: dict[str, str]  # NIR Output node -> population it reads
    neurons: dict[str, str]  # NIR neuron node -> population
    offsets: dict[str, int]  # population -> engine steps behind the producer
    fires: dict[str, bool]  # population -> emits spikes (False: LI/Integrator, read v)
    shapes: dict[str, tuple[int, ...]]  # population -> NIR shape
    drives: list[Drive] = field(default_factory=list)

    @property
    def latency(self) -> int:
        """Engine steps to add so every population has run every producer step."""
        return max(self.offsets.values(), default=0)

    def table(self) -> str:
        """One line per population: NIR node, kind of unit, shape, offset."""
        lines = [f"{'population':<24}{'units':>7}  {'shape':<14}{'offset':>6}  unit"]
        for p in self.graph.populations:
            kind = "relay (input)" if p.params is RELAY else (
                "LIF" if self.fires[p.name] else "LIF, reads v")  # fmt: skip
            shape = "x".join(map(str, self.shapes[p.name]))
            lines.append(f"{p.name:<24}{p.size:>7}  {shape:<14}{self.offsets[p.name]:>6}  {kind}")
        return "\n".join(lines)


def convention(name: str, dt: float | None = None) -> Convention:
    """The named producer convention, with `dt` replacing its default when given."""
    if name not in CONVENTIONS:
        raise AtomsparkError(f"--producer {name}: must be one of {', '.join(CONVENTIONS)}")
    c = CONVENTIONS[name]
    if dt is None:
        return c
    if not np.isfinite(dt) or dt <= 0:
        raise AtomsparkError(f"--dt {dt}: must be a positive number of seconds")
    from dataclasses import replace

    return replace(c, dt=float(dt))


def flatten(record: NirRecord, prefix: str = "") -> tuple[dict[str, NirNode], list]:
    """Nodes and edges of `record` with every subgraph inlined (names joined by '.')."""
    nodes: dict[str, NirNode] = {}
    edges: list[tuple[str, str]] = []
    ports: dict[str, tuple[str, str]] = {}  # subgraph name -> (its entry node, its exit node)
    for name, node in record.nodes.items():
        full = prefix + name
        if node.kind == "NIRGraph":
            sub_nodes, sub_edges = flatten(node.graph, full + ".")
            ins = [n for n, v in node.graph.nodes.items() if v.kind == "Input"]
            outs = [n for n, v in node.graph.nodes.items() if v.kind == "Output"]
            if len(ins) != 1 or len(outs) != 1:
                raise AtomsparkError(
                    f"NIR node {full!r} (NIRGraph): a subgraph needs one Input and one Output "
                    f"node, found {len(ins)} and {len(outs)}"
                )
            for n in (*ins, *outs):  # inner ports pass values through
                v = sub_nodes[f"{full}.{n}"]
                sub_nodes[f"{full}.{n}"] = NirNode(v.name, "Pass", v.params)
            nodes.update(sub_nodes)
            edges += sub_edges
            ports[full] = (f"{full}.{ins[0]}", f"{full}.{outs[0]}")
            continue
        if node.kind not in SUPPORTED:
            raise AtomsparkError(
                f"NIR node {full!r}: type {node.kind!r} is not supported (supported: "
                f"{', '.join(s for s in SUPPORTED if s != 'NIRGraph')}, nested NIRGraph)"
            )
        nodes[full] = NirNode(full, node.kind, node.params, node.texts)
    for a, b in record.edges:
        a, b = prefix + a, prefix + b
        a = ports[a][1] if a in ports else a
        b = ports[b][0] if b in ports else b
        for end in (a, b):
            if end not in nodes:
                raise AtomsparkError(f"NIR edge {a!r} -> {b!r}: no node named {end!r}")
        edges.append((a, b))
    return nodes, edges


def _shapes(nodes: dict[str, NirNode], preds: dict[str, list[str]]) -> dict[str, tuple]:
    """Output shape of every node, from the Inputs forward (neurons may state their own)."""
    shapes: dict[str, tuple] = {}
    for name, node in nodes.items():
        if node.kind == "Input":
            s = param(node, "shape", required=False)
            if s is None:
                s = param(node, "input_type.input", required=False)
            if s is None or s.size == 0 or np.any(s < 1) or np.prod(s) > 2**31:
                raise AtomsparkError(f"NIR node {name!r} (Input): needs a positive 'shape'")
            shapes[name] = tuple(int(x) for x in s.reshape(-1))
        elif node.kind in NEURON_KINDS:
            key = {"Threshold": "threshold", "I": "r"}.get(node.kind, "v_threshold")
            if node.kind == "LI":
                key = "tau"
            v = param(node, key, required=False)
            if v is not None and v.size > 1:
                shapes[name] = tuple(v.shape)
    changed = True
    while changed:
        changed = False
        for name, node in nodes.items():
            if name in shapes:
                continue
            known = [shapes[p] for p in preds[name] if p in shapes]
            if not known:
                continue
            in_shape = known[0]
            if any(int(np.prod(k)) != int(np.prod(in_shape)) for k in known):
                raise AtomsparkError(f"NIR node {name!r}: its inputs have different sizes")
            if node.kind in LINEAR_KINDS:
                shapes[name] = linear_op(node, in_shape).shape
            else:
                shapes[name] = in_shape
            changed = True
    for name, node in nodes.items():
        if name not in shapes and node.kind != "Output":
            raise AtomsparkError(f"NIR node {name!r} ({node.kind}): no input reaches it")
    return shapes


@dataclass
class _Path:
    """Accumulated from a target back to one source: matrix (n_target x n_here) and delay."""

    matrix: sp.csr_matrix
    delay: int
    cycle: bool


def _delay_steps(node: NirNode, c: Convention, n: int) -> int:
    d = param(node, "delay").reshape(-1)
    steps = d / c.dt
    if d.size not in (1, n) or np.ptp(steps) > 1e-6 or abs(steps[0] - round(steps[0])) > 1e-6:
        raise AtomsparkError(
            f"NIR node {node.name!r} (Delay): 'delay' must be one whole number of steps of "
            f"dt = {c.dt:g} for all neurons, got {d.min():.6g}..{d.max():.6g}"
        )
    if round(steps[0]) < 0 or round(steps[0]) > 2**16:
        raise AtomsparkError(f"NIR node {node.name!r} (Delay): 'delay' out of range")
    return int(round(steps[0]))


def nir_graph(record: NirRecord, conv: Convention) -> NirGraph:
    """The engine graph of `record` under convention `conv`."""
    nodes, edges = flatten(record)
    preds: dict[str, list[str]] = {n: [] for n in nodes}
    for a, b in edges:
        preds[b].append(a)
    shapes = _shapes(nodes, preds)
    cycle_edges = _cycle_edges(nodes, edges)
    pop_of: dict[str, str] = {}
    used: set[str] = set()
    for name, node in nodes.items():
        if node.kind in NEURON_KINDS or node.kind == "Input":
            pop_of[name] = _pop_name(name, used)
    maps: dict[str, NeuronMap] = {}
    for name, node in nodes.items():
        if node.kind in NEURON_KINDS:
            maps[name] = neuron_map(conv, node, int(np.prod(shapes[name])))
    if not maps:
        raise AtomsparkError("NIR graph: no neuron node (LIF, CubaLIF, LI, IF, ...) to run")
    # every (source population, target node) connection and constant drive, by walking back
    conns: dict[tuple[str, str, int, bool], sp.csr_matrix] = {}
    drives: list[tuple[str, np.ndarray, int]] = []
    targets = [n for n in nodes if n in maps]
    for t in targets:
        scale = sp.diags(maps[t].in_scale).tocsr()
        for p in preds[t]:
            _walk(p, t, _Path(scale, 0, (p, t) in cycle_edges), nodes, preds, shapes, pop_of,
                  cycle_edges, conv, conns, drives, 0)  # fmt: skip
    outputs = _outputs(nodes, preds, pop_of)
    offsets = _offsets(pop_of, nodes, conns)
    projections = []
    for (src, tgt, p, cycle), mat in sorted(conns.items(), key=lambda kv: kv[0][:3]):
        s_pop, t_pop = pop_of[src], pop_of[tgt]
        delay = p + int(cycle) + offsets[t_pop] - offsets[s_pop]
        if delay < 1:
            raise AtomsparkError(
                f"NIR edge {src!r} -> {tgt!r}: a cycle spans {offsets[s_pop] - offsets[t_pop]} "
                f"feed-forward steps but delays by {p}; the engine needs one step per projection"
            )
        projections.append(Projection(s_pop, t_pop, mat.tocsr(), delays=int(delay)))
    pops = []
    fires = {}
    for name, pop in pop_of.items():
        size = int(np.prod(shapes[name]))
        params = RELAY if nodes[name].kind == "Input" else maps[name].params
        pops.append(Population(pop, size, params))
        fires[pop] = nodes[name].kind == "Input" or maps[name].fires
    drive_list = [Drive(pop_of[t], v, onset + offsets[pop_of[t]]) for t, v, onset in drives]
    inputs = {n: pop_of[n] for n, v in nodes.items() if v.kind == "Input"}
    return NirGraph(
        Graph(pops, projections), conv, inputs, outputs,
        {n: pop_of[n] for n in maps}, offsets, fires,
        {pop_of[n]: shapes[n] for n in pop_of}, _merge_drives(drive_list),
    )  # fmt: skip


def _walk(node, target, path, nodes, preds, shapes, pop_of, cycles, conv, conns, drives, depth):
    """Walk from `target` back through stateless nodes to every source population."""
    if depth > len(nodes):
        raise AtomsparkError(f"NIR node {node!r}: a cycle without a neuron in it")
    if node in pop_of:
        key = (node, target, path.delay, path.cycle)
        m = path.matrix if path.matrix.shape[1] == _size(shapes[node]) else None
        if m is None:
            raise AtomsparkError(
                f"NIR edge {node!r} -> {target!r}: {_size(shapes[node])} outputs into "
                f"{path.matrix.shape[1]} inputs"
            )
        conns[key] = conns[key] + m if key in conns else m
        return
    n = nodes[node]
    mat, delay = path.matrix, path.delay
    if n.kind in LINEAR_KINDS:
        in_shape = shapes[preds[node][0]] if preds[node] else None
        if in_shape is None:
            raise AtomsparkError(f"NIR node {node!r} ({n.kind}): nothing feeds it")
        op = linear_op(n, in_shape)
        if op.bias is not None:
            drives.append((target, np.asarray(mat @ op.bias).reshape(-1), delay))
        mat = (mat @ op.matrix).tocsr()
    elif n.kind == "Delay":
        delay += _delay_steps(n, conv, _size(shapes[node]))
    elif n.kind == "Output":
        raise AtomsparkError(f"NIR node {node!r} (Output): feeds another node")
    for p in preds[node]:
        cyc = path.cycle or (p, node) in cycles
        _walk(p, target, _Path(mat, delay, cyc), nodes, preds, shapes, pop_of, cycles, conv,
              conns, drives, depth + 1)  # fmt: skip


def _size(shape) -> int:
    return int(np.prod(shape))


def _cycle_edges(nodes, edges) -> set[tuple[str, str]]:
    """Edges that close a cycle in a depth-first walk from the inputs (file order)."""
    succ: dict[str, list[str]] = {n: [] for n in nodes}
    for a, b in edges:
        succ[a].append(b)
    state: dict[str, int] = {}
    back: set[tuple[str, str]] = set()
    roots = [n for n, v in nodes.items() if v.kind == "Input"] + list(nodes)
    for root in roots:
        if root in state:
            continue
        stack = [(root, iter(succ[root]))]
        state[root] = 1
        while stack:
            here, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                state[here] = 2
                stack.pop()
            elif state.get(nxt) == 1:
                back.add((here, nxt))
            elif nxt not in state:
                state[nxt] = 1
                stack.append((nxt, iter(succ[nxt])))
    return back


def _outputs(nodes, preds, pop_of) -> dict[str, str]:
    out = {}
    for name, node in nodes.items():
        if node.kind != "Output":
            continue
        src = preds[name]
        while len(src) == 1 and nodes[src[0]].kind == "Pass":
            src = preds[src[0]]
        if len(src) != 1 or src[0] not in pop_of:
            raise AtomsparkError(
                f"NIR node {name!r} (Output): reads {', '.join(map(repr, src)) or 'nothing'}; "
                "the engine outputs the spikes or voltage of one neuron node"
            )
        out[name] = pop_of[src[0]]
    return out


def _offsets(pop_of, nodes, conns) -> dict[str, int]:
    """Engine steps behind the producer: 0 for inputs, else the longest feed-forward chain."""
    off = {pop_of[n]: 0 for n in pop_of if nodes[n].kind == "Input"}
    for n in pop_of:
        if nodes[n].kind != "Input":
            off[pop_of[n]] = 1
    for _ in range(len(pop_of) + 1):
        changed = False
        for (src, tgt, p, cycle), _m in conns.items():
            if cycle or nodes[tgt].kind == "Input":
                continue
            want = off[pop_of[src]] + 1 - p
            if want > off[pop_of[tgt]]:
                off[pop_of[tgt]] = want
                changed = True
        if not changed:
            return off
    raise AtomsparkError("NIR graph: a feed-forward cycle (an edge that closes no cycle loops)")


def _merge_drives(drives: list[Drive]) -> list[Drive]:
    merged: dict[tuple[str, int], np.ndarray] = {}
    for d in drives:
        key = (d.population, d.onset)
        merged[key] = merged[key] + d.value if key in merged else d.value
    return [Drive(p, v, o) for (p, o), v in merged.items() if np.any(v)]


def _pop_name(name: str, used: set[str]) -> str:
    base = re.sub(r"[^A-Za-z0-9_.\-]", "_", name) or "node"
    out, i = base, 1
    while out in used:
        out, i = f"{base}_{i}", i + 1
    used.add(out)
    return out
