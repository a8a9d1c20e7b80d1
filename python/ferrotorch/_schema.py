"""``torch.parse_schema``: operator schemas (``"aten::add.Tensor(Tensor self,
Tensor other, *, Scalar alpha=1) -> Tensor"``) parsed into ``FunctionSchema``
objects with PyTorch's attributes, and ``Tag``, the operator tags of
``native_functions.yaml``.

The parser reads the grammar of PyTorch's schema strings: a qualified name
with an optional overload, arguments (types with ``?``, ``[]``/``[N]``,
tuples, ``Dict(K, V)``, ``Future(T)``, alias annotations ``(a)``, ``(a!)``,
``(a -> *)``, ``(a|b)``; defaults that are numbers, strings, lists, ``None``,
booleans or the enum names ``strided``/``contiguous_format``/dtypes),
keyword-only arguments after ``*``, varargs ``...`` and the returns, named or
not. Argument types are the TorchScript type objects of ``_jit_types``; as in
PyTorch, ``SymInt``/``ScalarType``/``Layout``/``MemoryFormat`` have ``type``
``int`` and keep their schema name in ``real_type``.
"""

import enum
import re

from ._jit_types import (
    _GeneratorType, AnyType, BoolType, ComplexType, DeviceObjType, DictType, FloatType, FutureType, IntType, ListType, NoneType,
    NumberType, OptionalType, StreamObjType, StringType, SymBoolType, SymIntType, TensorType, TupleType, Type,
)

__all__ = ["parse_schema", "FunctionSchema", "Argument", "Tag"]

_TOKEN = re.compile(r"""
    (?P<space>\s+)
  | (?P<str>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')
  | (?P<num>-?(?:\d+\.\d*(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?|\d+[eE][-+]?\d+|\d+)j?)
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<punct>->|\.\.\.|::|[()\[\],?!*=|.-])
""", re.VERBOSE)

# The enum-valued defaults PyTorch's schemas write by name, as the ints it stores.
_ENUM_DEFAULTS = {
    "strided": 0, "sparse_coo": 1, "sparse_csr": 2, "sparse_csc": 3, "sparse_bsr": 4, "sparse_bsc": 5,
    "contiguous_format": 0, "preserve_format": 1, "channels_last": 2, "channels_last_3d": 3,
    "uint8": 0, "int8": 1, "int16": 2, "int32": 3, "int": 3, "int64": 4, "long": 4, "float16": 5, "half": 5,
    "float32": 6, "float": 6, "float64": 7, "double": 7, "complex32": 8, "complex64": 9, "complex128": 10,
    "bool": 11, "bfloat16": 15, "Mean": 1, "Sum": 2, "None_": 0,
}

# Schema names whose Python-visible ``type`` is ``int`` (kept in ``real_type``).
_INT_LIKE = ("ScalarType", "Layout", "MemoryFormat")
_NAMED = {"Generator": "GeneratorType", "Storage": "StorageType", "ScalarType": "ScalarTypeType",
          "Layout": "LayoutType", "MemoryFormat": "MemoryFormatType", "QScheme": "QSchemeType"}
_LEAVES = {
    "Tensor": TensorType, "int": IntType, "float": FloatType, "bool": BoolType, "str": StringType,
    "complex": ComplexType, "Scalar": NumberType, "Device": DeviceObjType, "Stream": StreamObjType,
    "Any": AnyType, "NoneType": NoneType,
}


class _AliasInfo:
    """An argument's or return's alias annotation: the alias sets before and after the
    call and whether the op writes through it (``(a!)``)."""

    def __init__(self, before, after, is_write):
        self.before_set = set(before)
        self.after_set = set(after)
        self.is_write = is_write

    def __repr__(self):
        return f"_AliasInfo(before_set={self.before_set}, after_set={self.after_set}, is_write={self.is_write})"

    def _text(self):
        names = "|".join(sorted(self.before_set, reverse=True)) if self.before_set else "*"
        text = names + ("!" if self.is_write else "")
        if self.after_set != self.before_set:
            text += " -> " + ("|".join(sorted(self.after_set)) or "*")
        return f"({text})"


