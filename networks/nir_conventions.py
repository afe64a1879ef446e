"""How each producer turns NIR's neuron ODEs into steps, and the engine LIF that does the same.

NIR states continuous equations (tau dv/dt = (v_leak - v) + r I, tau_syn dI/dt = -I + w_in S,
spike when v > v_threshold, then v = v_reset); each producer's writer and simulator fix one
discretisation, read here from their code (docs/nir.md has the equations):
- snnTorch (dt = 1e-4 s): forward Euler, beta = 1 - dt/tau; its writer sets r = tau/dt and
  w_in = tau_syn/dt so the input enters unscaled (its reader checks the scale is 1, within
  float rounding, and then uses 1; so do we); current before voltage in the same step;
  v_leak must be 0 (its reader refuses anything else).
- Norse (dt = 1e-3 s): forward Euler with the cell's tau_inv; Norse's writer stores
  tau = dt / tau_inv, so the per-step factor is dt * tau_inv = dt**2 / tau; the input enters
  the current unscaled and the voltage as factor * (v_leak - v + r I); v starts at v_leak.
- Sinabs (one step per time unit): exact exponential decay alpha = exp(-1/tau) and the input
  added unscaled (v = alpha v + r x: its writer and reader use norm_input=False); a spike when
  v >= v_threshold; v_leak must be 0 (its reader refuses anything else).
- nir (the default, one step per time unit): NIR's equations by forward Euler as written, the
  reading atomspark's own `export --to nir` files need (no producer's rounding rules).
The engine's float LIF is u <- u(1-du) + in, v <- v(1-dv) + u + bias, spike if v > vth, v = v_reset;
the input scale of each neuron is folded into the weights of every projection into it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from atomspark.networks.nir_file import NirNode
from atomspark.networks.nir_ops import param
from atomspark.sim.core import AtomsparkError
from atomspark.sim.units.lif import LIFParams

NEURON_KINDS = ("LIF", "CubaLIF", "LI", "IF", "I", "Threshold")  # "I": NIR's integrator
NEVER = 1e300  # threshold of units that never fire (LI, I): their output is v


def _euler(dt: float, tau: np.ndarray) -> np.ndarray:
    return dt / tau


def _euler_dt2(dt: float, tau: np.ndarray) -> np.ndarray:
    return dt * dt / tau


def _exp(dt: float, tau: np.ndarray) -> np.ndarray:
    return -np.expm1(-dt / tau)


@dataclass(frozen=True)
class Convention:
    """One producer's discretisation. factor(dt, tau) is the per-step decay (1 - beta)."""

    name: str
    dt: float
    factor: Callable[[float, np.ndarray], np.ndarray]
    scale_syn_input: bool  # the current takes w_in * factor(tau_syn) * S (Euler) or w_in * S
    scale_mem_input: bool  # the voltage takes r * factor(tau) * I or r * I
    snap_unit_scale: bool  # an input scale within float rounding of 1 is 1 (snnTorch's reader)
    fire_at_threshold: bool  # v >= v_threshold fires (Sinabs), else v > v_threshold
    v_starts_at_leak: bool  # initial v = v_leak (Norse), else 0
    allows_v_leak: bool = True
    allows_cuba: bool = True


CONVENTIONS = {
    "nir": Convention(
        "nir", 1.0, _euler, True, True, False, False, False, allows_v_leak=False
    ),  # NIR's equations by forward Euler, one step per time unit (atomspark's own export)
    "snntorch": Convention(
        "snntorch", 1e-4, _euler, True, True, True, False, False, allows_v_leak=False
    ),
    "norse": Convention("norse", 1e-3, _euler_dt2, False, True, False, False, True),
    "sinabs": Convention(
        "sinabs",
        1.0,
        _exp,
        False,
        False,
        False,
        True,
        False,
        allows_v_leak=False,
        allows_cuba=False,
    ),  # fmt: skip
}


@dataclass(frozen=True)
class NeuronMap:
    """The engine population of one NIR neuron node: its LIF, the scale applied to every input
    (per unit), and whether it fires (LI and Integrator output their voltage)."""

    params: LIFParams
    in_scale: np.ndarray
    fires: bool


