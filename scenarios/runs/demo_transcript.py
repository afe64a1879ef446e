"""The demo's printed lines, from its results alone, and the README block that shows them.

`atomspark demo` prints exactly these lines (scenarios/runs/demo.py calls the functions below
as each section finishes), so the README's sample output, rendered here from the committed
results of a real run (docs/results/chip_vs_gpu/demo.json), is output the demo prints; the test
tests/test_readme_demo.py checks that the README block equals this rendering.
"""

from __future__ import annotations

import re
from pathlib import Path

from atomspark.mapping.chip_gpu_ratios import format_results
from atomspark.scenarios.compare.chip_rows import SETTLED_REL_ERROR

DEMO_FILES = (
    "summary.json, vn_profile.json, vn_activity.png, costs.png, chip_vs_gpu.png, tornado.png"
)
README = Path(__file__).resolve().parents[2] / "README.md"
START, END = "<!-- demo:transcript:start -->", "<!-- demo:transcript:end -->"


def vn_learn_line(seconds: float) -> str:
    return f"[vn] learned a 2-layer dictionary (48 + 32 atoms) in {seconds:.1f} s"


def vn_lines(vn: dict) -> list[str]:
    """The VN section's lines after learning: reference sparsity, engine accuracy, events."""
    active = ", ".join(f"{k} {v:.3f}" for k, v in vn["reference_active_fraction"].items())
    lazy = vn["send_on_delta"]
    fewer = vn["events_per_sample"] / max(lazy["events_per_sample"], 1)
    return [
        f"[vn] reference settle: active fraction per layer {active}",
        f"[vn] event engine: max relative code error vs reference "
        f"{vn['engine_vs_reference_max_rel_error']:.1e} after {vn['engine_steps']} steps; within "
        f"{SETTLED_REL_ERROR:g} after {vn['engine_steps_to_settle_median']:.0f} steps (median)"
        + _fixed(vn),
        f"[vn] events/sample {vn['events_per_sample']:.0f}, synaptic ops/sample "
        f"{vn['synops_per_sample']:.0f} vs {vn['dense_ops_per_sample_same_steps']:.0f} "
        "dense multiply-adds over the same steps",
        f"[vn] send-on-delta (|unsent change| > {lazy['threshold']:g}): events/sample "
        f"{lazy['events_per_sample']:.0f} ({fewer:.0f}x fewer), max relative code error "
        f"{lazy['max_rel_error']:.1e}",
    ]


def _fixed(vn: dict) -> str:
    q = vn.get("fixed_point")
    if not q:
        return ""
    return (
        f"; in {q['frac_bits']}-bit fixed point (as deployed, and priced) {q['max_rel_error']:.1e}"
    )


def rsgn_lines(mode: str, r: dict) -> list[str]:
    """One RSGN configuration's lines: activity and messages per step, engine vs reference."""
    return [
        f"[rsgn] {mode:9s} N={r['nodes']}: active fraction per step "
        + " ".join(f"{a:.2f}" for a in r["active_fraction_per_step"])
        + " | messages per step "
        + " ".join(f"{m:.0f}" for m in r["messages_per_step"]),
        f"[rsgn] {mode:9s} on the event engine: class scores equal the reference within "
        f"{r['engine_vs_reference_max_score_error']:.1e}, "
        f"{r['engine_synops_per_sequence']:.0f} synaptic ops per sequence",
    ]


def pricing_line(workload: str) -> str:
    """Printed before a workload is priced (the GPU side's accuracy check takes a while)."""
    return f"[chip vs gpu] {workload}: placing it on the chip, checking which GPU precisions reach its accuracy"


def wrote_line(out: str | Path) -> str:
    return f"[demo] wrote {out}/{DEMO_FILES}"


def demo_lines(summary: dict, out: str | Path = "results/demo") -> list[str]:
    """Every line a demo run with these results prints, in order."""
    lines = [vn_learn_line(summary["vn"]["learn_s"]), *vn_lines(summary["vn"])]
    for mode, r in summary["rsgn"].items():
        lines += rsgn_lines(mode, r)
    lines += [pricing_line(name) for name in summary["chip_vs_gpu"]]
    return [*lines, *format_results(summary["chip_vs_gpu"]), wrote_line(out)]


def reading_notes(demo: dict) -> list[str]:
    """The README's notes on the VN and RSGN lines, with their figures from the same run."""
    vn, lazy, sparse = demo["vn"], demo["vn"]["send_on_delta"], demo["rsgn"]["sparse"]
    fewer = vn["events_per_sample"] / max(lazy["events_per_sample"], 1)
    published_all = min(demo["rsgn"]["published"]["active_fraction_per_step"]) == 1.0
    low, high = min(sparse["active_fraction_per_step"]), max(sparse["active_fraction_per_step"])
    return [
        f"- **VN.** The event engine reaches the reference's fixed point (within "
        f"{vn['engine_vs_reference_max_rel_error']:.1e}). Exact change events keep flowing while "
        f"ISTA converges geometrically, so send-on-delta cuts events {fewer:.0f}x at a code error "
        f"of {lazy['max_rel_error']:.1e}.",
        "- **RSGN.** The published configuration keeps "
        + ("every node active at every step" if published_all else "most nodes active")
        + ", which matches the caveat about the authors' released results "
        f"([docs/maths.md](docs/maths.md)). The sparse configuration holds {100 * low:.0f}-"
        f"{100 * high:.0f} % of nodes active, and the engine's class scores equal the reference's "
        f"within {sparse['engine_vs_reference_max_score_error']:.0e}.",
    ]


def readme_block(demo: dict) -> str:
    """The README's sample-output block: the measured run time, the printed lines, the notes
    on them."""
    minutes, seconds = divmod(round(demo["wall_s"]), 60)
    return "\n".join([
        START,
        f"This is the output of a real run ({minutes} min {seconds:02d} s on {demo['machine']}, "
        f"{demo['date']}; `{demo['command']}`):",
        "",
        "```",
        *demo_lines(demo),
        "```",
        "",
        "How to read the output:",
        "",
        *reading_notes(demo),
        END,
    ])  # fmt: skip


def rewrite_readme(demo: dict, readme: Path = README) -> None:
    """Replace the README's sample-output block with the one rendered from `demo`."""
    text = readme.read_text()
    pattern = re.compile(re.escape(START) + ".*?" + re.escape(END), re.S)
    if not pattern.search(text):
        raise ValueError(f"{readme}: no {START} ... {END} block to rewrite")
    readme.write_text(pattern.sub(lambda _: readme_block(demo), text, count=1))
