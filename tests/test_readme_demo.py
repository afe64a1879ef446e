"""The README's sample demo output is what the demo prints for the committed results of a real run."""

import json

from atomspark.scenarios.compare.chip_vs_gpu_doc import RESULTS
from atomspark.scenarios.runs.demo_transcript import END, README, START, demo_lines, readme_block


def _committed_demo() -> dict:
    return json.loads((RESULTS / "demo.json").read_text())


def test_readme_sample_output_is_rendered_from_the_committed_demo_run():
    text = README.read_text()
    block = text[text.index(START) : text.index(END) + len(END)]
    assert block == readme_block(_committed_demo()), (
        "README's demo output is stale: run `atomspark demo --out results/demo` and then "
        "`python -m atomspark.scenarios.compare.chip_vs_gpu_doc results/demo`"
    )


def test_every_sample_line_is_one_the_demo_prints():
    demo = _committed_demo()
    lines = demo_lines(demo)
    assert lines[0].startswith("[vn] learned a 2-layer dictionary") and lines[-1].startswith(
        "[demo] wrote results/demo/summary.json"
    )
    # one line per section the demo logs: 4 VN, 2 per RSGN configuration, the chip-vs-GPU rows
    n_chip = sum(1 for line in lines if line.startswith("[chip vs gpu]"))
    assert len(lines) == 1 + 4 + 2 * len(demo["rsgn"]) + n_chip + 1
    # per workload: the pricing line, then the chip row, two GPU rows and two ratios (or one line
    # saying that it does not fit)
    assert n_chip == sum(6 if r["fits"] else 2 for r in demo["chip_vs_gpu"].values())
