"""RSGNNodes: a population of RSGN nodes (vector state h, activation alpha) as a Lava Process with
a float ProcessModel that runs the engine's node update (atomspark.sim.units.rsgn.rsgn_node_step).

Ports (N nodes, state width d): a_in (N * d,) the summed vector input m, flattened row-major,
from a graded Sparse with weights kron(W^T, I_d); flag_in (N,) the number of events that arrived
(a binary Sparse over the synapse pattern of W^T), because a summed payload cannot tell "no
event" from "events that cancel or cross a stored zero weight", and the sparse event rule wakes
every node that received one; s_out (N * d,) the sent payloads x_j = alpha_j h_j (zero rows for
silent nodes); flag_out (N,) 1 for each sending node; alpha_out (N,) the activations, for
recording. The first step emits the ignition (alpha_init, h_init) and updates nothing, like the
engine's step 0. The divisive-normalisation pools stay inside the Process: every pool member is a
node of the same population, so the pool sums are a local reduction with the engine's timing.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from atomspark.sim.units.rsgn import RSGNNodeParams, rsgn_emitted, rsgn_node_step
from lava.magma.core.decorator import implements, requires, tag
from lava.magma.core.model.py.model import PyLoihiProcessModel
from lava.magma.core.model.py.ports import PyInPort, PyOutPort
from lava.magma.core.model.py.type import LavaPyType
from lava.magma.core.process.ports.ports import InPort, OutPort
from lava.magma.core.process.process import AbstractProcess
from lava.magma.core.process.variable import Var
from lava.magma.core.resources import CPU
from lava.magma.core.sync.protocols.loihi_protocol import LoihiProtocol


class RSGNNodes(AbstractProcess):
    """`size` RSGN nodes of state width `width`. The shared transform (w_h, b_h), LayerNorm
    (ln_gain, ln_bias), per-node thresholds and the pools (member CSR pool_indptr, pool_indices:
    row i = the nodes of node i's pool) are fixed parameters; alpha and h are the state."""

    def __init__(
        self,
        *,
        size: int,
        width: int,
        alpha_init,
        h_init,
        thresholds,
        w_h,
        b_h,
        ln_gain,
        ln_bias,
        pool_indptr,
        pool_indices,
        temperature: float,
        signal_gain: float,
        cutoff: float,
        layer_norm_eps: float,
        event_rule: bool,
        name: str | None = None,
    ) -> None:
        super().__init__(
            size=size,
            width=width,
            thresholds=np.asarray(thresholds, np.float64),
            w_h=np.asarray(w_h, np.float64),
            b_h=np.asarray(b_h, np.float64),
            ln_gain=np.asarray(ln_gain, np.float64),
            ln_bias=np.asarray(ln_bias, np.float64),
            pool_indptr=np.asarray(pool_indptr, np.int64),
            pool_indices=np.asarray(pool_indices, np.int64),
            temperature=float(temperature),
            signal_gain=float(signal_gain),
            cutoff=float(cutoff),
            layer_norm_eps=float(layer_norm_eps),
            event_rule=bool(event_rule),
            name=name,
        )
        flat = (size * width,)
        self.a_in = InPort(shape=flat)
        self.flag_in = InPort(shape=(size,))
        self.s_out = OutPort(shape=flat)
        self.flag_out = OutPort(shape=(size,))
        self.alpha_out = OutPort(shape=(size,))
        self.alpha = Var(shape=(size,), init=np.asarray(alpha_init, np.float64))
        self.h = Var(shape=(size, width), init=np.asarray(h_init, np.float64))


def node_params_from(proc_params, alpha, h) -> RSGNNodeParams:
    """The engine's RSGNNodeParams from the Process parameters, so the ProcessModel updates with
    exactly the kernel's arrays (RSGNNodeParams.kernel_arrays)."""
    n = int(proc_params["size"])
    indices = proc_params["pool_indices"]
    pool = sp.csr_matrix((np.ones(indices.size), indices, proc_params["pool_indptr"]), (n, n))
    keys = ("thresholds", "w_h", "b_h", "ln_gain", "ln_bias", "temperature", "signal_gain")
    keys += ("cutoff", "layer_norm_eps", "event_rule")
    return RSGNNodeParams(
        pool=pool, alpha_init=alpha, h_init=h, **{k: proc_params[k] for k in keys}
    )


@implements(proc=RSGNNodes, protocol=LoihiProtocol)
@requires(CPU)
@tag("floating_pt")
class PyRSGNNodesModelFloat(PyLoihiProcessModel):
    """Float RSGN nodes: ignition on the first step, then rsgn_node_step every step."""

    a_in: PyInPort = LavaPyType(PyInPort.VEC_DENSE, float)
    flag_in: PyInPort = LavaPyType(PyInPort.VEC_DENSE, float)
    s_out: PyOutPort = LavaPyType(PyOutPort.VEC_DENSE, float)
    flag_out: PyOutPort = LavaPyType(PyOutPort.VEC_DENSE, float)
    alpha_out: PyOutPort = LavaPyType(PyOutPort.VEC_DENSE, float)
    alpha: np.ndarray = LavaPyType(np.ndarray, float)
    h: np.ndarray = LavaPyType(np.ndarray, float)

    def __init__(self, proc_params) -> None:
        super().__init__(proc_params)
        self.kernel = None

    def run_spk(self) -> None:
        m = self.a_in.recv()
        received = self.flag_in.recv() > 0
        cutoff = self.proc_params["cutoff"]
        if self.kernel is None:  # first step: ignition only
            self.kernel = node_params_from(self.proc_params, self.alpha, self.h).kernel_arrays
        else:
            alpha, h, _ = rsgn_node_step(
                self.alpha,
                self.h,
                m.reshape(self.h.shape),
                received,
                self.kernel,
                self.proc_params["event_rule"],
            )
            self.alpha[:] = alpha
            self.h[:] = h
        self.s_out.send(rsgn_emitted(self.alpha, self.h, cutoff).ravel())
        self.flag_out.send((self.alpha > cutoff).astype(np.float64))
        self.alpha_out.send(self.alpha.copy())