class Argument:
    """One argument (or return) of a :class:`FunctionSchema`."""

    def __init__(self, name, type, real_type, N, default_value, has_default, kwarg_only, alias_info, type_text):
        self.name = name
        self.type = type
        self.real_type = real_type
        self.N = N
        self.default_value = default_value
        self._has_default = has_default
        self.kwarg_only = kwarg_only
        self.alias_info = alias_info
        self._type_text = type_text

    def has_default_value(self):
        """Whether the schema gives the argument a default."""
        return self._has_default

    @property
    def is_write(self):
        """Whether the op writes to the argument (an ``(a!)`` annotation)."""
        return self.alias_info is not None and self.alias_info.is_write

    @property
    def is_out(self):
        """Whether the argument is an ``out=`` tensor: keyword-only and written to."""
        return self.kwarg_only and self.is_write

    def _text(self, with_name=True):
        text = self._type_text
        if with_name and self.name:
            text += " " + self.name
        if self._has_default:
            text += "=" + _fmt_default(self.default_value, self)
        return text

    def __str__(self):
        return self._text()

    def __eq__(self, other):
        return isinstance(other, Argument) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def _key(self):
        return (self.name, str(self.real_type), self.N, repr(self.default_value), self._has_default,
                self.kwarg_only, None if self.alias_info is None else self.alias_info._text())


def _fmt_float(v):
    s = "%.17g" % v
    return s if any(c in s for c in ".eEna") else s + "."


def _fmt_default(v, arg):
    if v is None:
        return "None"
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, float):
        return _fmt_float(v)
    if isinstance(v, complex):
        return f"{_fmt_float(v.real)}{'+' if v.imag >= 0 else ''}{_fmt_float(v.imag)}j"
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"').replace("'", "\\'") + '"'
    if isinstance(v, list):
        elem = arg.real_type.getElementType() if isinstance(arg.real_type, OptionalType) else arg.real_type
        if arg.N and len(v) > 1 and all(x == v[0] for x in v) and isinstance(elem, ListType) \
                and isinstance(elem.getElementType(), IntType):
            # PyTorch prints an ``int[N]`` (not ``SymInt[N]``) list of one repeated value as that value.
            return _fmt_default(v[0], arg)
        return "[" + ", ".join(_fmt_default(x, arg) for x in v) + "]"
    return str(v)


class FunctionSchema:
    """A parsed operator schema: ``name`` (with its namespace), ``overload_name``,
    ``arguments`` and ``returns`` (lists of :class:`Argument`)."""

    def __init__(self, name, overload_name, arguments, returns, is_vararg, is_varret):
        self.name = name
        self.overload_name = overload_name
        self.arguments = arguments
        self.returns = returns
        self._is_vararg = is_vararg
        self._is_varret = is_varret

    @property
    def is_mutable(self):
        """Whether the op writes to any argument."""
        return any(a.is_write for a in self.arguments)

    def __str__(self):
        name = self.name + (f".{self.overload_name}" if self.overload_name else "")
        parts, star = [], False
        for a in self.arguments:
            if a.kwarg_only and not star:
                parts.append("*")
                star = True
            parts.append(str(a))
        if self._is_vararg:
            parts.append("...")
        if self._is_varret:
            rets = "..."
        elif len(self.returns) == 1 and not self.returns[0].name and not isinstance(self.returns[0].type, TupleType):
            rets = self.returns[0]._text()
        else:
            rets = "(" + ", ".join(r._text() for r in self.returns) + ")"
        return f"{name}({', '.join(parts)}) -> {rets}"

    def __repr__(self):
        return str(self)

    def __eq__(self, other):
        return isinstance(other, FunctionSchema) and str(self) == str(other)

    def __hash__(self):
        return hash(str(self))


