"""``ferrotorch.ops``: Python access to operators (``ferrotorch.ops.aten.add.Tensor``)."""

import types

from . import _dispatch

__all__ = ["ops", "OpOverload", "OpOverloadPacket"]

OpOverload = _dispatch.OpOverload


class OpOverloadPacket:
    """All overloads of one ATen operator: ``ops.aten.add``.

    Attributes name the overloads (``ops.aten.add.Tensor``); calling the packet
    runs its first overload, ``default`` when there is one.
    """

    def __init__(self, opname):
        self._opname = opname
        self._qualified_op_name = f"aten::{opname}"
        names = _dispatch.overloads_of(opname)
        self._overload_names = names
        for name in names:
            op = _dispatch.overload(f"{opname}.{name}")
            op.overloadpacket = self
            object.__setattr__(self, name, op)

    def overloads(self):
        """Names of the overloads ferrotorch mirrors."""
        return list(self._overload_names)

    @property
    def __name__(self):
        return self._opname

    def __getattr__(self, name):
        raise AttributeError(
            f"The underlying op of '{self}' has no overload name '{name}'"
        )

    def __call__(self, *args, **kwargs):
        first = "default" if "default" in self._overload_names else self._overload_names[0]
        return getattr(self, first)(*args, **kwargs)

    def __str__(self):
        return f"aten.{self._opname}"

    def __repr__(self):
        return f"<OpOverloadPacket(op='aten.{self._opname}')>"


class _OpNamespace(types.ModuleType):
    """``ops.aten``: operator packets by name."""

    def __init__(self, name):
        super().__init__(f"ferrotorch.ops.{name}")
        self.name = name

    def __getattr__(self, opname):
        if opname.startswith("__") or not _dispatch.overloads_of(opname):
            raise AttributeError(f"'_OpNamespace' '{self.name}' object has no attribute '{opname}'")
        packet = OpOverloadPacket(opname)
        setattr(self, opname, packet)
        return packet


class _Ops(types.ModuleType):
    """``ferrotorch.ops``: operator namespaces (only ``aten`` exists)."""

    def __init__(self):
        super().__init__("ferrotorch.ops")
        self.aten = _OpNamespace("aten")

    def __getattr__(self, name):
        raise AttributeError(f"'_Ops' object has no attribute '{name}'")


ops = _Ops()
