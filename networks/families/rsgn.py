"""The RSGN family: a Resonant Sparse Geometry Network (networks/rsgn), trained with AdamW and
its slow Hebbian/homeostatic rules on the sequence task; it runs its own K + 1 engine steps."""

from __future__ import annotations

from atomspark.networks import rsgn
from atomspark.networks.datasets import hierarchical_sequences
from atomspark.networks.engine_run import run_rsgn
from atomspark.networks.model_family import EngineSide, ModelFamily, register_family
from atomspark.networks.rsgn_compile import compile_rsgn_tokens
from atomspark.networks.sample_runner import rsgn_runner
from atomspark.sim.memory import require_memory

BUILTIN_LENGTH = 64  # hierarchical_sequences' default sequence length


def _builtin_inputs(model, n: int, seed: int, label: str):
    """n hierarchical sequences at the generator's defaults, sized for the model."""
    _, cfg = model
    require_memory(label, 8.0 * n * BUILTIN_LENGTH * cfg.d_in * 3, "use a smaller N")
    return hierarchical_sequences(n=n, dim=cfg.d_in, n_classes=cfg.n_classes, seed=seed).tokens


def _trainer():
    from atomspark.networks.torch_path.rsgn_trainer import RSGN_TRAINER

    return RSGN_TRAINER


RSGN_FAMILY = register_family(
    ModelFamily(
        name="rsgn",
        title="RSGN",
        task="rsgn-sequence",
        metric="accuracy",
        load=rsgn.load_model,
        engine=EngineSide(
            runner=lambda model: rsgn_runner(*model),
            run=lambda model, data, steps: run_rsgn(*model, data),
            record=lambda model, steps: (model[1].n_steps + 1, 1),
            input_shape=lambda model: (None, None, model[1].d_in),
            layout="(samples, length, d_in)",
            dim_name="d_in",
            builtin_inputs=_builtin_inputs,
            graph_for=lambda model, sample: compile_rsgn_tokens(*model, sample),
            positions=lambda model: model[0].positions,
            own_steps="--steps: an RSGN runs its own n_steps K (+1 for ignition) engine steps; "
            "omit --steps",
        ),
        trainer=_trainer,
        describe=lambda cfg: f"{cfg['task']} ({cfg['model']['kind']} model)",
    )
)
