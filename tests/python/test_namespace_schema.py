"""``parse_schema`` / ``FunctionSchema`` / ``Argument``, the TorchScript type objects
and ``Tag`` against PyTorch: printed schemas, every argument attribute, errors."""

import pytest

torch = pytest.importorskip("torch")

import ferrotorch as ft  # noqa: E402

SCHEMAS = [
    "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
    'aten::max.dim(Tensor(a!) self, int dim, bool keepdim=False, *, Tensor(b!) values, int[2] stride=[1, 1], '
    'float? eps=1e-05, str reduce="mean", ScalarType? dtype=None, int[]? sizes=None) -> '
    '(Tensor(a!) values, Tensor indices)',
    "f() -> ()",
    "f(Tensor self) -> Tensor[]",
    "aten::f.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
    "f(*, int x) -> int",
    "f(int x, ...) -> ...",
    "f(int x) -> ((int, float), str)",
    'f(ScalarType a, t b, Storage c, Layout d, MemoryFormat e, Generator g, float x=1.0, float y=0.5, float z=2., '
    'float w=1e10, float v=-1.5, int[] e2=[], Scalar s=1.5, Scalar s2=-2, str q="a\'b") -> Tensor',
    "f(SymInt[] g, Tensor?[] h, bool[3] j, Any k, Dict(str, Tensor) l, Future(int) m, Stream p, Device d, "
    "SymBool sb, (int, float) tup, Tensor(a -> *)[] z, Tensor[1]? k2=None, int[1] one=2, Layout lay=strided, "
    "ScalarType dt=long, MemoryFormat mf=contiguous_format, float[] fl=[0.5, 1], bool b=True) -> int",
    "aten::conv2d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[2] stride=1, SymInt[2] padding=0, "
    "SymInt[2] dilation=1, SymInt groups=1) -> Tensor",
]


def _arg(a):
    alias = None if a.alias_info is None else (a.alias_info.before_set, a.alias_info.after_set, a.alias_info.is_write)
    return (a.name, str(a.type), type(a.type).__name__, a.type.kind(), str(a.real_type), a.real_type.kind(), a.N,
            repr(a.default_value), a.kwarg_only, a.is_out, a.is_write, a.has_default_value(), alias)


@pytest.mark.parametrize("text", SCHEMAS)
def test_parse_schema_matches_torch(text):
    a, b = ft.parse_schema(text), torch.parse_schema(text)
    assert isinstance(a, ft.FunctionSchema) and all(isinstance(x, ft.Argument) for x in a.arguments)
    assert str(a) == str(b)
    assert (a.name, a.overload_name, a.is_mutable) == (b.name, b.overload_name, b.is_mutable)
    assert [_arg(x) for x in a.arguments] == [_arg(x) for x in b.arguments]
    assert [(r.name, str(r.type)) for r in a.returns] == [(r.name, str(r.type)) for r in b.returns]
    assert a == ft.parse_schema(str(a))


BAD = ["foo(int x", "foo(int x) -> ", "foo(int x)", "f(Dimname q) -> int", "f(float s=-inf) -> int",
       "f(int x=1, int y) -> int", "f(__torch__.Foo x) -> int"]


@pytest.mark.parametrize("text", BAD)
def test_malformed_schemas_raise_runtime_error(text):
    with pytest.raises(RuntimeError) as b:
        torch.parse_schema(text)
    with pytest.raises(RuntimeError) as a:
        ft.parse_schema(text)
    first = (lambda e: str(e.value).strip().splitlines()[0])
    if text.startswith("f(__torch__"):
        return  # PyTorch's message names its class-namespace lookup; both reject the type
    if "int y" in text:
        want = "Non-default positional argument follows default argument. Parameter y"
        assert want in first(a) and want in first(b)
    else:
        assert first(a) == first(b)


def test_jit_types():
    for lib in (ft, torch):
        i, f, n = lib.IntType.get(), lib.FloatType.get(), lib.NumberType.get()
        assert str(lib.ListType(i)) == "List[int]" and lib.ListType(i).getElementType() == i
        assert str(lib.OptionalType(lib.TensorType.get())) == "Optional[Tensor]"
        assert str(lib.TupleType([i, f])) == "Tuple[int, float]"
        assert str(lib.DictType(lib.StringType.get(), lib.TensorType.get())) == "Dict[str, Tensor]"
        assert i.isSubtypeOf(n) and f.isSubtypeOf(n) and not n.isSubtypeOf(i)
        assert i.isSubtypeOf(lib.OptionalType(i)) and lib.NoneType.get().isSubtypeOf(lib.OptionalType(i))
        assert not lib.ListType(i).isSubtypeOf(lib.ListType(n))
        assert lib.TupleType([i]).isSubtypeOf(lib.TupleType([n])) and i.isSubtypeOf(lib.AnyType.get())
        assert i == lib.IntType.get() and lib.ListType(i) == lib.ListType.ofInts()
        assert i.kind() == "IntType" and lib.ListType(i).kind() == "ListType"
        assert str(lib.OptionalType.ofTensor()) == "Optional[Tensor]"
        assert [str(t) for t in lib.ListType(i).containedTypes()] == ["int"]
        assert (str(lib.BoolType.get()), str(lib.ComplexType.get()), str(lib.DeviceObjType.get()),
                str(lib.AnyType.get())) == ("bool", "complex", "Device", "Any")


def test_tag_enum():
    assert [(t.name, t.value) for t in ft.Tag] == [(n, v.value) for n, v in torch.Tag.__members__.items()]
    assert ft.Tag.pointwise.name == "pointwise" and ft.Tag(16) is ft.Tag.pointwise


UNIFY = {
    "same": lambda L: [L.IntType.get(), L.IntType.get()],
    "int_float": lambda L: [L.IntType.get(), L.FloatType.get()],
    "int_number": lambda L: [L.IntType.get(), L.NumberType.get()],
    "int_none": lambda L: [L.IntType.get(), L.NoneType.get()],
    "int_str": lambda L: [L.IntType.get(), L.StringType.get()],
    "empty": lambda L: [],
    "lists": lambda L: [L.ListType(L.IntType.get()), L.ListType(L.FloatType.get())],
    "optional_int": lambda L: [L.OptionalType(L.IntType.get()), L.IntType.get()],
    "tuples": lambda L: [L.TupleType([L.IntType.get()]), L.TupleType([L.NoneType.get()])],
    "three": lambda L: [L.NoneType.get(), L.TensorType.get(), L.TensorType.get()],
}


@pytest.mark.parametrize("name", sorted(UNIFY))
def test_unify_type_list(name):
    def run(lib):
        try:
            return str(lib.unify_type_list(UNIFY[name](lib)))
        except RuntimeError as e:
            return "RuntimeError", str(e)

    assert run(ft) == run(torch)


def test_union_type():
    for lib in (ft, torch):
        i, s = lib.IntType.get(), lib.StringType.get()
        u = lib.UnionType([i, s])
        assert str(u) == "Union[int, str]" and [str(t) for t in u.containedTypes()] == ["int", "str"]
        assert i.isSubtypeOf(u) and u.isSubtypeOf(lib.AnyType.get()) and not u.isSubtypeOf(i)
        assert str(lib.UnionType([i, lib.NoneType.get()])) == "Optional[int]"
