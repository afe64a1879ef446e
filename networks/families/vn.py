"""The VN family: a Vector Network (networks/vn), trained by Atomic-Hebb on the dictionary
task, settled on the engine for a fixed step budget."""

from __future__ import annotations

from atomspark.networks.datasets import sparse_dictionary_data
from atomspark.networks.engine_run import VN_DEFAULT_STEPS, run_vn
from atomspark.networks.model_family import EngineSide, ModelFamily, register_family
from atomspark.networks.sample_runner import vn_runner
from atomspark.networks.vn import VNModel
from atomspark.networks.vn_compile import compile_vn_model
from atomspark.sim.memory import require_memory


def _builtin_inputs(model: VNModel, n: int, seed: int, label: str):
    """n sparse-dictionary signals at the generator's defaults."""
    require_memory(label, 8.0 * n * model.input_dim * 3, "use a smaller N")
    return sparse_dictionary_data(n=n, dim=model.input_dim, seed=seed).signals


def _trainer():
    from atomspark.networks.torch_path.vn_trainer import VN_TRAINER

    return VN_TRAINER


VN_FAMILY = register_family(
    ModelFamily(
        name="vn",
        title="VN",
        task="vn-dictionary",
        metric="dictionary recovery",
        loss_title="loss (settled energy per sample)",
        load=VNModel.load,
        engine=EngineSide(
            runner=vn_runner,
            run=lambda model, data, steps: run_vn(model, data, steps or VN_DEFAULT_STEPS),
            record=lambda model, steps: (steps or VN_DEFAULT_STEPS, len(model.layers)),
            input_shape=lambda model: (None, model.input_dim),
            layout="(samples, d)",
            dim_name="d",
            builtin_inputs=_builtin_inputs,
            graph_for=compile_vn_model,
        ),
        trainer=_trainer,
        compare_metric=("reconstruction_error", "recon err"),
        decision="set of active atoms",
    )
)
