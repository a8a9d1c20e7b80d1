//! A pickle reader for checkpoints that runs no code: the opcodes and
//! globals PyTorch's `torch.load(weights_only=True)` allows for state dicts,
//! and nothing else.
//!
//! It is its own small virtual machine over [`Value`]s. A `GLOBAL` resolves
//! only names on the allow-list (the same names, with the same messages, as
//! `ferrotorch.serialization`'s Python reader), and `REDUCE`/`NEWOBJ`/`BUILD`
//! apply only to them: `collections.OrderedDict`, the tensor and parameter
//! rebuild functions of `torch._utils`, the legacy storage types
//! (`torch.FloatStorage` ...), `torch.UntypedStorage` and the dtypes. Any
//! other name, opcode, stack or memo misuse, or short read is an [`Error`];
//! nothing panics and no name is ever looked up outside the list.
//!
//! ```
//! use ferrotorch::io::pickle::{load, Value};
//! let mut no_storages = |_: &[Value]| -> ferrotorch::Result<Value> { unreachable!() };
//! // pickle.dumps(OrderedDict(), protocol=2)
//! let data = b"\x80\x02ccollections\nOrderedDict\nq\x00)Rq\x01.";
//! assert!(matches!(load(data, &mut no_storages).unwrap(), Value::Dict(_)));
//! // pickle.dumps(os.system) names a blocked module: refused before anything runs.
//! let evil = b"\x80\x02cposix\nsystem\nq\x00.";
//! assert!(load(evil, &mut no_storages).is_err());
//! ```

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;

use ferrotorch_core::{DType, Error, Layout, Result, Storage};

use crate::Tensor;

/// An allow-listed global.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Global {
    /// `collections.OrderedDict`.
    OrderedDict,
    /// `torch._utils._rebuild_tensor`.
    RebuildTensor,
    /// `torch._utils._rebuild_tensor_v2`.
    RebuildTensorV2,
    /// `torch._utils._rebuild_tensor_v3`.
    RebuildTensorV3,
    /// `torch._utils._rebuild_parameter`.
    RebuildParameter,
    /// `torch._utils._rebuild_parameter_with_state`.
    RebuildParameterWithState,
    /// A legacy typed storage class (`torch.FloatStorage` ...).
    StorageType(DType),
    /// `torch.UntypedStorage` (bytes; the tensor names its dtype).
    UntypedStorage,
    /// A dtype object (`torch.float32` ...).
    Dtype(DType),
}

/// A storage a persistent id named, with the dtype its type gave it
/// (`UInt8` for an untyped storage).
#[derive(Clone)]
pub struct StorageRef {
    /// The bytes.
    pub storage: Arc<Storage>,
    /// The element type of the storage's class.
    pub dtype: DType,
}

/// A string-keyed dict keeps an index so that a large state dict loads in
/// linear time; other keys are kept in order only.
#[derive(Default)]
pub struct Dict {
    /// The items in insertion order.
    pub items: Vec<(Value, Value)>,
    index: HashMap<String, usize>,
}

impl Dict {
    fn set(&mut self, k: Value, v: Value) {
        if let Value::Str(s) = &k {
            if let Some(&i) = self.index.get(s.as_ref()) {
                self.items[i].1 = v;
                return;
            }
            self.index.insert(s.to_string(), self.items.len());
        }
        self.items.push((k, v));
    }
}

/// A value on the pickle machine's stack.
#[derive(Clone)]
pub enum Value {
    /// `None`.
    None,
    /// A bool.
    Bool(bool),
    /// An int that fits 64 bits.
    Int(i64),
    /// A float.
    Float(f64),
    /// A str.
    Str(Rc<str>),
    /// A bytes object.
    Bytes(Rc<[u8]>),
    /// A tuple.
    Tuple(Rc<Vec<Value>>),
    /// A list.
    List(Rc<RefCell<Vec<Value>>>),
    /// A dict or an `OrderedDict`.
    Dict(Rc<RefCell<Dict>>),
    /// An allow-listed global.
    Global(Global),
    /// A storage from a persistent id.
    Storage(StorageRef),
    /// A rebuilt tensor.
    Tensor(Tensor),
}

