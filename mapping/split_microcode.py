"""The on-chip programs a split RSGN needs beyond Loihi 2's standard neurons, named per process
kind (mapping/lava/rsgn_split.py), with an instruction count per compartment and model step and
a cost per instruction.

Loihi 2's standard neuron models (LIF, graded relays) cannot compute a square root, a table
lookup, a division or LayerNorm; its programmable neurons run them as microcode. Nothing here is
measured on a chip: the counts follow the integer arithmetic of sim/units/rsgn_fixed.py (one
instruction per add, multiply, shift, compare or table read; a bit-serial loop counts every
iteration), and the cost of one instruction is an ESTIMATE: a standard neuron update
(the hardware description's update_active energy and time) taken as LIF_UPDATE_INSTRUCTIONS
instructions. Float programs do not run on the chip; they are listed for the same steps.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from atomspark.mapping.hardware import NeuromorphicHardware

# ESTIMATE: a CUBA LIF update as microcode (decay current, add input, decay voltage, add current,
# compare with threshold, reset, send, store): 8 instructions. Not published for Loihi 2.
LIF_UPDATE_INSTRUCTIONS = 8
ISQRT_ITERATIONS = 31  # bit-serial square root of a 62-bit value: one result bit per iteration
ISQRT_PER_ITERATION = 5  # compare, add, subtract, two shifts
RECIPROCAL_BITS = 30  # 2**30 // std by shift-subtract: one quotient bit per iteration
POOL_QUOTIENT_BITS = 13  # alpha <= 4096: a 13-bit quotient
DIVIDE_PER_BIT = 4  # shift, compare, subtract, set bit


@dataclass(frozen=True)
class MicroOp:
    """One operation a program runs per compartment and model step."""

    name: str
    instructions: int
    note: str


def _isqrt(what: str) -> MicroOp:
    return MicroOp(f"square root ({what})", ISQRT_ITERATIONS * ISQRT_PER_ITERATION,
                   f"bit-serial integer square root, {ISQRT_ITERATIONS} iterations")  # fmt: skip


PROGRAMS: dict[str, list[MicroOp]] = {
    "sum": [
        MicroOp("round shift of the summed message", 3, "add half an LSB, shift by m_shift, send"),
    ],
    "transform": [
        MicroOp("join the two W_h parts", 2, "S_hi << lo_shift + S_lo (two-part W_h only)"),
        MicroOp("bias and saturate", 5, "round shift, add b_h, clamp to 24 bits"),
        MicroOp("norm terms", 9, "h_new^2, z = h_new + h, z^2, each cut into two 24-bit parts"),
        MicroOp("LayerNorm apply", 11, "(z - mu) 1/std, gain, bias, times activation, clamp"),
        MicroOp("payload", 5, "x = h alpha >>> 12 if alpha > cutoff, send x and h"),
    ],
    "norm": [
        MicroOp("join parts", 6, "h_new^2, z^2 and pool sums from their 24-bit parts"),
        _isqrt("||h_new||"),
        MicroOp(
            "soft threshold",
            16,
            "s = alpha + gain norm - theta, s/T, sigmoid table read "
            "(exp table and shift below the table's range)",
        ),  # fmt: skip
        MicroOp("event rule", 4, "received or active, a above the cutoff"),
        MicroOp("LayerNorm statistics", 10, "mu = sum z / d, variance from sum z^2, sum z, mu"),
        _isqrt("LayerNorm std"),
        MicroOp(
            "reciprocal 1/std",
            RECIPROCAL_BITS * DIVIDE_PER_BIT,
            f"shift-subtract division, {RECIPROCAL_BITS} quotient bits",
        ),  # fmt: skip
        MicroOp("pool exchange send", 4, "a in two 24-bit parts to the pool's members"),
        MicroOp(
            "divisive normalisation",
            POOL_QUOTIENT_BITS * DIVIDE_PER_BIT + 8,
            f"a |P| 4096 / (pool sum + eps), {POOL_QUOTIENT_BITS} quotient bits, min 4096",
        ),  # fmt: skip
        MicroOp("control send", 6, "a >>> 28, mu, 1/std, alpha to the node's d compartments"),
    ],
}


# once per sample, on every transform compartment (mapping/split_readout.py): the readout's
# product r = (h alpha) >>> (12 + shift), not gated by the cutoff, sent on port r at the last emit
READOUT_PRODUCT = MicroOp(
    "readout product", 4, "multiply h by alpha, round shift by 12 + shift, send r once per sample"
)


def readout_instructions(n: int, d: int) -> int:
    """Instructions the readout's product takes per sample (every node's d compartments)."""
    return n * d * READOUT_PRODUCT.instructions


# once per sample of a stream (mapping/lava/rsgn_split.py, the reset phase "load"): each program
# takes its sample's ignition from the input and clears the previous sample's state
LOAD_IGNITION = {
    "transform": MicroOp(
        "load ignition", 5, "h and alpha from the input; z, update flag, emit count cleared"
    ),
    "norm": MicroOp("load ignition", 5, "alpha from the input; received, a, mu, 1/std cleared"),
}


def load_instructions(n: int, d: int) -> int:
    """Instructions a stream's reset phase takes per sample (transform and norm programs)."""
    return n * d * LOAD_IGNITION["transform"].instructions + n * LOAD_IGNITION["norm"].instructions


def instructions_per_step(kind: str, two_part_w_h: bool = True) -> int:
    """Instructions one compartment of `kind` runs per model step."""
    ops = PROGRAMS[kind]
    return sum(op.instructions for op in ops if two_part_w_h or op.name != "join the two W_h parts")


def instruction_cost(hw: NeuromorphicHardware) -> dict:
    """Energy (J) and time (s) of one microcode instruction (ESTIMATE: module docstring)."""
    return {
        "energy_j": hw.energy.update_active / LIF_UPDATE_INSTRUCTIONS,
        "time_s": hw.time.update_active / LIF_UPDATE_INSTRUCTIONS,
        "estimate": True,
        "derivation": (
            f"ESTIMATE: {hw.name}'s update_active energy and time (a standard neuron update) "
            f"divided by {LIF_UPDATE_INSTRUCTIONS} instructions assumed for a LIF update"
        ),
    }


def program_table(two_part_w_h: bool = True) -> dict:
    """JSON-ready: per kind its operations and instructions per compartment and model step."""
    return {
        kind: {
            "operations": [
                asdict(op) for op in ops if two_part_w_h or op.name != "join the two W_h parts"
            ],
            "instructions_per_compartment": instructions_per_step(kind, two_part_w_h),
        }
        for kind, ops in PROGRAMS.items()
    }