class _Parser:
    def __init__(self, text):
        self.text = text
        self.toks = []
        pos = 0
        while pos < len(text):
            m = _TOKEN.match(text, pos)
            if m is None:
                self._fail_at(pos, "a valid token", text[pos])
            if m.lastgroup != "space":
                self.toks.append((m.lastgroup, m.group(), pos))
            pos = m.end()
        self.i = 0

    def _fail_at(self, pos, what, found):
        caret = " " * pos + "~" * max(1, len(found) if found != "eof" else 1) + " <--- HERE"
        raise RuntimeError(f"expected {what} but found '{found}' here:\n{self.text}\n{caret}")

    def peek(self, k=0):
        j = self.i + k
        return self.toks[j] if j < len(self.toks) else ("eof", "eof", len(self.text))

    def fail(self, what):
        kind, val, pos = self.peek()
        self._fail_at(pos, what, val if kind in ("punct", "eof") else kind)

    def take(self, val=None, kind=None, what=None):
        k, v, _ = self.peek()
        if (val is not None and v != val) or (kind is not None and k != kind):
            self.fail(what or val or kind)
        self.i += 1
        return v

    def accept(self, val):
        if self.peek()[1] == val and self.peek()[0] in ("punct", "ident"):
            self.i += 1
            return True
        return False

    # --- schema ----------------------------------------------------------------------

    def schema(self):
        name = self.take(kind="ident", what="ident")
        if self.accept("::"):
            name += "::" + self.take(kind="ident", what="ident")
        overload = ""
        if self.accept("."):
            overload = self.take(kind="ident", what="ident")
        self.take("(")
        args, vararg, kwonly = [], False, False
        while self.peek()[1] != ")":
            if args or kwonly or vararg:
                if not (args or kwonly) and vararg:
                    self.fail(")")
            if self.accept("*"):
                kwonly = True
            elif self.accept("..."):
                vararg = True
            else:
                if vararg:
                    self.fail(")")
                args.append(self.argument(kwonly, is_return=False))
            if not self.accept(","):
                break
        self.take(")")
        seen_default = None
        for a in args:
            if a.has_default_value():
                seen_default = a
            elif seen_default is not None and not a.kwarg_only:
                raise RuntimeError("Non-default positional argument follows default argument. "
                                   f"Parameter {a.name} in {self.text}")
        self.take("->", what="arrow")
        returns, varret = self.returns()
        if self.peek()[0] != "eof":
            self.fail("eof")
        return FunctionSchema(name, overload, args, returns, vararg, varret)

    def returns(self):
        if self.accept("..."):
            return [], True
        if self.peek()[1] == "(" and not self._starts_tuple_type():
            self.take("(")
            rets = []
            while self.peek()[1] != ")":
                rets.append(self.argument(False, is_return=True))
                if not self.accept(","):
                    break
            self.take(")")
            return rets, False
        return [self.argument(False, is_return=True)], False

    def _starts_tuple_type(self):
        # ``-> (int, float)`` lists two returns; ``-> (int, float) name`` would be one tuple.
        depth, j = 0, self.i
        while j < len(self.toks):
            v = self.toks[j][1]
            depth += v == "("
            depth -= v == ")"
            j += 1
            if depth == 0:
                break
        return j < len(self.toks) and self.toks[j][0] == "ident"

    def argument(self, kwonly, is_return):
        start = self.peek()[2]
        fake, real, alias, n = self.type_expr()
        end = self.toks[self.i - 1][2] + len(self.toks[self.i - 1][1])
        type_text = re.sub(r"\s+", " ", self.text[start:end]).replace("( ", "(").replace(" )", ")")
        type_text = re.sub(r",(?=\S)", ", ", type_text)
        name = ""
        if self.peek()[0] == "ident":
            name = self.take()
        elif not is_return:
            self.fail("ident")
        has_default, default = False, None
        if not is_return and self.accept("="):
            has_default, default = True, self.default(real, n)
        return Argument(name, fake, real, n, default, has_default, kwonly, alias, type_text)

    def type_expr(self):
        """``(type, real_type, alias_info, N)`` of one (possibly suffixed) type."""
        kind, val, pos = self.peek()
        if val == "(":
            self.take("(")
            items = []
            while self.peek()[1] != ")":
                f, r, _, _ = self.type_expr()
                items.append((f, r))
                if not self.accept(","):
                    break
            self.take(")")
            fake, real = TupleType([f for f, _ in items]), TupleType([r for _, r in items])
        elif kind == "ident":
            self.i += 1
            fake, real = self.base_type(val, pos)
        else:
            self.fail("ident")
        alias = None
        if self.peek()[1] == "(":
            alias = self.alias()
        n = None
        while True:
            if self.peek()[1] == "[" and alias is not None:
                # The annotation was the element's: the list itself carries an empty one, as in PyTorch.
                alias = _AliasInfo((), (), False)
            if self.accept("?"):
                fake, real = OptionalType(fake), OptionalType(real)
            elif self.peek()[1] == "[":
                self.take("[")
                if self.peek()[0] == "num":
                    n = int(self.take())
                self.take("]")
                fake, real = ListType(fake), ListType(real)
            else:
                break
        return fake, real, alias, n

    def base_type(self, name, pos):
        if name in ("Dict", "Future"):
            self.take("(")
            k, kr, _, _ = self.type_expr()
            if name == "Dict":
                self.take(",")
                v, vr, _, _ = self.type_expr()
                self.take(")")
                return DictType(k, v), DictType(kr, vr)
            self.take(")")
            return FutureType(k), FutureType(kr)
        if name in _LEAVES:
            t = _LEAVES[name].get()
            return t, t
        if name == "SymInt":
            return IntType.get(), SymIntType.get()
        if name == "SymBool":
            return SymBoolType.get(), SymBoolType.get()
        if name == "Generator":
            t = _GeneratorType()
            return t, t
        if name in _INT_LIKE:
            return IntType.get(), Type(name, _NAMED[name])
        if name in _NAMED:
            t = Type(name, _NAMED[name])
            return t, t
        if name == "__torch__" or name == "Dimname" or self.peek()[1] == ".":
            raise RuntimeError("\nunknown type specifier. Common valid schema types include Tensor, SymInt, int, "
                               "float, bool, Scalar; for a full list, please see "
                               "https://github.com/pytorch/pytorch/blob/main/aten/src/ATen/native/README.md#func :\n"
                               f"{self.text}\n{' ' * pos}{'~' * len(name)} <--- HERE")
        # Any other name is a type variable (``t``), as in PyTorch's schemas.
        t = Type(name, "VarType")
        return t, t

    def alias(self):
        self.take("(")
        before = [self.take(kind="ident", what="ident")] if self.peek()[1] != "*" else [self.take("*")]
        while self.accept("|"):
            before.append(self.take(kind="ident", what="ident"))
        write = self.accept("!")
        after = list(before)
        if self.accept("->"):
            after = [] if self.accept("*") else [self.take(kind="ident", what="ident")]
            while self.accept("|"):
                after.append(self.take(kind="ident", what="ident"))
        self.take(")")
        before = [b for b in before if b != "*"]
        return _AliasInfo(before, after, write)

    def default(self, real, n):
        v = self.value()
        base = real.getElementType() if isinstance(real, OptionalType) else real
        if isinstance(base, ListType) and not isinstance(v, list) and v is not None:
            # ``int[2] stride=1``: a fixed-size list's default may be one value, repeated.
            v = [v] * (n or 1)
        if isinstance(base, FloatType) and isinstance(v, int) and not isinstance(v, bool):
            v = float(v)
        if isinstance(base, ListType) and isinstance(base.getElementType(), FloatType) and isinstance(v, list):
            v = [float(x) for x in v]
        return v

    def value(self):
        kind, val, pos = self.peek()
        if kind == "num":
            self.i += 1
            if val.endswith("j"):
                return complex(0, float(val[:-1]))
            return float(val) if any(c in val for c in ".eE") else int(val)
        if kind == "str":
            self.i += 1
            return bytes(val[1:-1], "utf-8").decode("unicode_escape")
        if val == "[":
            self.take("[")
            items = []
            while self.peek()[1] != "]":
                items.append(self.value())
                if not self.accept(","):
                    break
            self.take("]")
            return items
        if val == "-" and self.peek(1)[0] == "ident":
            # ``-inf`` is not a schema number.
            self.i += 1
            self.fail("number")
        if kind == "ident":
            self.i += 1
            if val in ("True", "False"):
                return val == "True"
            if val == "None":
                return None
            if val in _ENUM_DEFAULTS:
                return _ENUM_DEFAULTS[val]
            self._fail_at(pos, "number", "ident")
        self.fail("a default value")


