"""VN benchmark harness: `atomspark bench NAME` runs a benchmark family (fn1d, bumps2d, ...).

Python entry point: run_benchmark(name, quick, seeds, out, device, resume, overwrite, sizes,
models) -> results dict (also written to out/results.json); list_benchmarks().

A family is one module here defining FAMILY = Family(...) (family.py) and one line in
registry.py. It gives: sizes(quick) -> frozen dataclass; make_data(sizes, seed) -> BenchData (clean
ID training signals (N, d) and named splits, "id" first, each a Split of clean/noisy/hidden);
models(sizes, data) -> {name: factory(device) -> model}; random_hidden(rng, n, sizes) -> (n, d)
bool masks like the masked task's; bytes_needed(sizes); optional plots(results, cells, out).

A model has kind ("vn", "torch", "trivial"), fit(train, seed, random_hidden=...),
predict(x, observed) -> (n, d), n_params(), describe(). VN adds encode/decode and engine_run
(vn_bench.VNBench); baselines are torch networks wrapped by torch_bench.TorchBench.

Shared modules: family (interface, tasks), metrics, vn_bench, torch_bench (training loop),
baselines (networks), trivial, evaluate, costs (chip and GPU pricing), store (run folder,
atomic cells, resume/overwrite), tables, plots, runner.
"""

__all__ = ["list_benchmarks", "run_benchmark"]


def __getattr__(name: str):
    """Import the runner (and with it PyTorch) on first use, not when the package is imported:
    the command line builds its `bench` parser from here and must start fast."""
    if name in __all__:
        from atomspark.scenarios.bench import runner

        return getattr(runner, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
