"""The worked example's Lava side (docs/architecture.md, step 4): the relay unit as a Lava Process
with a float ProcessModel, and its LavaUnit. With model.py beside it this is the whole model:
the engine, the bundle's reference run, export and verify all find it through the registry.
Imported only where lava-nc is installed (.venv-lava).
"""

from __future__ import annotations

import numpy as np
from atomspark.mapping.lava.net import LavaPopulation
from atomspark.mapping.lava.units import LavaUnit, register_lava_unit
from atomspark.mapping.lava.units.registry import count_errors, nonzero_outputs, one_record
from lava.magma.core.decorator import implements, requires, tag
from lava.magma.core.model.py.model import PyLoihiProcessModel
from lava.magma.core.model.py.ports import PyInPort, PyOutPort
from lava.magma.core.model.py.type import LavaPyType
from lava.magma.core.process.ports.ports import InPort, OutPort
from lava.magma.core.process.process import AbstractProcess
from lava.magma.core.process.variable import Var
from lava.magma.core.resources import CPU
from lava.magma.core.sync.protocols.loihi_protocol import LoihiProtocol

from relay_example.model import RelayParams, relay_reference_step


class Relay(AbstractProcess):
    """`size` relay units: each sends on gain x what it received this step."""

    def __init__(self, *, size: int, gain: float, name: str | None = None) -> None:
        super().__init__(size=size, gain=gain, name=name)
        self.a_in = InPort(shape=(size,))
        self.s_out = OutPort(shape=(size,))
        self.last = Var(shape=(size,), init=0.0)


@implements(proc=Relay, protocol=LoihiProtocol)
@requires(CPU)
@tag("floating_pt")
class PyRelayModel(PyLoihiProcessModel):
    """The relay's reference step, run by Lava's CPU backend."""

    a_in: PyInPort = LavaPyType(PyInPort.VEC_DENSE, float)
    s_out: PyOutPort = LavaPyType(PyOutPort.VEC_DENSE, float)
    last: np.ndarray = LavaPyType(np.ndarray, float)

    def run_spk(self) -> None:
        x = relay_reference_step(self.a_in.recv(), self.proc_params["gain"])
        self.last[:] = x
        self.s_out.send(x)


def _step(p: LavaPopulation, state: dict, a_in: np.ndarray, received) -> np.ndarray:
    state["last"] = relay_reference_step(a_in, p.scalars["gain"])
    return state["last"]


RELAY_LAVA = register_lava_unit(
    LavaUnit(
        "relay_example",
        "relay",
        "float",
        process="Relay",
        select_tags=("floating_pt",),
        describe=lambda name, size, par: LavaPopulation(
            name, "relay", "float", size, {"gain": float(par.gain)}, {}
        ),
        to_params=lambda p, n_inputs: RelayParams(p.scalars["gain"]),
        init_state=lambda p: {"last": np.zeros(p.size)},
        step=_step,
        make_process=lambda p: Relay(size=p.size, gain=p.scalars["gain"], name=p.name),
        records=one_record,
        sent=nonzero_outputs,
        engine_trace=(),
        engine_errors=count_errors,
    )
)