impl Value {
    /// The Python type name, for messages (values themselves are never printed).
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::None => "NoneType",
            Value::Bool(_) => "bool",
            Value::Int(_) => "int",
            Value::Float(_) => "float",
            Value::Str(_) => "str",
            Value::Bytes(_) => "bytes",
            Value::Tuple(_) => "tuple",
            Value::List(_) => "list",
            Value::Dict(_) => "dict",
            Value::Global(_) => "global",
            Value::Storage(_) => "storage",
            Value::Tensor(_) => "Tensor",
        }
    }

    fn take_children(&mut self, out: &mut Vec<Value>) {
        match self {
            Value::Tuple(rc) => {
                if let Some(v) = Rc::get_mut(rc) {
                    out.append(v);
                }
            }
            Value::List(rc) => {
                if let Some(v) = Rc::get_mut(rc) {
                    out.append(v.get_mut());
                }
            }
            Value::Dict(rc) => {
                if let Some(d) = Rc::get_mut(rc) {
                    for (k, v) in d.get_mut().items.drain(..) {
                        out.push(k);
                        out.push(v);
                    }
                }
            }
            _ => {}
        }
    }
}

// A pickle can nest containers a million deep in a few megabytes; dropping
// them recursively would overflow the stack, so containers are emptied onto
// a heap stack instead.
impl Drop for Value {
    fn drop(&mut self) {
        let mut pending = Vec::new();
        self.take_children(&mut pending);
        while let Some(mut v) = pending.pop() {
            v.take_children(&mut pending);
        }
    }
}

fn err(msg: impl Into<String>) -> Error {
    Error::runtime(format!("Weights only load failed: {}", msg.into()))
}

const BLOCKED_MODULES: [&str; 4] = ["sys", "os", "posix", "nt"];

const STORAGES: [(&str, DType); 10] = [
    ("BoolStorage", DType::Bool),
    ("ByteStorage", DType::UInt8),
    ("CharStorage", DType::Int8),
    ("ShortStorage", DType::Int16),
    ("IntStorage", DType::Int32),
    ("LongStorage", DType::Int64),
    ("HalfStorage", DType::Float16),
    ("BFloat16Storage", DType::BFloat16),
    ("FloatStorage", DType::Float32),
    ("DoubleStorage", DType::Float64),
];

const DTYPES: [(&str, DType); 10] = [
    ("bool", DType::Bool),
    ("uint8", DType::UInt8),
    ("int8", DType::Int8),
    ("int16", DType::Int16),
    ("int32", DType::Int32),
    ("int64", DType::Int64),
    ("float16", DType::Float16),
    ("bfloat16", DType::BFloat16),
    ("float32", DType::Float32),
    ("float64", DType::Float64),
];

/// The allow-listed global `module.name`, or PyTorch's refusal.
pub fn resolve(module: &str, name: &str) -> Result<Global> {
    // Protocol-2 pickles carry Python 2 module names (Python's `fix_imports`).
    let module = match module {
        "__builtin__" | "exceptions" => "builtins",
        "copy_reg" => "copyreg",
        m => m,
    };
    let full = format!("{module}.{name}");
    if BLOCKED_MODULES.contains(&module) {
        return Err(err(format!("Trying to load unsupported GLOBAL {full} whose module {module} is blocked.")));
    }
    let found = match (module, name) {
        ("collections", "OrderedDict") => Some(Global::OrderedDict),
        ("torch._utils", "_rebuild_tensor") => Some(Global::RebuildTensor),
        ("torch._utils", "_rebuild_tensor_v2") => Some(Global::RebuildTensorV2),
        ("torch._utils", "_rebuild_tensor_v3") => Some(Global::RebuildTensorV3),
        ("torch._utils", "_rebuild_parameter") => Some(Global::RebuildParameter),
        ("torch._utils", "_rebuild_parameter_with_state") => Some(Global::RebuildParameterWithState),
        ("torch" | "torch.storage", "UntypedStorage") => Some(Global::UntypedStorage),
        ("torch", n) => STORAGES
            .iter()
            .find(|(s, _)| *s == n)
            .map(|&(_, d)| Global::StorageType(d))
            .or_else(|| DTYPES.iter().find(|(s, _)| *s == n).map(|&(_, d)| Global::Dtype(d))),
        _ => None,
    };
    found.ok_or_else(|| {
        let shown = full.strip_prefix("builtins.").unwrap_or(&full);
        err(format!(
            "Unsupported global: GLOBAL {shown} was not an allowed global by default (the Rust reader allows only what state dicts of plain tensors need)."
        ))
    })
}