def _uniform(node: NirNode, key: str, size: int) -> float:
    v = param(node, key).reshape(-1)
    if v.size not in (1, size):
        raise AtomsparkError(
            f"NIR node {node.name!r} ({node.kind}): '{key}' has {v.size} values for {size} neurons"
        )
    if np.ptp(v) > 1e-9 * max(1.0, float(np.abs(v).max())):
        raise AtomsparkError(
            f"NIR node {node.name!r} ({node.kind}): '{key}' differs across neurons "
            f"({v.min():.6g}..{v.max():.6g}); the engine takes one value per population"
        )
    return float(v[0])


def _per_unit(node: NirNode, key: str, size: int, default: float) -> np.ndarray:
    v = param(node, key, required=False)
    if v is None:
        return np.full(size, default)
    v = v.reshape(-1)
    if v.size not in (1, size):
        raise AtomsparkError(
            f"NIR node {node.name!r} ({node.kind}): '{key}' has {v.size} values for {size} neurons"
        )
    return np.broadcast_to(v, (size,)).astype(np.float64)


def _snap(c: Convention, scale: np.ndarray) -> np.ndarray:
    if c.snap_unit_scale and np.allclose(scale, 1.0, rtol=1e-5, atol=1e-8):
        return np.ones_like(scale)
    return scale


def _decay(c: Convention, node: NirNode, key: str, size: int) -> float:
    tau = _uniform(node, key, size)
    if tau <= 0:
        raise AtomsparkError(f"NIR node {node.name!r} ({node.kind}): '{key}' must be > 0")
    d = float(c.factor(c.dt, np.array(tau)))
    if not 0.0 < d <= 1.0:
        raise AtomsparkError(
            f"NIR node {node.name!r} ({node.kind}): '{key}' = {tau:.6g} gives a decay of "
            f"{d:.6g} per step under {c.name}'s dt = {c.dt:g}; it must be in (0, 1] (check "
            "--producer and --dt)"
        )
    return d


def neuron_map(c: Convention, node: NirNode, size: int) -> NeuronMap:
    """The engine LIF of `node` under convention `c` (refused in one line when it cannot run)."""
    kind = node.kind
    where = f"NIR node {node.name!r} ({kind})"
    if kind == "Threshold":
        vth = _uniform(node, "threshold", size)
        return NeuronMap(LIFParams(du=1.0, dv=1.0, vth=_vth(c, vth)), np.ones(size), True)
    r = _per_unit(node, "r", size, 1.0)
    if kind in ("IF", "I"):
        fires = kind == "IF"
        vth = _vth(c, _uniform(node, "v_threshold", size)) if fires else NEVER
        v_reset = _uniform(node, "v_reset", size) if fires and "v_reset" in node.params else 0.0
        return NeuronMap(LIFParams(du=1.0, dv=0.0, vth=vth, v_reset=v_reset), r, fires)
    if kind == "CubaLIF" and not c.allows_cuba:
        raise AtomsparkError(f"{where}: {c.name} writes no CubaLIF; its files cannot hold one")
    tau_key = "tau_mem" if kind == "CubaLIF" else "tau"
    dv = _decay(c, node, tau_key, size)
    v_leak = _per_unit(node, "v_leak", size, 0.0)
    if np.any(v_leak) and not c.allows_v_leak:
        raise AtomsparkError(f"{where}: 'v_leak' must be 0 under {c.name}'s convention")
    mem_scale = r * dv if c.scale_mem_input else r
    du, syn_scale = 1.0, np.ones(size)
    if kind == "CubaLIF":
        du = _decay(c, node, "tau_syn", size)
        w_in = _per_unit(node, "w_in", size, 1.0)
        syn_scale = w_in * du if c.scale_syn_input else w_in
        syn_scale = _snap(c, syn_scale)
    in_scale = syn_scale * _snap(c, mem_scale)
    fires = kind != "LI"
    vth = _vth(c, _uniform(node, "v_threshold", size)) if fires else NEVER
    v_reset = _uniform(node, "v_reset", size) if fires and "v_reset" in node.params else 0.0
    bias = dv * v_leak if c.scale_mem_input else v_leak
    v_init = v_leak if c.v_starts_at_leak else 0.0
    params = LIFParams(du=du, dv=dv, vth=vth, bias=bias, v_reset=v_reset, v_init=v_init)
    return NeuronMap(params, in_scale, fires)


def _vth(c: Convention, vth: float) -> float:
    """The engine fires on v > vth; `>=` is the next float below (exact in float64)."""
    return float(np.nextafter(vth, -np.inf)) if c.fire_at_threshold else vth
