"""The TorchScript type objects a ``FunctionSchema``'s arguments carry
(``torch.IntType``, ``torch.ListType``, ``torch.OptionalType``, ...).

Each is a value: equal types compare equal, print as TorchScript annotations
(``List[int]``, ``Optional[Tensor]``, ``Dict[str, Tensor]``) and answer
``isSubtypeOf`` with TorchScript's rules for these types (``int`` and
``float`` are ``number``s, ``T`` is an ``Optional[T]``, ``None`` is any
``Optional``, lists are invariant, tuples covariant, everything is ``Any``).
"""

__all__ = [
    "Type", "AnyType", "NumberType", "IntType", "FloatType", "ComplexType", "BoolType", "StringType",
    "TensorType", "NoneType", "DeviceObjType", "StreamObjType", "SymIntType", "SymBoolType", "ListType",
    "OptionalType", "TupleType", "DictType", "FutureType",
]


class Type:
    """A TorchScript type; a bare ``Type`` is one known only by its name and
    kind (a schema's type variable ``t`` is a ``VarType``; ``Storage``,
    ``Generator``, ``ScalarType``... are named kinds)."""

    _name = None
    _kind = None

    def __init__(self, name=None, kind="VarType"):
        if type(self) is Type:
            if name is None:
                raise TypeError("torch._C.Type cannot be instantiated without a name")
            self._name, self._kind = name, kind

    def __str__(self):
        return self.str()

    def __repr__(self):
        return self.str()

    def str(self):
        """The type as TorchScript writes it."""
        return self._name

    @property
    def annotation_str(self):
        """The type as a Python annotation (the same text)."""
        return self.str()

    def kind(self):
        """The type's class name (``'IntType'``, ``'ListType'``...)."""
        return self._kind or type(self).__name__

    def containedTypes(self):
        """The types this one is built from (a list's element type...)."""
        return []

    def _key(self):
        return (type(self).__name__, self.str())

    def __eq__(self, other):
        return isinstance(other, Type) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def isSubtypeOf(self, other):
        """Whether a value of this type may be used where ``other`` is expected."""
        if self == other or isinstance(other, AnyType):
            return True
        if isinstance(other, OptionalType):
            return isinstance(self, NoneType) or self.isSubtypeOf(other.getElementType())
        return False


class _Leaf(Type):
    """A type without parameters: one value per class, from ``get()``."""

    _instances = {}

    @classmethod
    def get(cls):
        """The type (a singleton)."""
        inst = _Leaf._instances.get(cls)
        if inst is None:
            inst = _Leaf._instances[cls] = cls()
        return inst


class AnyType(_Leaf):
    """The type of every value."""
    _name = "Any"


class NumberType(_Leaf):
    """``Scalar`` in schemas: an ``int``, ``float`` or ``complex``."""
    _name = "number"


class _Number(_Leaf):
    def isSubtypeOf(self, other):
        return isinstance(other, NumberType) or super().isSubtypeOf(other)


class IntType(_Number):
    """``int`` (also what ``SymInt``, ``ScalarType``, ``Layout`` and ``MemoryFormat`` hold)."""
    _name = "int"


class FloatType(_Number):
    """``float``."""
    _name = "float"


class ComplexType(_Number):
    """``complex``."""
    _name = "complex"


class BoolType(_Leaf):
    """``bool``."""
    _name = "bool"


class StringType(_Leaf):
    """``str``."""
    _name = "str"


class TensorType(_Leaf):
    """``Tensor``."""
    _name = "Tensor"


class NoneType(_Leaf):
    """``NoneType``, the type of ``None``."""
    _name = "NoneType"


class DeviceObjType(_Leaf):
    """``Device``."""
    _name = "Device"


class StreamObjType(_Leaf):
    """``Stream``."""
    _name = "Stream"


class SymIntType(_Leaf):
    """``SymInt``: an ``int`` a tracer may keep symbolic (printed as ``int``)."""
    _name = "int"

    def isSubtypeOf(self, other):
        return isinstance(other, (IntType, NumberType)) or super().isSubtypeOf(other)


class SymBoolType(_Leaf):
    """``SymBool``: a ``bool`` a tracer may keep symbolic (printed as ``bool``)."""
    _name = "bool"

    def isSubtypeOf(self, other):
        return isinstance(other, BoolType) or super().isSubtypeOf(other)


class _GeneratorType(Type):
    """``Generator``."""

    _name = "Generator"
    _kind = "GeneratorType"

    def __init__(self):
        pass


class _Single(Type):
    """A type with one element type."""

    _template = None

    def __init__(self, elem):
        if not isinstance(elem, Type):
            raise TypeError(f"{type(self).__name__}(): expected a torch type, got {type(elem).__name__}")
        self._elem = elem

    def getElementType(self):
        """The element type."""
        return self._elem

    def containedTypes(self):
        return [self._elem]

    def str(self):
        return self._template.format(self._elem.str())


class ListType(_Single):
    """``List[T]``; lists are invariant in ``T``."""
    _template = "List[{}]"

    @staticmethod
    def ofInts():
        """``List[int]``."""
        return ListType(IntType.get())

    @staticmethod
    def ofFloats():
        """``List[float]``."""
        return ListType(FloatType.get())

    @staticmethod
    def ofBools():
        """``List[bool]``."""
        return ListType(BoolType.get())

    @staticmethod
    def ofTensors():
        """``List[Tensor]``."""
        return ListType(TensorType.get())


class OptionalType(_Single):
    """``Optional[T]``: ``T`` or ``None``."""
    _template = "Optional[{}]"

    @staticmethod
    def ofTensor():
        """``Optional[Tensor]``."""
        return OptionalType(TensorType.get())

    def isSubtypeOf(self, other):
        if isinstance(other, OptionalType):
            return self._elem.isSubtypeOf(other.getElementType())
        return super().isSubtypeOf(other)


class FutureType(_Single):
    """``Future[T]``, covariant in ``T``."""
    _template = "Future[{}]"

    def isSubtypeOf(self, other):
        if isinstance(other, FutureType):
            return self._elem.isSubtypeOf(other.getElementType())
        return super().isSubtypeOf(other)


class TupleType(Type):
    """``Tuple[A, B, ...]``, covariant in each element."""

    def __init__(self, elements):
        self._elems = list(elements)

    def elements(self):
        """The element types."""
        return list(self._elems)

    def containedTypes(self):
        return list(self._elems)

    def str(self):
        return "Tuple[" + ", ".join(e.str() for e in self._elems) + "]"

    def isSubtypeOf(self, other):
        if isinstance(other, TupleType) and len(other._elems) == len(self._elems):
            return all(a.isSubtypeOf(b) for a, b in zip(self._elems, other._elems))
        return super().isSubtypeOf(other)


class DictType(Type):
    """``Dict[K, V]``, invariant in both."""

    def __init__(self, key, value):
        self._key_t, self._value_t = key, value

    def getKeyType(self):
        """The key type."""
        return self._key_t

    def getValueType(self):
        """The value type."""
        return self._value_t

    def containedTypes(self):
        return [self._key_t, self._value_t]

    def str(self):
        return f"Dict[{self._key_t.str()}, {self._value_t.str()}]"
