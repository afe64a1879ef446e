"""Hardware descriptions as data: per-operation energies, times and core limits, each with a source.

The shipped descriptions live in ``mapping/hardware_data/*.json``. Every number there is an object
``{"value", "unit", "source"[, "estimate", "derivation"]}``; this module flattens them into typed
dataclasses and keeps the source records next to the values (``hardware.sources``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from atomspark.sim.core import AtomsparkError
from atomspark.sim.user_files import load_user_json

DATA_DIR = Path(__file__).with_name("hardware_data")
# the chip every pricing verb (demo, compare, profile, import) uses unless --hardware names
# another: Loihi 2 calibrated on Intel's silicon measurement (docs/energy_validation.md)
DEFAULT_CHIP = "loihi2-pilotnet"

_OPS = (
    "synop",
    "update_active",
    "update_idle",
    "spike_out",
    "spike_local",
    "hop_east_west",
    "hop_north_south",
    "chip_hop",
)
_LIMITS = (
    "units_per_core",
    "synaptic_memory_bytes_per_core",
    "bytes_per_synapse",
    "max_fan_in_axons_per_core",
    "max_fan_out_axons_per_core",
    "cores_per_chip",
    "cores_per_tile",
    "mesh_width_tiles",
    "mesh_height_tiles",
    "chips_per_board",
    "max_payload_bits",
)


@dataclass(frozen=True)
class OpCosts:
    """Energy (J) or time (s) of each event-driven operation on a neuromorphic core."""

    synop: float
    update_active: float
    update_idle: float
    spike_out: float
    spike_local: float
    hop_east_west: float
    hop_north_south: float
    chip_hop: float


@dataclass(frozen=True)
class CoreLimits:
    """Capacity of one core, the on-chip mesh and the board."""

    units_per_core: int
    synaptic_memory_bytes_per_core: int
    bytes_per_synapse: float
    max_fan_in_axons_per_core: int
    max_fan_out_axons_per_core: int
    cores_per_chip: int
    cores_per_tile: int
    mesh_width_tiles: int
    mesh_height_tiles: int
    chips_per_board: int
    max_payload_bits: int

    @property
    def synapses_per_core(self) -> int:
        """How many synapses fit in one core's synaptic memory."""
        return int(self.synaptic_memory_bytes_per_core // self.bytes_per_synapse)


@dataclass(frozen=True)
class NeuromorphicHardware:
    """A neuromorphic chip: op costs, barrier table, static power and limits."""

    name: str
    description: str
    energy: OpCosts
    time: OpCosts
    static_power_per_core_w: float
    barrier_table: tuple[tuple[int, float], ...]  # (tiles in use, seconds), sorted
    barrier_interpolation: str  # "step" (largest key <= tiles) or "linear"
    limits: CoreLimits
    sources: dict = field(default_factory=dict, repr=False, compare=False)
    kind: str = "neuromorphic"
    # a silicon fit (scenarios/runs/loihi2_calibrate.py): bands, op_attribution, op_energy, bias;
    # empty for a preset not calibrated against a measurement
    calibration: dict = field(default_factory=dict, repr=False, compare=False)

    def barrier_time(self, tiles_in_use: int) -> float:
        """Time-step barrier for `tiles_in_use` tiles, from the source's table."""
        keys = np.array([k for k, _ in self.barrier_table], dtype=float)
        vals = np.array([v for _, v in self.barrier_table], dtype=float)
        n = max(int(tiles_in_use), 1)
        if self.barrier_interpolation == "linear":
            return float(np.interp(n, keys, vals))
        idx = int(np.searchsorted(keys, n, side="right")) - 1
        return float(vals[max(idx, 0)])


@dataclass(frozen=True)
class DenseHardware:
    """A GPU or CPU core for dense work: peak rates, energies per FLOP and byte, idle power."""

    name: str
    description: str
    tdp_w: float
    idle_power_w: float
    peak_flops: dict  # precision -> FLOP/s
    bandwidth_bytes_per_s: float
    energy_per_flop: dict  # precision -> J
    energy_per_byte: float
    launch_overhead_s: float
    busy_power_w: float = 0.0  # board power while kernels run (gpu_pricing's power model)
    graph_step_overhead_s: float = 0.0  # per iteration of a graph-captured / persistent solve
    l2_bytes: float = 0.0  # on-die cache that keeps an iteration's operands (0: none modelled)
    l2_bandwidth_bytes_per_s: float = 0.0  # read bandwidth of that cache
    sources: dict = field(default_factory=dict, repr=False, compare=False)
    kind: str = "dense"


Hardware = NeuromorphicHardware | DenseHardware


def known_hardware() -> list[str]:
    """Names of the shipped hardware descriptions."""
    return sorted(p.stem for p in DATA_DIR.glob("*.json"))


def load_hardware(name_or_path: str | Path) -> Hardware:
    """Load a shipped description by name (e.g. "loihi1-davies") or a user JSON file by path."""
    path = Path(name_or_path)
    if not (path.suffix == ".json" and os.path.lexists(path)):
        if str(name_or_path) not in known_hardware():
            raise AtomsparkError(
                f"unknown hardware {str(name_or_path)!r}: known names are "
                f"{', '.join(known_hardware())} (or give the path of a .json description)"
            )
        path = DATA_DIR / f"{name_or_path}.json"
    data = load_user_json(path, "hardware file")  # a regular file, bounded, UTF-8 JSON
    return hardware_from_dict(data, origin=str(path))


def hardware_from_dict(data: dict, origin: str = "<dict>") -> Hardware:
    """Build a description from the JSON layout documented in docs/hardware.md."""
    if not isinstance(data, dict):
        raise AtomsparkError(f"hardware {origin}: top level must be an object")
    kind = data.get("kind")
    reader = _Reader(origin)
    if kind == "neuromorphic":
        return _neuromorphic(data, reader)
    if kind == "dense":
        return _dense(data, reader)
    raise AtomsparkError(
        f"hardware {origin}: 'kind' must be 'neuromorphic' or 'dense', got {kind!r}"
    )


# SI and binary prefixes accepted in a number's "unit" (e.g. "pJ", "ns", "KiB", "TFLOP/s").
_PREFIXES = {
    "": 1.0,
    "f": 1e-15,
    "p": 1e-12,
    "n": 1e-9,
    "u": 1e-6,
    "µ": 1e-6,
    "μ": 1e-6,
    "m": 1e-3,
    "k": 1e3,
    "K": 1e3,
    "M": 1e6,
    "G": 1e9,
    "T": 1e12,
    "P": 1e15,
    "Ki": 1024.0,
    "Mi": 1024.0**2,
    "Gi": 1024.0**3,
}


def _base_unit(where: str, key: str) -> str | None:
    """The unit a field is stored in (None: a count, read as given)."""
    if where == "energy":
        return "W" if key == "static_power_per_core" else "J"
    if where == "time":
        return "s"
    if where == "peak_flops":
        return "FLOP/s"
    if where == "energy_per_flop":
        return "J"
    if where == "dense":
        return {
            "tdp_w": "W",
            "idle_power_w": "W",
            "busy_power_w": "W",
            "bandwidth_bytes_per_s": "B/s",
            "energy_per_byte": "J",
            "launch_overhead_s": "s",
            "graph_step_overhead_s": "s",
            "l2_bytes": "B",
            "l2_bandwidth_bytes_per_s": "B/s",
        }[key]
    if where == "limits" and key in ("bytes_per_synapse", "synaptic_memory_bytes_per_core"):
        return "B"
    return None


def unit_scale(unit, base: str, what: str) -> float:
    """Factor that turns a value in `unit` into `base` (e.g. "pJ" -> 1e-12 for base "J")."""
    if not isinstance(unit, str) or not unit.endswith(base):
        raise AtomsparkError(
            f"{what}: unit {unit!r} is not {base} or a prefixed {base} (e.g. p{base}, n{base}, "
            f"k{base}); say which unit the value is in"
        )
    prefix = unit[: len(unit) - len(base)]
    if prefix not in _PREFIXES:
        raise AtomsparkError(
            f"{what}: unknown prefix {prefix!r} in unit {unit!r} (use one of "
            f"{', '.join(p for p in _PREFIXES if p)})"
        )
    return _PREFIXES[prefix]


class _Reader:
    """Reads sourced numbers in their stated unit (converted to the base unit: J, s, W, B, B/s,
    FLOP/s), recording the source of each and naming what is missing."""

    def __init__(self, origin: str):
        self.origin = origin
        self.sources: dict = {}

    def number(self, section: dict, key: str, where: str) -> float:
        if not isinstance(section, dict) or key not in section:
            raise AtomsparkError(f"hardware {self.origin}: missing '{where}.{key}'")
        entry = section[key]
        if not isinstance(entry, dict) or "value" not in entry or "source" not in entry:
            raise AtomsparkError(
                f"hardware {self.origin}: '{where}.{key}' must be an object with 'value' and "
                "'source' (every number carries its source)"
            )
        value = entry["value"]
        if isinstance(value, bool) or not isinstance(value, int | float) or not np.isfinite(value):
            raise AtomsparkError(f"hardware {self.origin}: '{where}.{key}' is not a finite number")
        if value < 0:
            raise AtomsparkError(f"hardware {self.origin}: '{where}.{key}' is negative ({value})")
        if entry.get("estimate") and not entry.get("derivation"):
            raise AtomsparkError(
                f"hardware {self.origin}: '{where}.{key}' is an estimate without a 'derivation'"
            )
        self.sources[f"{where}.{key}"] = dict(entry)
        base = _base_unit(where, key)
        if base is None:
            return float(value)
        return float(value) * unit_scale(
            entry.get("unit"), base, f"hardware {self.origin}: '{where}.{key}'"
        )

    def section(self, data: dict, key: str) -> dict:
        if not isinstance(data.get(key), dict):
            raise AtomsparkError(f"hardware {self.origin}: missing section '{key}'")
        return data[key]


def _neuromorphic(data: dict, rd: _Reader) -> NeuromorphicHardware:
    energy_sec, time_sec = rd.section(data, "energy"), rd.section(data, "time")
    energy = OpCosts(**{op: rd.number(energy_sec, op, "energy") for op in _OPS})
    time = OpCosts(**{op: rd.number(time_sec, op, "time") for op in _OPS})
    static = rd.number(energy_sec, "static_power_per_core", "energy")
    lim_sec = rd.section(data, "limits")
    raw = {k: rd.number(lim_sec, k, "limits") for k in _LIMITS}
    limits = CoreLimits(
        **{k: (v if k == "bytes_per_synapse" else int(v)) for k, v in raw.items()},
    )
    for key in ("units_per_core", "cores_per_chip", "cores_per_tile", "chips_per_board"):
        if getattr(limits, key) < 1:
            raise AtomsparkError(f"hardware {rd.origin}: 'limits.{key}' must be >= 1")
    tiles = limits.mesh_width_tiles * limits.mesh_height_tiles
    if tiles * limits.cores_per_tile < limits.cores_per_chip:
        raise AtomsparkError(
            f"hardware {rd.origin}: mesh {limits.mesh_width_tiles}x{limits.mesh_height_tiles} tiles "
            f"x {limits.cores_per_tile} cores holds fewer than cores_per_chip={limits.cores_per_chip}"
        )
    barrier = rd.section(data, "barrier")
    table = barrier.get("table")
    if not isinstance(table, dict) or not table or "source" not in barrier:
        raise AtomsparkError(
            f"hardware {rd.origin}: 'barrier' needs a non-empty 'table' {{tiles: seconds}} "
            "and a 'source'"
        )
    try:
        pairs = tuple(sorted((int(k), float(v)) for k, v in table.items()))
    except (TypeError, ValueError) as exc:
        raise AtomsparkError(f"hardware {rd.origin}: barrier table is not numeric ({exc})") from exc
    interp = barrier.get("interpolation", "step")
    if interp not in ("step", "linear"):
        raise AtomsparkError(f"hardware {rd.origin}: barrier interpolation {interp!r} unknown")
    rd.sources["barrier"] = {k: v for k, v in barrier.items() if k != "table"}
    return NeuromorphicHardware(
        name=str(data.get("name", rd.origin)),
        description=str(data.get("description", "")),
        energy=energy,
        time=time,
        static_power_per_core_w=static,
        barrier_table=pairs,
        barrier_interpolation=interp,
        limits=limits,
        sources=rd.sources,
        calibration=_calibration(data, rd),
    )


def _calibration(data: dict, rd: _Reader) -> dict:
    """The optional 'calibration' section, checked: bands {name: [low, high]} around 1,
    op_attribution {class: factor > 0}, op_energy > 0 and a bias sentence."""
    cal = data.get("calibration")
    if cal is None:
        return {}
    where = f"hardware {rd.origin}: 'calibration'"
    if not isinstance(cal, dict) or not isinstance(cal.get("bias"), str):
        raise AtomsparkError(f"{where} must be an object with a 'bias' sentence")
    for name, band in (cal.get("bands") or {}).items():
        ok = isinstance(band, list) and len(band) == 2 and all(_positive(v) for v in band)
        if not ok or not band[0] <= 1.0 <= band[1]:
            raise AtomsparkError(f"{where}.bands.{name} must be [low, high] with low <= 1 <= high")
    factors = [cal.get("op_energy", 1.0), *(cal.get("op_attribution") or {}).values()]
    if not all(_positive(v) for v in factors):
        raise AtomsparkError(f"{where}: op_energy and op_attribution factors must be > 0")
    return dict(cal)


def _positive(v) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and np.isfinite(v) and v > 0


def _dense(data: dict, rd: _Reader) -> DenseHardware:
    peak_sec = rd.section(data, "peak_flops")
    eflop_sec = rd.section(data, "energy_per_flop")
    precisions = sorted(peak_sec)
    return DenseHardware(
        name=str(data.get("name", rd.origin)),
        description=str(data.get("description", "")),
        tdp_w=rd.number(data, "tdp_w", "dense"),
        idle_power_w=rd.number(data, "idle_power_w", "dense"),
        peak_flops={p: rd.number(peak_sec, p, "peak_flops") for p in precisions},
        bandwidth_bytes_per_s=rd.number(data, "bandwidth_bytes_per_s", "dense"),
        energy_per_flop={p: rd.number(eflop_sec, p, "energy_per_flop") for p in precisions},
        energy_per_byte=rd.number(data, "energy_per_byte", "dense"),
        launch_overhead_s=rd.number(data, "launch_overhead_s", "dense"),
        busy_power_w=_busy_power(data, rd),
        graph_step_overhead_s=_graph_step(data, rd),
        **_cache(data, rd),
        sources=rd.sources,
    )


def _cache(data: dict, rd: _Reader) -> dict:
    """l2_bytes and l2_bandwidth_bytes_per_s, both or neither (neither: no cache modelled, every
    iteration reads main memory)."""
    keys = ("l2_bytes", "l2_bandwidth_bytes_per_s")
    given = [k for k in keys if k in data]
    if not given:
        return {}
    if len(given) == 1:
        missing = next(k for k in keys if k not in data)
        raise AtomsparkError(
            f"hardware {rd.origin}: '{given[0]}' needs '{missing}' too (give both or neither)"
        )
    return {k: rd.number(data, k, "dense") for k in keys}


def _busy_power(data: dict, rd: _Reader) -> float:
    """busy_power_w if the file gives it, else TDP (the upper bound), recorded as such."""
    if "busy_power_w" in data:
        return rd.number(data, "busy_power_w", "dense")
    tdp = float(data["tdp_w"]["value"])
    rd.sources["dense.busy_power_w"] = {
        "unit": "W",
        "source": "not given: TDP used (upper bound)",
        "estimate": True,
        "derivation": "no busy-power figure in the hardware file",
    }
    return tdp


def _graph_step(data: dict, rd: _Reader) -> float:
    """graph_step_overhead_s if the file gives it, else the launch overhead (no saving assumed)."""
    if "graph_step_overhead_s" in data:
        return rd.number(data, "graph_step_overhead_s", "dense")
    rd.sources["dense.graph_step_overhead_s"] = {
        "unit": "s",
        "source": "not given: the launch overhead used",
        "estimate": True,
        "derivation": "no graph-step figure in the hardware file",
    }
    return rd.number(data, "launch_overhead_s", "dense")


def hardware_sources(*hardware: Hardware) -> dict:
    """{hardware name: {field: {value, unit, source[, estimate, derivation]}}} of the numbers
    a comparison used, for reports and docs (every hardware number carries its source)."""
    return {hw.name: {key: dict(meta) for key, meta in hw.sources.items()} for hw in hardware}