def parse_schema(schema):
    r"""parse_schema(schema) -> FunctionSchema

    Parses an operator schema string such as
    ``"aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"``
    into a :class:`FunctionSchema`. A malformed schema raises ``RuntimeError``
    pointing at the offending token.
    """
    if not isinstance(schema, str):
        raise TypeError(f"parse_schema(): incompatible function arguments. The following argument types are "
                        f"supported:\n    1. (schema: str, allow_typevars: bool = True) -> torch._C.FunctionSchema"
                        f"\n\nInvoked with: {schema!r}")
    return _Parser(schema).schema()


class Tag(enum.Enum):
    """The tags ``native_functions.yaml`` attaches to operators (``torch.Tag.pointwise``,
    ``torch.Tag.inplace_view``...), which passes and dispatch rules test for."""

    core = 0
    cudagraph_unsafe = 1
    data_dependent_output = 2
    dynamic_output_shape = 3
    flexible_layout = 4
    generated = 5
    inplace = 6
    inplace_view = 7
    maybe_aliasing_or_mutating = 8
    needs_contiguous_strides = 9
    needs_exact_strides = 10
    needs_fixed_stride_order = 11
    nondeterministic_bitwise = 12
    nondeterministic_seeded = 13
    out = 14
    out_variant = 15
    pointwise = 16
    pt2_compliant_tag = 17
    reduction = 18
    view_copy = 19
