"""GPU memory as it is: an iteration whose working set fits in the H100's L2 reads main memory
(HBM) only on its first iteration; one that does not fit reads HBM every iteration."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from atomspark.mapping.gpu_pricing import DenseAlgorithm, Phase, price_algorithm
from atomspark.mapping.hardware import hardware_from_dict, load_hardware
from atomspark.sim.core import AtomsparkError

ITERATIONS = 200.0


def _gram(k: int) -> DenseAlgorithm:
    """One VN-like iteration at K atoms: a K x K fp32 Gram read per iteration, K codes per
    sample, next to no arithmetic (memory-bound)."""
    phase = Phase("gram", np.array([ITERATIONS]), 2.0 * k, 4.0 * k * k, 12.0 * k, 3)
    return DenseAlgorithm(f"gram K={k}", (phase,), "given")


@pytest.mark.parametrize("launches", ["graph", "per-iteration"])
def test_a_gram_within_l2_is_read_from_main_memory_once(launches):
    hw = replace(load_hardware("h100"), graph_step_overhead_s=0.0, launch_overhead_s=0.0)
    alg = _gram(1024)  # 4 MiB of Gram: fits the 50 MB L2
    working = 4.0 * 1024 * 1024 + 12.0 * 1024
    price = price_algorithm(alg, hw, 1, launches)
    first = working / hw.bandwidth_bytes_per_s
    rest = (ITERATIONS - 1) * working / hw.l2_bandwidth_bytes_per_s
    assert price.memory_level == "l2" and price.bound == "memory"
    assert price.kernel_time_s == pytest.approx(first + rest)
    every_iteration_hbm = ITERATIONS * working / hw.bandwidth_bytes_per_s
    assert price.kernel_time_s < 0.6 * every_iteration_hbm
    uncached = price_algorithm(alg, replace(hw, l2_bytes=0.0), 1, launches)
    assert uncached.memory_level == "main"
    assert uncached.kernel_time_s == pytest.approx(every_iteration_hbm)


def test_a_gram_larger_than_l2_still_reads_main_memory_every_iteration():
    hw = replace(load_hardware("h100"), graph_step_overhead_s=0.0)
    alg = _gram(4096)  # 64 MiB: larger than the L2
    price = price_algorithm(alg, hw, 1, "graph")
    working = 4.0 * 4096 * 4096 + 12.0 * 4096
    assert price.memory_level == "main"
    assert price.kernel_time_s == pytest.approx(ITERATIONS * working / hw.bandwidth_bytes_per_s)
    # the batch counts towards the working set: K=1024 at a batch whose codes overflow L2
    big_batch = price_algorithm(_gram(1024), hw, 8192, "graph")
    assert big_batch.memory_level == "main"


def test_h100_l2_is_sourced_and_its_bandwidth_labelled_an_estimate():
    hw = load_hardware("h100")
    assert hw.l2_bytes == 50e6 and hw.l2_bandwidth_bytes_per_s > hw.bandwidth_bytes_per_s
    assert "50 MB L2" in hw.sources["dense.l2_bytes"]["source"]
    assert hw.sources["dense.l2_bandwidth_bytes_per_s"]["estimate"] is True
    assert load_hardware("a100").l2_bytes == 0.0  # no cache modelled where none is given


def test_a_cache_size_without_its_bandwidth_is_refused_in_one_line():
    data = {k: v for k, v in _h100_dict().items() if k != "l2_bandwidth_bytes_per_s"}
    with pytest.raises(AtomsparkError, match="give both or neither"):
        hardware_from_dict(data, origin="mine.json")


def _h100_dict() -> dict:
    import json

    from atomspark.mapping.hardware import DATA_DIR

    return json.loads((DATA_DIR / "h100.json").read_text())