/// Reads the pickle `data`; `persistent_load` turns each persistent id (the
/// tuple `('storage', storage_type, key, location, numel)` of `torch.save`)
/// into a [`Value::Storage`].
pub fn load(data: &[u8], persistent_load: &mut dyn FnMut(&[Value]) -> Result<Value>) -> Result<Value> {
    Machine { data, pos: 0, stack: Vec::new(), metastack: Vec::new(), memo: HashMap::new(), persistent_load }.run()
}

struct Machine<'a> {
    data: &'a [u8],
    pos: usize,
    stack: Vec<Value>,
    metastack: Vec<Vec<Value>>,
    memo: HashMap<u32, Value>,
    persistent_load: &'a mut dyn FnMut(&[Value]) -> Result<Value>,
}

impl Machine<'_> {
    fn read(&mut self, n: usize) -> Result<&[u8]> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.data.len()).ok_or_else(|| err("pickle data was truncated"))?;
        let out = &self.data[self.pos..end];
        self.pos = end;
        Ok(out)
    }
    fn read_array<const N: usize>(&mut self) -> Result<[u8; N]> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.read(N)?);
        Ok(a)
    }
    fn read_u8(&mut self) -> Result<u8> {
        Ok(self.read_array::<1>()?[0])
    }
    fn read_u32(&mut self) -> Result<u32> {
        Ok(u32::from_le_bytes(self.read_array()?))
    }
    fn read_len8(&mut self) -> Result<usize> {
        usize::try_from(u64::from_le_bytes(self.read_array()?)).map_err(|_| err("pickle data was truncated"))
    }
    fn readline(&mut self) -> Result<String> {
        let rest = &self.data[self.pos..];
        let i = rest.iter().position(|&b| b == b'\n').ok_or_else(|| err("pickle data was truncated"))?;
        let line = std::str::from_utf8(&rest[..i]).map_err(|_| err("a GLOBAL name is not UTF-8"))?.to_string();
        self.pos += i + 1;
        Ok(line)
    }
    fn pop(&mut self) -> Result<Value> {
        self.stack.pop().ok_or_else(|| err("corrupted pickle data (stack underflow)"))
    }
    fn top(&mut self) -> Result<&mut Value> {
        self.stack.last_mut().ok_or_else(|| err("corrupted pickle data (stack underflow)"))
    }
    fn pop_mark(&mut self) -> Result<Vec<Value>> {
        let below = self.metastack.pop().ok_or_else(|| err("corrupted pickle data (no MARK)"))?;
        Ok(std::mem::replace(&mut self.stack, below))
    }
    fn str_value(&mut self, n: usize) -> Result<Value> {
        let s = std::str::from_utf8(self.read(n)?).map_err(|_| err("a string is not valid UTF-8"))?;
        Ok(Value::Str(s.into()))
    }
    fn bytes_value(&mut self, n: usize) -> Result<Value> {
        Ok(Value::Bytes(self.read(n)?.into()))
    }
    fn dict_top(&mut self, opcode: &str) -> Result<Rc<RefCell<Dict>>> {
        match self.top()? {
            Value::Dict(d) => Ok(d.clone()),
            other => Err(err(format!("Can only {opcode} for dict, collections.OrderedDict, but got {}", other.type_name()))),
        }
    }
    fn list_top(&mut self, opcode: &str) -> Result<Rc<RefCell<Vec<Value>>>> {
        match self.top()? {
            Value::List(l) => Ok(l.clone()),
            other => Err(err(format!("Can only {opcode} to lists, but got {}", other.type_name()))),
        }
    }

    fn run(mut self) -> Result<Value> {
        loop {
            let op = self.read_u8()?;
            match op {
                0x80 => {
                    self.read_u8()?; // PROTO
                }
                0x95 => {
                    self.read(8)?; // FRAME
                }
                b'.' => return self.pop().map_err(|_| err("pickle data ends with an empty stack")),
                b'c' => {
                    let module = self.readline()?;
                    let name = self.readline()?;
                    self.stack.push(Value::Global(resolve(&module, &name)?));
                }
                0x93 => {
                    let (name, module) = (self.pop()?, self.pop()?);
                    match (&module, &name) {
                        (Value::Str(m), Value::Str(n)) => {
                            let g = resolve(m, n)?;
                            self.stack.push(Value::Global(g));
                        }
                        _ => return Err(err("STACK_GLOBAL requires str")),
                    }
                }
                b'R' => {
                    let args = self.pop()?;
                    let func = match self.top()? {
                        Value::Global(g) => *g,
                        other => return Err(err(format!("Trying to call reduce for unrecognized function of type {}", other.type_name()))),
                    };
                    let Value::Tuple(args) = &args else { return Err(err("REDUCE arguments must be a tuple")) };
                    let out = call(func, args)?;
                    *self.top()? = out;
                }
                0x81 => {
                    // NEWOBJ: only OrderedDict is a class on the list.
                    let _args = self.pop()?;
                    match self.pop()? {
                        Value::Global(Global::OrderedDict) => self.stack.push(Value::Dict(Default::default())),
                        other => return Err(err(format!("Can only create new object for allowlisted classes, but got {}", other.type_name()))),
                    }
                }
                b'b' => {
                    // BUILD: an OrderedDict's `__dict__` (a state dict's `_metadata`) is not kept.
                    let _state = self.pop()?;
                    match self.top()? {
                        Value::Dict(_) | Value::Tensor(_) => {}
                        other => return Err(err(format!("Can only build Tensor, Parameter or OrderedDict, but got {}", other.type_name()))),
                    }
                }
                b'a' => {
                    let item = self.pop()?;
                    self.list_top("append")?.borrow_mut().push(item);
                }
                b'e' => {
                    let items = self.pop_mark()?;
                    self.list_top("extend")?.borrow_mut().extend(items);
                }
                b's' => {
                    let (v, k) = (self.pop()?, self.pop()?);
                    self.dict_top("SETITEM")?.borrow_mut().set(k, v);
                }
                b'u' => {
                    let items = self.pop_mark()?;
                    if items.len() % 2 != 0 {
                        return Err(err("odd number of items for SETITEMS"));
                    }
                    let d = self.dict_top("SETITEMS")?;
                    let mut d = d.borrow_mut();
                    let mut it = items.into_iter();
                    while let (Some(k), Some(v)) = (it.next(), it.next()) {
                        d.set(k, v);
                    }
                }
                b'(' => {
                    let below = std::mem::take(&mut self.stack);
                    self.metastack.push(below);
                }
                b'0' => {
                    if self.stack.pop().is_none() {
                        self.pop_mark()?;
                    }
                }
                b'1' => {
                    self.pop_mark()?;
                }
                b'2' => {
                    let v = self.top()?.clone();
                    self.stack.push(v);
                }
                b't' => {
                    let items = self.pop_mark()?;
                    self.stack.push(Value::Tuple(Rc::new(items)));
                }
                0x85..=0x87 => {
                    let n = (op - 0x84) as usize;
                    if self.stack.len() < n {
                        return Err(err("corrupted pickle data (stack underflow)"));
                    }
                    let items = self.stack.split_off(self.stack.len() - n);
                    self.stack.push(Value::Tuple(Rc::new(items)));
                }
                b'N' => self.stack.push(Value::None),
                0x88 => self.stack.push(Value::Bool(true)),
                0x89 => self.stack.push(Value::Bool(false)),
                b')' => self.stack.push(Value::Tuple(Rc::new(Vec::new()))),
                b']' => self.stack.push(Value::List(Default::default())),
                b'}' => self.stack.push(Value::Dict(Default::default())),
                b'J' => {
                    let v = i32::from_le_bytes(self.read_array()?);
                    self.stack.push(Value::Int(v as i64));
                }
                b'K' => {
                    let v = self.read_u8()?;
                    self.stack.push(Value::Int(v as i64));
                }
                b'M' => {
                    let v = u16::from_le_bytes(self.read_array()?);
                    self.stack.push(Value::Int(v as i64));
                }
                0x8a => {
                    let n = self.read_u8()? as usize;
                    let v = decode_long(self.read(n)?)?;
                    self.stack.push(Value::Int(v));
                }
                0x8b => {
                    let n = i32::from_le_bytes(self.read_array()?);
                    let n = usize::try_from(n).map_err(|_| err("LONG4 with a negative byte count"))?;
                    let v = decode_long(self.read(n)?)?;
                    self.stack.push(Value::Int(v));
                }
                b'G' => {
                    let v = f64::from_be_bytes(self.read_array()?);
                    self.stack.push(Value::Float(v));
                }
                b'X' => {
                    let n = self.read_u32()? as usize;
                    let v = self.str_value(n)?;
                    self.stack.push(v);
                }
                0x8c => {
                    let n = self.read_u8()? as usize;
                    let v = self.str_value(n)?;
                    self.stack.push(v);
                }
                0x8d => {
                    let n = self.read_len8()?;
                    let v = self.str_value(n)?;
                    self.stack.push(v);
                }
                b'U' => {
                    // SHORT_BINSTRING (protocol 0-2 str): read as UTF-8, as `encoding="utf-8"` does.
                    let n = self.read_u8()? as usize;
                    let v = self.str_value(n)?;
                    self.stack.push(v);
                }
                b'T' => {
                    let n = i32::from_le_bytes(self.read_array()?);
                    let n = usize::try_from(n).map_err(|_| err("BINSTRING with a negative length"))?;
                    let v = self.str_value(n)?;
                    self.stack.push(v);
                }
                b'C' => {
                    let n = self.read_u8()? as usize;
                    let v = self.bytes_value(n)?;
                    self.stack.push(v);
                }
                b'B' => {
                    let n = self.read_u32()? as usize;
                    let v = self.bytes_value(n)?;
                    self.stack.push(v);
                }
                0x8e => {
                    let n = self.read_len8()?;
                    let v = self.bytes_value(n)?;
                    self.stack.push(v);
                }
                b'Q' => {
                    let pid = self.pop()?;
                    let Value::Tuple(items) = &pid else {
                        return Err(err(format!("persistent_load id must be a tuple, but got {}", pid.type_name())));
                    };
                    if !matches!(items.first(), Some(Value::Str(s)) if s.as_ref() == "storage") {
                        return Err(err("Only persistent_load of storage is allowed"));
                    }
                    let v = (self.persistent_load)(items)?;
                    self.stack.push(v);
                }
                b'h' => {
                    let i = self.read_u8()? as u32;
                    self.get(i)?;
                }
                b'j' => {
                    let i = self.read_u32()?;
                    self.get(i)?;
                }
                b'q' => {
                    let i = self.read_u8()? as u32;
                    let v = self.top()?.clone();
                    self.memo.insert(i, v);
                }
                b'r' => {
                    let i = self.read_u32()?;
                    let v = self.top()?.clone();
                    self.memo.insert(i, v);
                }
                0x94 => {
                    let i = self.memo.len() as u32;
                    let v = self.top()?.clone();
                    self.memo.insert(i, v);
                }
                other => return Err(err(format!("Unsupported operand {other}"))),
            }
        }
    }

    fn get(&mut self, i: u32) -> Result<()> {
        let v = self.memo.get(&i).cloned().ok_or_else(|| err(format!("Memo value not found at index {i}")))?;
        self.stack.push(v);
        Ok(())
    }
}

