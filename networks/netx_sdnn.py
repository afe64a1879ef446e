"""lava-dl netx sigma-delta (SDNN) layers as the engine's sigma-delta units (Loihi fixed point).

What netx 0.6 builds for a layer whose neuron type is 'SDNN' (`hdf5.Network.get_neuron_params`
with the Network's default spike_exp 6):
- a hidden conv/dense layer: Lava's SigmaDelta, vth = vThMant, spike_exp 6, state_exp 6, ReLU
  (netx passes no act_mode, whatever the file's 'activation' says), no cumulative error, bias =
  the stored bias cast to int32 (per channel for conv);
- a layer with a 'sigma_output' entry (its presence, not its value): Lava's Sigma, which sends
  its running sum every step;
- the input layer: netx makes a Delta whose input port it leaves unconnected, so lava-dl's
  PilotNet SDNN tutorial skips it (`skip_layers=1`) and feeds the first conv from Lava's
  DeltaEncoder on the host: vth = the input layer's vThMant, spike_exp 6, no state exponent
  (its graded spikes equal the skipped Delta's), and it sends each step's output one step
  later (`s_out_buf`). The engine's input population is that encoder, and its projection to the
  first layer carries one step more (ENCODER_DELAY).
Graded spikes travel with 16 message bits (netx's default); synapses multiply them by the
weights as Lava's Dense and Conv do for a nonzero num_message_bits.
"""

from __future__ import annotations

import numpy as np
from atomspark.networks.netx_file import NetxLayer
from atomspark.sim.core import AtomsparkError
from atomspark.sim.units.sigma_delta import SigmaDeltaFixedParams

SDNN_SPIKE_EXP = 6  # netx hdf5.Network(spike_exp=6), the default every tutorial uses
SDNN_STATE_EXP = 6  # netx get_neuron_params: 'state_exp': 6
ENCODER_DELAY = 2  # DeltaEncoder's one-step output buffer + the synapse's step


def sdnn_params(layer: NetxLayer, where: str, bias) -> SigmaDeltaFixedParams:
    """The sigma-delta unit netx builds for `layer` (module docstring); `bias` is the layer's
    bias per unit in (x, y, c) order, or 0. Fields the engine cannot run are refused."""
    n = layer.neuron
    if n.activation.lower() != "relu":
        raise AtomsparkError(
            f"NET {where} neuron: 'activation' {n.activation!r} is not imported: netx builds "
            "every SDNN layer with ReLU, so only 'relu' runs as the file says"
        )
    if n.message_bits == 0:
        raise AtomsparkError(
            f"NET {where} neuron: 'messageBits' 0 makes netx read this sigma-delta layer's "
            "graded output as binary spikes; the engine sends graded spikes (give >= 1)"
        )
    if layer.kind == "input":
        return SigmaDeltaFixedParams(kind="delta", vth=np.int64(n.vth), spike_exp=SDNN_SPIKE_EXP)
    if n.sigma_output:
        if np.any(np.asarray(bias) != 0):
            raise AtomsparkError(
                f"NET {where}: 'bias' on a sigma_output layer (netx builds a Sigma, which has no "
                "bias); remove the bias"
            )
        return SigmaDeltaFixedParams(kind="sigma")
    return SigmaDeltaFixedParams(
        kind="sigma_delta",
        vth=np.int64(n.vth),
        bias=np.asarray(bias, np.int64),
        act="relu",
        spike_exp=SDNN_SPIKE_EXP,
        state_exp=SDNN_STATE_EXP,
    )
