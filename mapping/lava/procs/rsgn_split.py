"""The split RSGN's neuron programs as Lava Processes (mapping/lava/rsgn_split.py): one Process
per core and kind, each running that kind's Program (the same class the NumPy reference runs)
over its compartments; fixed_pt (bit-accurate) and floating_pt models.

Ports: a_<channel> in, s_<port> out, every one the Program may use declared; a run connects and
reads only those its channels name (proc_params "inputs"), so an 8-bit W_h core has no a_wh_lo.
"""

from __future__ import annotations

import numpy as np
from atomspark.mapping.lava.rsgn_split import PROGRAMS, SplitModel, in_ports
from lava.magma.core.decorator import implements, requires, tag
from lava.magma.core.model.py.model import PyLoihiProcessModel
from lava.magma.core.model.py.ports import PyInPort, PyOutPort
from lava.magma.core.model.py.type import LavaPyType
from lava.magma.core.process.ports.ports import InPort, OutPort
from lava.magma.core.process.process import AbstractProcess
from lava.magma.core.resources import CPU
from lava.magma.core.sync.protocols.loihi_protocol import LoihiProtocol

PORTS = {  # kind -> (in ports, out ports): every port any arithmetic uses
    "sum": (("payload",), ("m",)),
    "transform": (("wh", "wh_lo", "act", "mu", "inv", "alpha", "alpha0", "h0"),
                  ("x", "h", "r", "hn2", "hn2_lo", "z", "z2", "z2_lo")),
    "norm": (("flag", "hn2", "hn2_lo", "z", "z2", "z2_lo", "pool", "pool_lo", "alpha0"),
             ("flag", "pool", "pool_lo", "act", "mu", "inv", "alpha", "alpha_rec")),
}  # fmt: skip


class _SplitProcess(AbstractProcess):
    kind = ""

    def __init__(self, *, model: SplitModel, index: np.ndarray, inputs: tuple[str, ...],
                 name: str | None = None) -> None:  # fmt: skip
        index = np.asarray(index, np.int64)
        super().__init__(model=model, index=index, inputs=tuple(inputs), kind=self.kind,
                         name=name)  # fmt: skip
        ins, outs = PORTS[self.kind]
        for port in ins:
            setattr(self, f"a_{port}", InPort(shape=(index.size,)))
        for port in outs:
            setattr(self, f"s_{port}", OutPort(shape=(index.size,)))


class RSGNMessageSum(_SplitProcess):
    """Message-sum core: feature k of many nodes (m = wrap32(sum) >>> m_shift)."""

    kind = "sum"


class RSGNTransform(_SplitProcess):
    """Node core, transform compartments: W_h sums, the norm's terms, LayerNorm, payloads."""

    kind = "transform"


class RSGNNorm(_SplitProcess):
    """Node core, norm compartments: norm, soft threshold, pool exchange, divisive normalisation."""

    kind = "norm"


PROCESSES = {"sum": RSGNMessageSum, "transform": RSGNTransform, "norm": RSGNNorm}


class _AbstractSplitModel(PyLoihiProcessModel):
    """Runs the kind's Program one chip step per run_spk."""

    def __init__(self, proc_params) -> None:
        super().__init__(proc_params)
        pp = self.proc_params
        self.program = PROGRAMS[pp["kind"]](pp["model"], pp["index"])
        self.ins = pp["inputs"]
        self.model = pp["model"]

    def run_spk(self) -> None:
        inputs = {port: getattr(self, f"a_{port}").recv() for port in self.ins}
        for port in in_ports(self.program.kind, self.model):  # unconnected: nothing arrives
            inputs.setdefault(port, np.zeros(self.program.index.size, self.program.dtype))
        out = self.program.step(inputs)
        if "alpha_rec" in PORTS[self.program.kind][1]:
            out["alpha_rec"] = self.program.alpha
        for port in PORTS[self.program.kind][1]:
            getattr(self, f"s_{port}").send(np.asarray(out.get(port, 0 * self.program.index)))


def _models(proc, int_type, float_type):
    ins, outs = PORTS[proc.kind]

    def attrs(kind_type, precision):
        extra = {} if precision is None else {"precision": precision}
        a = {"__module__": __name__}
        a.update({f"a_{p}": LavaPyType(PyInPort.VEC_DENSE, kind_type, **extra) for p in ins})
        a.update({f"s_{p}": LavaPyType(PyOutPort.VEC_DENSE, kind_type, **extra) for p in outs})
        return a

    fixed = type(f"Py{proc.__name__}Fixed", (_AbstractSplitModel,), attrs(int_type, 32))
    fixed = implements(proc=proc, protocol=LoihiProtocol)(fixed)
    fixed = requires(CPU)(tag("bit_accurate_loihi", "fixed_pt")(fixed))
    flt = type(f"Py{proc.__name__}Float", (_AbstractSplitModel,), attrs(float_type, None))
    flt = implements(proc=proc, protocol=LoihiProtocol)(flt)
    flt = requires(CPU)(tag("floating_pt")(flt))
    return fixed, flt


# Lava finds ProcessModels among the module's globals
PyRSGNMessageSumFixed, PyRSGNMessageSumFloat = _models(RSGNMessageSum, np.int32, float)
PyRSGNTransformFixed, PyRSGNTransformFloat = _models(RSGNTransform, np.int32, float)
PyRSGNNormFixed, PyRSGNNormFloat = _models(RSGNNorm, np.int32, float)