/// A little-endian two's-complement int of at most 8 bytes (`LONG1`/`LONG4`).
fn decode_long(bytes: &[u8]) -> Result<i64> {
    if bytes.len() > 8 {
        return Err(err("an int does not fit in 64 bits"));
    }
    if bytes.is_empty() {
        return Ok(0);
    }
    let fill = if bytes[bytes.len() - 1] & 0x80 != 0 { 0xff } else { 0 };
    let mut buf = [fill; 8];
    buf[..bytes.len()].copy_from_slice(bytes);
    Ok(i64::from_le_bytes(buf))
}

fn int_list(v: &Value, what: &str) -> Result<Vec<i64>> {
    let items: Vec<Value> = match v {
        Value::Tuple(t) => t.as_ref().clone(),
        Value::List(l) => l.borrow().clone(),
        other => return Err(err(format!("{what} must be a tuple of ints, got {}", other.type_name()))),
    };
    items
        .iter()
        .map(|x| match x {
            Value::Int(i) => Ok(*i),
            other => Err(err(format!("{what} must be a tuple of ints, got an element of type {}", other.type_name()))),
        })
        .collect()
}

fn arg<'v>(args: &'v [Value], i: usize, func: &str) -> Result<&'v Value> {
    args.get(i).ok_or_else(|| err(format!("{func}() is missing argument {i}")))
}

