"""RSGNFixedNodes: integer RSGN nodes as a Lava Process with a bit-accurate (fixed_pt)
ProcessModel that runs the engine's integer node update (atomspark.sim.units.rsgn_fixed), for
every registered integer RSGN variant (`unit_model`: rsgn_fixed, rsgn_fixed_split, ...; the
fields are that variant's parameters).

Ports as RSGNNodes (rsgn_nodes.py), in integers: a_in (N * d,) the summed graded messages of a
bit-accurate Sparse with weights kron(W_mant^T, I_d), weight_exp 0 (its int32 output wraps; the
node shifts by m_shift); flag_in (N,) events received (binary Sparse over W's synapse pattern);
s_out (N * d,) payloads (h alpha) >> 12 in Q.10, 24-bit graded spikes; flag_out (N,) 1 per
sending node; alpha_out (N,) Q.12 activations. The first step emits the ignition and updates
nothing, like the engine's step 0.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import scipy.sparse as sp
from atomspark.sim import units  # noqa: F401  (registers every unit model)
from atomspark.sim.unit_model import model_named, model_of
from atomspark.sim.units.rsgn_fixed import RSGNFixedParams, emitted_payloads, step_nodes
from lava.magma.core.decorator import implements, requires, tag
from lava.magma.core.model.py.model import PyLoihiProcessModel
from lava.magma.core.model.py.ports import PyInPort, PyOutPort
from lava.magma.core.model.py.type import LavaPyType
from lava.magma.core.process.ports.ports import InPort, OutPort
from lava.magma.core.process.process import AbstractProcess
from lava.magma.core.process.variable import Var
from lava.magma.core.resources import CPU
from lava.magma.core.sync.protocols.loihi_protocol import LoihiProtocol

_NOT_FIELDS = ("pool", "alpha_init", "h_init")  # given as ports/Vars, not parameters


class RSGNFixedNodes(AbstractProcess):
    """`size` integer RSGN nodes of width `width`; `unit_model` names the variant and `fields`
    are its parameters' integer fields (RSGNFixedParams.integer_fields), the pools as member CSR
    (pool_indptr, pool_indices: row i = the nodes of node i's pool)."""

    def __init__(self, *, size: int, width: int, alpha_init, h_init, pool_indptr, pool_indices,
                 unit_model: str = "rsgn_fixed", name: str | None = None, **fields) -> None:  # fmt: skip
        super().__init__(
            size=size,
            width=width,
            pool_indptr=np.asarray(pool_indptr, np.int64),
            pool_indices=np.asarray(pool_indices, np.int64),
            unit_model=unit_model,
            name=name,
            **fields,
        )
        flat = (size * width,)
        self.a_in = InPort(shape=flat)
        self.flag_in = InPort(shape=(size,))
        self.s_out = OutPort(shape=flat)
        self.flag_out = OutPort(shape=(size,))
        self.alpha_out = OutPort(shape=(size,))
        self.alpha = Var(shape=(size,), init=np.asarray(alpha_init, np.int64))
        self.h = Var(shape=(size, width), init=np.asarray(h_init, np.int64))


def process_kwargs(params: RSGNFixedParams, size: int) -> dict:
    """RSGNFixedNodes keyword arguments for an engine population's parameters (any variant)."""
    state = params.init_state(size)
    pool = sp.csr_matrix(params.pool)
    return {
        "size": size,
        "width": params.width,
        "unit_model": model_of(params).name,
        "alpha_init": state["alpha"],
        "h_init": state["h"],
        "pool_indptr": pool.indptr,
        "pool_indices": pool.indices,
        **params.integer_fields(),
        "thresholds": params.kernel_arrays["thresholds"],
    }


@implements(proc=RSGNFixedNodes, protocol=LoihiProtocol)
@requires(CPU)
@tag("bit_accurate_loihi", "fixed_pt")
class PyRSGNFixedNodesModel(PyLoihiProcessModel):
    """Bit-accurate integer RSGN nodes: ignition on the first step, then the engine's integer
    update (units_rsgn_fixed.step_nodes) every step."""

    a_in: PyInPort = LavaPyType(PyInPort.VEC_DENSE, np.int32, precision=32)
    flag_in: PyInPort = LavaPyType(PyInPort.VEC_DENSE, np.int32, precision=32)
    s_out: PyOutPort = LavaPyType(PyOutPort.VEC_DENSE, np.int32, precision=24)
    flag_out: PyOutPort = LavaPyType(PyOutPort.VEC_DENSE, np.int32, precision=1)
    alpha_out: PyOutPort = LavaPyType(PyOutPort.VEC_DENSE, np.int32, precision=13)
    alpha: np.ndarray = LavaPyType(np.ndarray, np.int64, precision=13)
    h: np.ndarray = LavaPyType(np.ndarray, np.int64, precision=24)

    def __init__(self, proc_params) -> None:
        super().__init__(proc_params)
        self.arrays = None

    def _kernel_arrays(self) -> dict:
        pp = self.proc_params
        n = int(pp["size"])
        pool = sp.csr_matrix((np.ones(pp["pool_indices"].size), pp["pool_indices"],
                              pp["pool_indptr"]), (n, n))  # fmt: skip
        cls = model_named(pp["unit_model"]).params_type
        names = [f.name for f in dataclasses.fields(cls) if f.name not in _NOT_FIELDS]
        params = cls(pool=pool, alpha_init=0, h_init=0, **{f: pp[f] for f in names})
        return params.kernel_arrays

    def run_spk(self) -> None:
        m = self.a_in.recv().astype(np.int64)
        received = self.flag_in.recv() > 0
        cutoff = int(self.proc_params["cutoff"])
        if self.arrays is None:  # first step: ignition only
            self.arrays = self._kernel_arrays()
        else:
            alpha, h = self.alpha.astype(np.int64), self.h.astype(np.int64)
            step_nodes(alpha, h, m.reshape(h.shape), received, self.arrays,
                       bool(self.proc_params["event_rule"]))  # fmt: skip
            self.alpha[:] = alpha
            self.h[:] = h
        self.s_out.send(emitted_payloads(self.alpha, self.h, cutoff).ravel())
        self.flag_out.send((self.alpha > cutoff).astype(np.int32))
        self.alpha_out.send(self.alpha.astype(np.int32))
