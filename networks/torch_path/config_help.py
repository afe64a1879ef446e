"""What each training config key means. docs/configs.md is generated from this table and the
schema's tables in config.py: `python -m atomspark.networks.torch_path.config_doc > docs/configs.md`."""

HELP = {
    "task": "what to train: `rsgn-sequence` (RSGN sequence classification) or `vn-dictionary` "
    "(VN dictionary learning with Atomic-Hebb); required",
    "seed": "seeds the data, the initial parameters and the batch order (>= 0)",
    "device": "`auto` (CUDA if present, else CPU), `cpu`, `cuda` or `cuda:N`",
    "dtype": "`float32`, `float64`, or `auto` (float32 on CUDA, float64 on CPU)",
    "epochs": "passes over the training split (>= 1); a resumed run may raise it (see "
    "*Run folders and resuming*)",
    "batch_size": "samples per optimiser step (>= 1)",
    "checkpoint_every": "optimiser steps between checkpoints (0: only at the end)",
    "val_fraction": "share of data.n held out for validation, in (0, 1); both splits must be "
    "non-empty",
    "mixed_precision": "autocast the RSGN forward pass to bfloat16/float16 on CUDA",
    "data.kind": "rsgn-sequence: `hierarchical` or `long-range` (the RSGN paper's two tasks)",
    "data.n": "number of samples (train + validation)",
    "data.length": "rsgn-sequence: tokens per sequence",
    "data.dim": "token dimension (rsgn-sequence) or signal dimension (vn-dictionary); task default",
    "data.n_classes": "rsgn-sequence: number of classes (>= 2)",
    "data.noise": "standard deviation of the additive Gaussian noise (>= 0); task default",
    "data.seed": "the data set's own seed (unset: the run's seed)",
    "data.split_seed": "seed of the train/validation split (unset: the run's seed)",
    "data.stream": "rsgn-sequence: `generator` (NumPy's Generator) or `notebook` (the released "
    "notebook's legacy np.random stream and split: the paper's own sequences)",
    "data.n_atoms": "vn-dictionary: atoms of the planted dictionary",
    "data.active": "vn-dictionary: planted atoms active per signal (<= data.n_atoms)",
    "model.kind": "rsgn-sequence: `rsgn`, or a baseline: `transformer`, `sparse-transformer`, "
    "`lstm`, `mlp`, `mean-linear`",
    "model.layers": "baselines: encoder layers (transformers) or LSTM layers",
    "model.mode": "RSGN: `published` (dense, as released) or `sparse` (k-nearest/radius graph, "
    "event cutoff)",
    "model.n_nodes": "RSGN: number of nodes N",
    "model.dim": "RSGN: dimension of the Poincare ball",
    "model.d_hidden": "RSGN: width of each node's state vector",
    "model.d_in": "RSGN: token dimension; unset means data.dim",
    "model.n_steps": "RSGN: propagation steps K",
    "model.temperature": "RSGN: temperature T of the soft threshold (> 0)",
    "model.tau": "RSGN: distance decay tau of the connection strength (> 0)",
    "model.cutoff": "RSGN: send gate (published) or event cutoff (sparse), in (0, 1)",
    "model.radius": "RSGN sparse: connect nodes closer than this geodesic distance",
    "model.k_nearest": "RSGN sparse: keep each node's k nearest targets (< n_nodes)",
    "model.affinity_rank": "RSGN published: rank of the low-rank affinity",
    "model.ignition_sigma": "RSGN: width of the ignition's Gaussian around spark points (> 0)",
    "model.target_activity": "RSGN: activity the homeostatic thresholds aim for, in (0, 1)",
    "model.threshold_max": "RSGN: upper clamp of the thresholds (released code: 0.99)",
    "model.position_projection": "RSGN: `forward` (the forward pass projects node positions "
    "into the ball and the parameter may leave it: released code) or `in-place` (rescaled into "
    "the ball after every optimiser step: atomspark before 2026-12)",
    "model.threshold_rule": "RSGN: `sigmoid` (alpha = sigma((drive - theta) / T), released "
    "code) or `resting-subtracted` (the same less its value at a zero message, sigma((0.1 "
    "||b_h|| - theta) / T), rescaled to [0, 1): a node reached by an empty message stays silent)",
    "model.threshold_clamp": "RSGN: `homeostat` (only the homeostatic update clamps the "
    "thresholds, so without plasticity they are unbounded: released code) or `every-step` "
    "(clamped after every optimiser step too)",
    "model.input_dim": "VN: signal dimension; unset means data.dim",
    "model.layer_sizes": "VN: one [atoms, output size] pair per layer, e.g. [[16, 8]]",
    "model.lam": "VN: l1 weight per layer (one number or one per layer, >= 0)",
    "model.topk": "VN: optional hard top-k on the top layer",
    "model.method": "VN: settle solver, `fista` or `ista`",
    "model.tol": "VN: settle stops when no code moves more than this (>= 0)",
    "model.max_iter": "VN: iterations per layer and sweep (>= 1)",
    "model.sweeps": "VN: up/down sweeps of the settle (>= 1)",
    "optimizer.lr": "RSGN: AdamW learning rate (> 0)",
    "optimizer.weight_decay": "RSGN: AdamW weight decay (>= 0)",
    "optimizer.grad_clip": "RSGN: gradient-norm clip (> 0)",
    "optimizer.schedule": "`cosine` (to zero over the run, per optimiser step), `cosine-epoch` "
    "(the same, stepped once per epoch as in the RSGN notebook) or `constant`",
    "plasticity.enabled": "RSGN: run the slow Hebbian/homeostatic updates",
    "plasticity.lr_affinity": "RSGN: Hebbian affinity learning rate (>= 0)",
    "plasticity.lr_threshold": "RSGN: homeostatic threshold learning rate (>= 0)",
    "plasticity.affinity_decay": "RSGN: affinity decay per update, in [0, 1]",
    "plasticity.baseline_momentum": "RSGN: momentum of the reward baseline, in [0, 1]",
    "plasticity.prune_threshold": "RSGN sparse: prune edges with affinity below this",
    "plasticity.max_prune": "RSGN sparse: at most this many edges pruned per structural update",
    "plasticity.sprout_correlation": "RSGN sparse: sprout between nodes correlated above this",
    "plasticity.sprout_affinity": "RSGN sparse: ... whose affinity is below this, in [0, 1]",
    "plasticity.max_sprout": "RSGN sparse: at most this many edges sprouted per update",
    "plasticity.structural_every": "RSGN sparse: epochs between prune/sprout updates (>= 1)",
    "plasticity.homeostasis_scope": "`node` (released code) or `global` (one network-wide rule)",
    "plasticity.homeostasis_signal": "what the homeostat holds at the target: `alpha` (mean "
    "activation, released code) or `events` (fraction of nodes above the event cutoff)",
    "plasticity.learn_thresholds": "RSGN: the optimiser also trains the thresholds (released "
    "code); false: the homeostat alone sets them",
    "plasticity.hebbian_reward": "RSGN: the Hebbian reward, `baseline` (R = -(loss - running "
    "mean of the loss)) or `raw` (R = -loss: released notebook; rsgn-paper-hierarchical and -long-range set it)",
    "plasticity.hebbian_step": "RSGN: `once` (the affinity step is lr_affinity x decay x "
    "mean(alpha_i) mean(alpha_j) R) or `released` (lr_affinity applied twice, steps of about "
    "1e-6: released notebook; rsgn-paper-hierarchical and -long-range set it)",
    "hebb.rho_s": "VN: Atomic-Hebb rate of S (>= 0)",
    "hebb.rho_u": "VN: Atomic-Hebb rate of U (>= 0)",
    "hebb.normalize": "VN: rescale touched atoms to unit norm after each update",
}

# Keys a resumed run may change: where it runs and how often it checkpoints. `epochs` may only
# grow (see docs/configs.md); every other difference changes the run and is refused.