/// `storage[offset:]` seen with `size` and `stride` as a tensor of `dtype`.
fn rebuild_tensor(args: &[Value], dtype: Option<DType>, func: &str) -> Result<Value> {
    let Value::Storage(s) = arg(args, 0, func)? else {
        return Err(err(format!("{func}() expects a storage as its first argument")));
    };
    let Value::Int(offset) = arg(args, 1, func)? else {
        return Err(err(format!("{func}() expects an int storage offset")));
    };
    let size = int_list(arg(args, 2, func)?, "size")?;
    let stride = int_list(arg(args, 3, func)?, "stride")?;
    let dtype = dtype.unwrap_or(s.dtype);
    if s.storage.nbytes() % dtype.itemsize() != 0 {
        return Err(err(format!("a storage of {} bytes cannot hold {dtype} elements", s.storage.nbytes())));
    }
    let layout = Layout::as_strided(&size, &stride, *offset)?;
    Ok(Value::Tensor(Tensor::from_parts(s.storage.clone(), layout, dtype)?))
}

fn call(func: Global, args: &[Value]) -> Result<Value> {
    match func {
        Global::OrderedDict => {
            if !args.is_empty() {
                return Err(err("OrderedDict() with arguments is not supported"));
            }
            Ok(Value::Dict(Default::default()))
        }
        Global::RebuildTensor => rebuild_tensor(args, None, "_rebuild_tensor"),
        Global::RebuildTensorV2 => rebuild_tensor(args, None, "_rebuild_tensor_v2"),
        Global::RebuildTensorV3 => match arg(args, 6, "_rebuild_tensor_v3")? {
            Value::Global(Global::Dtype(d)) => rebuild_tensor(args, Some(*d), "_rebuild_tensor_v3"),
            other => Err(err(format!("_rebuild_tensor_v3() expects a dtype, got {}", other.type_name()))),
        },
        Global::RebuildParameter | Global::RebuildParameterWithState => match args.first() {
            Some(Value::Tensor(t)) => Ok(Value::Tensor(t.clone())),
            _ => Err(err("_rebuild_parameter() expects a tensor")),
        },
        Global::StorageType(_) | Global::UntypedStorage | Global::Dtype(_) => {
            Err(err(format!("Trying to call reduce for unrecognized function {func:?}")))
        }
    }
}
