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
    "OptionalType", "TupleType", "DictType", "FutureType", "UnionType", "unify_type_list",
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
        if isinstance(other, UnionType):
            return any(self.isSubtypeOf(t) for t in other.containedTypes())
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


class UnionType(Type):
    """``Union[A, B, ...]``: a value of any member type (``Optional[T]`` when the members
    are ``T`` and ``NoneType``)."""

    def __init__(self, types):
        members = []
        for t in types:
            for m in (t.containedTypes() if isinstance(t, UnionType) else [t]):
                if m not in members:
                    members.append(m)
        self._members = members

    def containedTypes(self):
        return list(self._members)

    def str(self):
        if len(self._members) == 2 and NoneType.get() in self._members:
            other = next(t for t in self._members if t != NoneType.get())
            return f"Optional[{other.str()}]"
        return "Union[" + ", ".join(t.str() for t in self._members) + "]"

    def isSubtypeOf(self, other):
        if self == other or isinstance(other, AnyType):
            return True
        return all(t.isSubtypeOf(other) for t in self._members)


def _unify(a, b):
    """The least type both ``a`` and ``b`` are subtypes of, as TorchScript unifies
    (no implicit ``int``/``float`` join; ``None`` makes an ``Optional``), or None."""
    if a.isSubtypeOf(b):
        return b
    if b.isSubtypeOf(a):
        return a
    for x, y in ((a, b), (b, a)):
        if isinstance(x, NoneType):
            return OptionalType(y)
        if isinstance(x, OptionalType):
            inner = _unify(x.getElementType(), y)
            return None if inner is None else OptionalType(inner)
    if isinstance(a, TupleType) and isinstance(b, TupleType) and len(a.elements()) == len(b.elements()):
        parts = [_unify(x, y) for x, y in zip(a.elements(), b.elements())]
        return None if any(p is None for p in parts) else TupleType(parts)
    if isinstance(a, FutureType) and isinstance(b, FutureType):
        inner = _unify(a.getElementType(), b.getElementType())
        return None if inner is None else FutureType(inner)
    return None


def unify_type_list(types):
    """The single type all of ``types`` unify to (``[int, NoneType]`` gives
    ``Optional[int]``); ``RuntimeError`` when two of them do not unify."""
    types = list(types)
    if not types:
        raise RuntimeError("Cannot get unified type from empty list")
    out = types[0]
    for i, t in enumerate(types[1:], 1):
        u = _unify(out, t)
        if u is None:
            raise RuntimeError(f"Could not unify type list since element {i} of type {t.str()} did not match "
                               f"the types before it ({out.str()})")
        out = u
    return out
