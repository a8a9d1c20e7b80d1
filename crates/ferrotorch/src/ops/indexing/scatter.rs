//! Gather/scatter along one dim and the `index_*` family, all built on the
//! offset kernels: `gather`, `scatter(_)`, `scatter_add(_)`, `scatter_reduce(_)`,
//! `index_select`, `index_add(_)`, `index_copy(_)`, `index_fill(_)`, `take`,
//! `take_along_dim`. Each records its derivative rule, written with these same
//! differentiable ops so double backward works.

use super::kernels::{check_index_values, count_nonzero_raw, one_element, read_at, write_at, Access, OutOfRange, Reduce, Term};
use crate::autograd::{apply_inplace, apply_inplace_kernel, needs_grad, record, rule, GradModeGuard, OldValue, SavedTensor};
use crate::ops::arith::{binary, BinaryOp, Operand};
use crate::ops::arith_grad::g0;
use crate::ops::creation::pretty;
use crate::Tensor;
use ferrotorch_core::error::{wrap_dim, wrap_dim_no_scalar};
use ferrotorch_core::layout::{contiguous_strides, fmt_shape};
use ferrotorch_core::op::index::IndexBounds;
use ferrotorch_core::{DType, Error, Layout, Result, Scalar};

/// The reductions of `scatter_reduce`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScatterReduce {
    /// `"sum"`
    Sum,
    /// `"prod"`
    Prod,
    /// `"mean"`
    Mean,
    /// `"amax"`
    Amax,
    /// `"amin"`
    Amin,
}

impl ScatterReduce {
    /// Parses PyTorch's reduce names.
    pub fn parse(s: &str) -> Result<ScatterReduce> {
        Ok(match s {
            "sum" => ScatterReduce::Sum,
            "prod" => ScatterReduce::Prod,
            "mean" => ScatterReduce::Mean,
            "amax" => ScatterReduce::Amax,
            "amin" => ScatterReduce::Amin,
            _ => return Err(Error::runtime(format!("reduce argument must be either sum, prod, mean, amax or amin, got {s}"))),
        })
    }
    fn kernel(self) -> Reduce {
        match self {
            ScatterReduce::Sum | ScatterReduce::Mean => Reduce::Add,
            ScatterReduce::Prod => Reduce::Mul,
            ScatterReduce::Amax => Reduce::Max,
            ScatterReduce::Amin => Reduce::Min,
        }
    }
}

fn i64s(s: &[usize]) -> Vec<i64> {
    s.iter().map(|&v| v as i64).collect()
}

/// PyTorch's index_copy_/index_fill_ kernels view the target as
/// `as_strided(shape with dim -> index.numel(), stride 0 along dim)` before
/// reading any index, and `as_strided` refuses a layout that reaches past the
/// storage. That only happens when the target is empty along `dim` while the
/// restrided view is not empty (an empty `[0, 5]` target and a non-empty
/// index): PyTorch then raises this RuntimeError instead of an out-of-range
/// IndexError, which it raises once the view fits (a view into a larger storage).
fn check_restride_fits(x: &Tensor, d: usize, n: usize) -> Result<()> {
    let mut shape = x.shape().to_vec();
    shape[d] = n;
    if shape.iter().any(|&s| s == 0) {
        return Ok(());
    }
    let mut strides = x.strides().to_vec();
    strides[d] = 0;
    let itemsize = x.dtype().itemsize();
    // The furthest element the view reaches (negative strides reach back).
    let last: isize = shape.iter().zip(&strides).map(|(&s, &st)| (s as isize - 1) * st.max(0)).sum();
    let need = (x.storage_offset() as isize + last + 1).max(0) as usize * itemsize;
    let have = x.storage().nbytes();
    if need > have {
        return Err(Error::runtime(format!(
            "setStorage: sizes {}, strides {}, storage offset {}, and itemsize {itemsize} requiring a storage size of {need} are out of bounds for storage of size {have}",
            fmt_shape(&shape),
            fmt_shape_i(&strides),
            x.storage_offset()
        )));
    }
    Ok(())
}

fn fmt_shape_i(v: &[isize]) -> String {
    format!("[{}]", v.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(", "))
}

/// PyTorch's `alpha.equal(1)`: whether `index_add` skips scaling the source,
/// decided on the argument as passed (a bool `True` is not 1, and a float
/// alpha that an integer target would truncate to 1 is not either).
fn is_unit_alpha(alpha: Scalar) -> bool {
    match alpha {
        Scalar::Int(v) => v == 1,
        Scalar::Float(v) => v == 1.0,
        Scalar::Complex(re, im) => re == 1.0 && im == 0.0,
        Scalar::Bool(_) => false,
    }
}

/// `alpha` converted to `x`'s dtype for `index_add`. PyTorch's multi-dim
/// kernel converts it in the add of the first index, after checking that
/// index, so an out-of-range first index is what it reports; the 1-d kernel
/// converts it before reading any index.
fn index_add_alpha(x: &Tensor, dim: i64, index: &Tensor, alpha: Scalar) -> Result<Scalar> {
    super::super::arith::scalar_arg(alpha, x.dtype()).map_err(|e| {
        if x.ndim() > 1 && index.numel() > 0 {
            if let (Ok(d), Ok(first)) = (wrap_dim(dim, x.ndim()), index.get_flat(0)) {
                let v = first.to_i64();
                if v < 0 || v >= x.shape()[d] as i64 {
                    return Error::index("index out of range in self");
                }
            }
        }
        e
    })
}

fn oob_runtime(dim: usize, size: usize) -> IndexBounds {
    IndexBounds { size, negative: false, error: OutOfRange::Dim { dim, prefix: "", index_error: false } }
}

fn oob_index(dim: usize, size: usize) -> IndexBounds {
    IndexBounds { size, negative: true, error: OutOfRange::Dim { dim, prefix: "", index_error: true } }
}

fn check_long(op: &str, index: &Tensor) -> Result<()> {
    if !matches!(index.dtype(), DType::Int64 | DType::Int32) {
        return Err(Error::runtime(format!("{op}(): Expected dtype int32/int64 for index")));
    }
    Ok(())
}

/// A view of `t` restricted to the leading `shape` corner (no autograd).
fn corner(t: &Tensor, shape: &[usize]) -> Result<Tensor> {
    t.make_view(Layout { shape: shape.into(), strides: t.strides().into(), offset: t.storage_offset() })
}

/// Pads a gradient shaped like a leading corner back to `shape` with zeros.
fn pad_corner(g: &Tensor, shape: &[usize]) -> Result<Tensor> {
    if g.shape() == shape {
        return Ok(g.clone());
    }
    let rel = Layout { shape: g.shape().into(), strides: contiguous_strides(shape), offset: 0 };
    crate::ops::view_grad::view_scatter_add(g, shape, &rel)
}

/// Checks gather/scatter shapes: same ndim, and index no larger than self
/// (except along `dim`) and than src.
fn check_scatter_shapes(x: &Tensor, dim: usize, index: &Tensor, src: Option<&Tensor>) -> Result<()> {
    if index.ndim() != x.ndim().max(1) && !(index.ndim() == 0 && x.ndim() <= 1) {
        return Err(Error::runtime("Index tensor must have the same number of dimensions as input tensor"));
    }
    if let Some(s) = src {
        if s.ndim() != index.ndim() && !(s.ndim() <= 1 && index.ndim() <= 1) {
            return Err(Error::runtime("Index tensor must have the same number of dimensions as src tensor"));
        }
    }
    for d in 0..index.ndim().min(x.ndim()) {
        let too_big_self = d != dim && index.shape()[d] > x.shape()[d];
        let too_big_src = src.is_some_and(|s| s.ndim() == index.ndim() && index.shape()[d] > s.shape()[d]);
        if too_big_self || too_big_src {
            return Err(Error::runtime(match src {
                Some(s) => format!(
                    "Expected index {} to be no larger than self {} apart from dimension {} and to be no larger size than src {}",
                    fmt_shape(index.shape()),
                    fmt_shape(x.shape()),
                    dim,
                    fmt_shape(s.shape())
                ),
                None => format!(
                    "Size does not match at dimension {} expected index {} to be no larger than self {} apart from dimension {}",
                    d,
                    fmt_shape(index.shape()),
                    fmt_shape(x.shape()),
                    dim
                ),
            }));
        }
    }
    Ok(())
}

/// A 1-d view of a 0-d tensor (gather/scatter treat scalars as one element).
fn at_least_1d(t: &Tensor) -> Result<Tensor> {
    if t.ndim() == 0 {
        t.reshape(&[1])
    } else {
        Ok(t.clone())
    }
}

impl Tensor {
    /// `gather(dim, index)`: `out[p] = self[p with p[dim] = index[p]]` (records `GatherBackward0`).
    pub fn gather(&self, dim: i64, index: &Tensor) -> Result<Tensor> {
        check_long("gather", index)?;
        let d = wrap_dim(dim, self.ndim())?;
        check_scatter_shapes(self, d, index, None)?;
        let out = {
            let _g = GradModeGuard::new(false);
            let (x, ix) = (at_least_1d(self)?, at_least_1d(index)?);
            let size = x.shape()[d];
            let acc = Access::along_dim(&x, ix.shape(), d, &ix, oob_runtime(d, size))?;
            read_at(&x, &acc, index.shape())?
        };
        let (shape, index_c) = (self.shape().to_vec(), index.clone());
        record("GatherBackward0", &[Some(self)], &[&out], move || {
            rule(move |_, g| {
                let Some(g) = g0(g) else { return Ok(vec![None]) };
                let z = Tensor::zeros(&shape, g.dtype(), g.device())?;
                Ok(vec![Some(z.scatter_add(d as i64, &index_c, &g)?)])
            })
        });
        Ok(out)
    }

    /// The checks PyTorch's scatter kernels make before their dtype dispatch:
    /// the target's memory, the index dtype, `src`'s dtype and the shapes.
    /// Returns `dim` wrapped.
    fn check_scatter_args(&self, dim: i64, index: &Tensor, src: Operand) -> Result<usize> {
        self.layout().check_no_internal_overlap()?;
        check_long("scatter", index)?;
        let d = wrap_dim(dim, self.ndim())?;
        let st = if let Operand::T(s) = src { Some(s) } else { None };
        if let Some(s) = st {
            if s.dtype() != self.dtype() {
                return Err(Error::runtime(format!(
                    "scatter(): Expected self.dtype to be equal to src.dtype, but got {} and {}",
                    pretty(self.dtype()),
                    pretty(s.dtype())
                )));
            }
        }
        check_scatter_shapes(self, d, index, st)?;
        Ok(d)
    }

    /// `scatter_` without autograd: writes `src` (a tensor's leading corner or
    /// a scalar) at the positions `index` names along `dim`, combining by `mode`.
    pub fn scatter_raw_(&self, dim: i64, index: &Tensor, src: Operand, mode: Reduce) -> Result<()> {
        // A direct kernel write (not a `copy_raw_` write-back): PyTorch refuses
        // targets whose elements share memory here too.
        let d = self.check_scatter_args(dim, index, src)?;
        if index.numel() == 0 {
            // PyTorch's kernel returns before converting a scalar value.
            return Ok(());
        }
        let _g = GradModeGuard::new(false);
        let (x, ix) = (at_least_1d(self)?, at_least_1d(index)?);
        let size = x.shape()[d];
        let acc = Access::along_dim(&x, ix.shape(), d, &ix, oob_runtime(d, size))?;
        let vals = match src {
            Operand::T(s) => corner(&at_least_1d(s)?, ix.shape())?,
            Operand::S(v) => Tensor::full(&[], v, self.dtype(), self.device())?.expand(&i64s(ix.shape()))?,
        };
        write_at(&x, &acc, &vals, mode)?;
        Ok(())
    }

    /// Out-of-place scatter with `mode`, recording the matching node.
    fn scatter_op(&self, dim: i64, index: &Tensor, src: Operand, mode: Reduce) -> Result<Tensor> {
        let out = {
            let _g = GradModeGuard::new(false);
            let o = self.clone_data()?;
            o.scatter_raw_(dim, index, src, mode)?;
            o
        };
        let d = wrap_dim(dim, self.ndim())?;
        let st = if let Operand::T(s) = src { Some(s) } else { None };
        let name = match (mode, st.is_some()) {
            (Reduce::Assign, true) => "ScatterBackward0",
            (Reduce::Assign, false) => "ScatterBackward1",
            (Reduce::Add, true) => "ScatterAddBackward0",
            _ => "ScatterReduceBackward0",
        };
        let index_c = index.clone();
        let src_shape = st.map(|s| s.shape().to_vec());
        let src_rg = st.is_some_and(|s| s.requires_grad());
        record(name, &[Some(self), st], &[&out], move || {
            rule(move |_, g| {
                let Some(g) = g0(g) else { return Ok(vec![None, None]) };
                let dd = d as i64;
                let gself = match mode {
                    Reduce::Assign => Some(g.scatter(dd, &index_c, Operand::S(Scalar::Int(0)))?),
                    Reduce::Add => Some(g.clone()),
                    _ => return Err(Error::not_implemented("the derivative of scatter with reduce='multiply' is not implemented")),
                };
                let gsrc = match &src_shape {
                    Some(s) if src_rg => Some(pad_corner(&g.gather(dd, &index_c)?, s)?),
                    _ => None,
                };
                Ok(vec![gself, gsrc])
            })
        });
        Ok(out)
    }

    /// `scatter(dim, index, src|value)`.
    pub fn scatter(&self, dim: i64, index: &Tensor, src: Operand) -> Result<Tensor> {
        self.scatter_op(dim, index, src, Reduce::Assign)
    }

    /// `scatter(dim, index, src|value, reduce='add'|'multiply')`.
    pub fn scatter_with_reduce(&self, dim: i64, index: &Tensor, src: Operand, reduce: &str) -> Result<Tensor> {
        self.scatter_op(dim, index, src, parse_legacy_reduce(reduce)?)
    }

    /// In-place `scatter_` (optionally with a legacy `reduce`).
    pub fn scatter_(&self, dim: i64, index: &Tensor, src: Operand, reduce: Option<&str>) -> Result<()> {
        let mode = match reduce {
            Some(r) => parse_legacy_reduce(r)?,
            None => Reduce::Assign,
        };
        let others: Vec<&Tensor> = if let Operand::T(s) = src { vec![self, s] } else { vec![self] };
        if needs_grad(&others) {
            return apply_inplace(self, OldValue::Alias, |old| old.scatter_op(dim, index, src, mode));
        }
        self.scatter_raw_(dim, index, src, mode)
    }

    /// `scatter_add(dim, index, src)` (records `ScatterAddBackward0`).
    pub fn scatter_add(&self, dim: i64, index: &Tensor, src: &Tensor) -> Result<Tensor> {
        self.scatter_op(dim, index, Operand::T(src), Reduce::Add)
    }

    /// In-place `scatter_add_`.
    pub fn scatter_add_(&self, dim: i64, index: &Tensor, src: &Tensor) -> Result<()> {
        self.scatter_(dim, index, Operand::T(src), Some("add"))
    }

    /// `scatter_reduce(dim, index, src, reduce, include_self)` (records `ScatterReduceBackward0`).
    pub fn scatter_reduce(&self, dim: i64, index: &Tensor, src: &Tensor, reduce: ScatterReduce, include_self: bool) -> Result<Tensor> {
        let d = wrap_dim(dim, self.ndim())?;
        let (out, counts) = {
            let _g = GradModeGuard::new(false);
            self.scatter_reduce_raw(d, index, src, reduce, include_self)?
        };
        let dd = d as i64;
        let (s_self, s_src, s_out) = (SavedTensor::input(self), SavedTensor::input(src), SavedTensor::output(&out, 0));
        let (wa, wb) = (self.requires_grad(), src.requires_grad());
        let index_c = index.clone();
        let src_shape = src.shape().to_vec();
        record("ScatterReduceBackward0", &[Some(self), Some(src)], &[&out], move || {
            rule(move |node, g| {
                let Some(g) = g0(g) else { return Ok(vec![None, None]) };
                let zero = Operand::S(Scalar::Int(0));
                let srcv = s_src.unpack(node)?;
                let src_c = corner(&srcv, index_c.shape())?;
                let (gself, gsrc) = match reduce {
                    ScatterReduce::Sum | ScatterReduce::Mean => {
                        let gn = match &counts {
                            Some(n) => binary(Operand::T(&g), Operand::T(&n.to_dtype(g.dtype())?), BinaryOp::Div)?,
                            None => g.clone(),
                        };
                        let gs = if include_self { gn.clone() } else { gn.scatter(dd, &index_c, zero)? };
                        (gs, gn.gather(dd, &index_c)?)
                    }
                    ScatterReduce::Amax | ScatterReduce::Amin => {
                        let r = s_out.unpack(node)?;
                        let x = s_self.unpack(node)?;
                        let self_eq = if include_self {
                            binary(Operand::T(&x), Operand::T(&r), BinaryOp::Eq)?.to_dtype(g.dtype())?
                        } else {
                            untouched(&r, dd, &index_c, g.dtype())?
                        };
                        let rg = r.gather(dd, &index_c)?;
                        let src_eq = binary(Operand::T(&src_c), Operand::T(&rg), BinaryOp::Eq)?.to_dtype(g.dtype())?;
                        let z = Tensor::zeros(r.shape(), g.dtype(), g.device())?;
                        let count = binary(Operand::T(&self_eq), Operand::T(&z.scatter_add(dd, &index_c, &src_eq)?), BinaryOp::Add)?;
                        let gc = binary(Operand::T(&g), Operand::T(&count), BinaryOp::Div)?;
                        let gs = binary(Operand::T(&gc), Operand::T(&self_eq), BinaryOp::Mul)?;
                        (gs, binary(Operand::T(&gc.gather(dd, &index_c)?), Operand::T(&src_eq), BinaryOp::Mul)?)
                    }
                    ScatterReduce::Prod => {
                        let r = s_out.unpack(node)?;
                        let x = s_self.unpack(node)?;
                        if has_zero(&src_c)? || (include_self && has_zero(&x)?) {
                            return Err(Error::not_implemented(
                                "the derivative of scatter_reduce(reduce='prod') with zeros in the input is not implemented in ferrotorch",
                            ));
                        }
                        let gr = binary(Operand::T(&g), Operand::T(&r), BinaryOp::Mul)?;
                        let gs = if include_self {
                            binary(Operand::T(&gr), Operand::T(&x), BinaryOp::Div)?
                        } else {
                            binary(Operand::T(&g), Operand::T(&untouched(&r, dd, &index_c, g.dtype())?), BinaryOp::Mul)?
                        };
                        (gs, binary(Operand::T(&gr.gather(dd, &index_c)?), Operand::T(&src_c), BinaryOp::Div)?)
                    }
                };
                Ok(vec![if wa { Some(gself) } else { None }, if wb { Some(pad_corner(&gsrc, &src_shape)?) } else { None }])
            })
        });
        Ok(out)
    }

    /// The forward of `scatter_reduce`; also returns the per-position counts for `mean`.
    fn scatter_reduce_raw(&self, d: usize, index: &Tensor, src: &Tensor, reduce: ScatterReduce, include_self: bool) -> Result<(Tensor, Option<Tensor>)> {
        let out = self.clone_data()?;
        if !include_self {
            out.scatter_raw_(d as i64, index, Operand::S(identity(reduce, self.dtype())), Reduce::Assign)?;
        }
        if reduce == ScatterReduce::Mean && self.dtype() == DType::Bool {
            // PyTorch has no bool instance of its mean kernel, and its dtype
            // dispatch comes before the kernel reads an index (so before an
            // out-of-bounds index is found); an empty index skips the kernel
            // and fails in the floor division that ends the mean.
            out.check_scatter_args(d as i64, index, Operand::T(src))?;
            return Err(Error::not_implemented(if index.numel() == 0 {
                "\"div_floor_cpu\" not implemented for 'Bool'"
            } else {
                "\"scatter_gather_tensor_cpu_reduce_mean\" not implemented for 'Bool'"
            }));
        }
        out.scatter_raw_(d as i64, index, Operand::T(src), reduce.kernel())?;
        if reduce != ScatterReduce::Mean {
            return Ok((out, None));
        }
        let ones = Tensor::ones(index.shape(), DType::Float64, self.device())?;
        let counts = Tensor::full(self.shape(), Scalar::Int(include_self as i64), DType::Float64, self.device())?;
        counts.scatter_raw_(d as i64, index, Operand::T(&ones), Reduce::Add)?;
        let counts = binary(Operand::T(&counts), Operand::S(Scalar::Float(1.0)), BinaryOp::Maximum)?;
        if !self.dtype().is_floating_point() {
            // PyTorch floor-divides integer sums by the counts in integers:
            // through f64 an int64 beyond 2^53 would lose its low bits.
            let ci = counts.to_dtype(DType::Int64)?;
            let q = binary(Operand::T(&out), Operand::T(&ci), BinaryOp::DivFloor)?;
            return Ok((q.to_dtype(self.dtype())?, Some(counts)));
        }
        let q = binary(Operand::T(&out.to_dtype(DType::Float64)?), Operand::T(&counts), BinaryOp::Div)?;
        Ok((q.to_dtype(self.dtype())?, Some(counts)))
    }

    /// In-place `scatter_reduce_`.
    pub fn scatter_reduce_(&self, dim: i64, index: &Tensor, src: &Tensor, reduce: ScatterReduce, include_self: bool) -> Result<()> {
        if needs_grad(&[self, src]) {
            return apply_inplace(self, OldValue::Copy, |old| old.scatter_reduce(dim, index, src, reduce, include_self));
        }
        let d = wrap_dim(dim, self.ndim())?;
        let (r, _) = self.scatter_reduce_raw(d, index, src, reduce, include_self)?;
        self.copy_(&r)
    }

    /// `index_select(dim, index)` (records `IndexSelectBackward0`).
    pub fn index_select(&self, dim: i64, index: &Tensor) -> Result<Tensor> {
        if !matches!(index.dtype(), DType::Int64 | DType::Int32) {
            return Err(Error::runtime("index_select(): Expected dtype int32 or int64 for index"));
        }
        if index.ndim() > 1 {
            return Err(Error::index("index_select(): Index is supposed to be a vector"));
        }
        let d = wrap_dim(dim, self.ndim())?;
        if self.ndim() == 0 && index.numel() != 1 {
            return Err(Error::runtime(format!("index_select(): Index to scalar can have only 1 value, got {} value(s)", index.numel())));
        }
        if self.ndim() > 1 && self.numel() == 0 && index.numel() > 0 {
            // PyTorch's CPU kernel checks an empty self's indices on its own
            // path, with its own messages.
            let size = self.shape()[d];
            if size == 0 {
                return Err(Error::runtime("index_select(): self indexing axis dim should be positive"));
            }
            check_index_values(self, index, IndexBounds { size, negative: false, error: OutOfRange::DataBounds })?;
        }
        let out = {
            let _g = GradModeGuard::new(false);
            let x = at_least_1d(self)?;
            let (shape, ix) = along(&x, d, index)?;
            let size = x.shape()[d];
            // PyTorch's CPU index_select takes another kernel (with another
            // message and a RuntimeError) along dim 1 of a multi-dim tensor.
            let second_dim = self.ndim() > 1 && d == 1;
            let error = if second_dim { OutOfRange::DataBounds } else { OutOfRange::InSelf };
            let acc = Access::along_dim(&x, &shape, d, &ix, IndexBounds { size, negative: false, error })?;
            let out = read_at(&x, &acc, &shape)?;
            // PyTorch: selecting from a 0-d tensor gives a 0-d tensor, whatever the index's dims.
            if self.ndim() == 0 { out.reshape(&[])? } else { out }
        };
        let (shape, index_c) = (self.shape().to_vec(), index.clone());
        record("IndexSelectBackward0", &[Some(self)], &[&out], move || {
            rule(move |_, g| {
                let Some(g) = g0(g) else { return Ok(vec![None]) };
                let z = Tensor::zeros(&shape, g.dtype(), g.device())?;
                // A 0-d input selected by a 1-element index: its gradient is 0-d too.
                let g = if shape.is_empty() { g.reshape(&[])? } else { g };
                Ok(vec![Some(z.index_add(d as i64, &index_c, &g, Scalar::Int(1))?)])
            })
        });
        Ok(out)
    }

    /// `index_add_`/`index_copy_` without autograd.
    ///
    /// `scaled`: an `index_add_` whose `alpha` is not 1 (PyTorch reports its
    /// out-of-range indices from another kernel, as an `IndexError`).
    fn index_write_raw_(&self, op: &str, dim: i64, index: &Tensor, source: &Tensor, mode: Reduce, scaled: bool) -> Result<()> {
        // A direct kernel write, refused on overlapping targets like `copy_raw_`.
        self.layout().check_no_internal_overlap()?;
        let copy = mode == Reduce::Assign;
        if copy {
            check_index_copy_args(self, dim, index, source)?;
        } else {
            check_index_vector(op, index)?;
        }
        let d = wrap_dim(dim, self.ndim())?;
        let _g = GradModeGuard::new(false);
        let x = at_least_1d(self)?;
        let src = at_least_1d(source)?;
        let n = index.numel();
        if src.ndim() != x.ndim() {
            return Err(Error::index(format!(
                "{op}(): When source and destination are not scalars, their dimensionality must match. Source dimensionality ({}), destination dimensionality ({})",
                source.ndim(),
                self.ndim()
            )));
        }
        if !copy && src.shape()[d] != n {
            return Err(Error::runtime(format!(
                "{op}(): Number of indices ({n}) should be equal to source.size(dim): ({}), for dim: {d}",
                src.shape()[d]
            )));
        }
        for k in 0..x.ndim() {
            if k != d && src.shape()[k] != x.shape()[k] {
                return Err(Error::runtime(format!(
                    "{op}(): Source/destination tensor must have same slice shapes. Destination slice shape: {} at dimension {d} and source slice shape: {} at dimension 0.",
                    fmt_shape(&drop_dim(x.shape(), d)),
                    fmt_shape(&drop_dim(src.shape(), d))
                )));
            }
        }
        if copy && src.shape()[d] != n {
            return Err(Error::index(format!(
                "{op}(): Number of indices ({n}) should be equal to source.size(dim) ({})",
                src.shape()[d]
            )));
        }
        if copy {
            check_restride_fits(&x, d, n)?;
        }
        let (_, ix) = along(&x, d, index)?;
        let size = x.shape()[d];
        // PyTorch words (and types) this error differently per op. Its
        // index_add_ takes a scatter_add kernel (a RuntimeError) only for an
        // unscaled add along the first or last dim of a multi-dim tensor; every
        // other case runs a per-index loop that raises an IndexError.
        let nd = x.ndim();
        let per_index_loop = nd <= 1 || scaled || (d != 0 && d != nd - 1);
        let error = if matches!(mode, Reduce::Add | Reduce::AddScaled(_)) && per_index_loop {
            OutOfRange::InSelf
        } else if matches!(mode, Reduce::Add | Reduce::AddScaled(_)) {
            OutOfRange::Dim { dim: d, prefix: "", index_error: false }
        } else {
            OutOfRange::Dim { dim: d, prefix: "index_copy_(): ", index_error: true }
        };
        // Unlike index_fill and index_select's wrapping callers, PyTorch's
        // index_add_/index_copy_ kernels refuse negative indices.
        let acc = Access::along_dim(&x, src.shape(), d, &ix, IndexBounds { size, negative: false, error })?;
        write_at(&x, &acc, &src, mode)?;
        Ok(())
    }

    /// `index_add(dim, index, source, alpha=1)` (records `IndexAddBackward0`).
    pub fn index_add(&self, dim: i64, index: &Tensor, source: &Tensor, alpha: Scalar) -> Result<Tensor> {
        index_add_checks(self, dim, index, source)?;
        // A multi-dim self returns before reading any index, or `alpha`, when
        // there is nothing to add (out-of-range indices included).
        let nothing = self.ndim() > 1 && (self.numel() == 0 || index.numel() == 0);
        let unit = is_unit_alpha(alpha);
        let alpha = if nothing { Scalar::Int(1) } else { index_add_alpha(self, dim, index, alpha)? };
        let out = {
            let _g = GradModeGuard::new(false);
            let o = self.clone_data()?;
            if !nothing {
                o.index_add_raw_(dim, index, source, alpha, unit)?;
            }
            o
        };
        let d = wrap_dim(dim, self.ndim())?;
        let (index_c, sshape) = (index.clone(), i64s(source.shape()));
        let (wa, wb) = (self.requires_grad(), source.requires_grad());
        record("IndexAddBackward0", &[Some(self), Some(source)], &[&out], move || {
            rule(move |_, g| {
                let Some(g) = g0(g) else { return Ok(vec![None, None]) };
                let gs = if wb {
                    let p = g.index_select(d as i64, &index_c)?;
                    let p = if unit { p } else { binary(Operand::T(&p), Operand::S(alpha), BinaryOp::Mul)? };
                    Some(p.reshape(&sshape)?)
                } else {
                    None
                };
                Ok(vec![if wa { Some(g) } else { None }, gs])
            })
        });
        Ok(out)
    }

    /// In-place `index_add_`.
    pub fn index_add_(&self, dim: i64, index: &Tensor, source: &Tensor, alpha: Scalar) -> Result<()> {
        index_add_checks(self, dim, index, source)?;
        if needs_grad(&[self, source]) {
            return apply_inplace(self, OldValue::Alias, |old| old.index_add(dim, index, source, alpha));
        }
        if self.ndim() > 1 && (self.numel() == 0 || index.numel() == 0) {
            return Ok(());
        }
        let unit = is_unit_alpha(alpha);
        let alpha = index_add_alpha(self, dim, index, alpha)?;
        self.index_add_raw_(dim, index, source, alpha, unit)
    }

    /// The write of `index_add_` (arguments checked, `alpha` converted).
    /// PyTorch's multi-dim kernel is `add_(source_slice, alpha)` per index, a
    /// fused multiply-add for float32/float64; its 1-d loop (and every other
    /// dtype) scales the source first.
    fn index_add_raw_(&self, dim: i64, index: &Tensor, source: &Tensor, alpha: Scalar, unit: bool) -> Result<()> {
        if unit {
            return self.index_write_raw_("index_add_", dim, index, source, Reduce::Add, false);
        }
        if self.ndim() > 1 && matches!(self.dtype(), DType::Float32 | DType::Float64) && source.dtype() == self.dtype() {
            return self.index_write_raw_("index_add_", dim, index, source, Reduce::AddScaled(alpha.to_f64()), true);
        }
        let s = binary(Operand::T(source), Operand::S(alpha), BinaryOp::Mul)?;
        self.index_write_raw_("index_add_", dim, index, &s, Reduce::Add, true)
    }

    /// `index_copy(dim, index, source)` (records `IndexCopyBackward0`).
    pub fn index_copy(&self, dim: i64, index: &Tensor, source: &Tensor) -> Result<Tensor> {
        let out = {
            let _g = GradModeGuard::new(false);
            let o = self.clone_data()?;
            o.index_write_raw_("index_copy_", dim, index, source, Reduce::Assign, false)?;
            o
        };
        let d = wrap_dim(dim, self.ndim())? as i64;
        let (index_c, sshape) = (index.clone(), i64s(source.shape()));
        let (wa, wb) = (self.requires_grad(), source.requires_grad());
        record("IndexCopyBackward0", &[Some(self), Some(source)], &[&out], move || {
            rule(move |_, g| {
                let Some(g) = g0(g) else { return Ok(vec![None, None]) };
                let ga = if wa { Some(g.index_fill(d, &index_c, Operand::S(Scalar::Int(0)))?) } else { None };
                let gb = if wb { Some(g.index_select(d, &index_c)?.reshape(&sshape)?) } else { None };
                Ok(vec![ga, gb])
            })
        });
        Ok(out)
    }

    /// In-place `index_copy_`.
    pub fn index_copy_(&self, dim: i64, index: &Tensor, source: &Tensor) -> Result<()> {
        if needs_grad(&[self, source]) {
            return apply_inplace(self, OldValue::Alias, |old| old.index_copy(dim, index, source));
        }
        self.index_copy(dim, index, source).and_then(|r| self.copy_(&r))
    }

    /// `index_fill(dim, index, value)` with a scalar or 0-d tensor value
    /// (records `IndexFillBackward0`/`IndexFillBackward1`).
    pub fn index_fill(&self, dim: i64, index: &Tensor, value: Operand) -> Result<Tensor> {
        let (d, v) = self.index_fill_args(dim, index, value)?;
        let vt = if let Operand::T(v) = value { Some(v) } else { None };
        let out = {
            let _g = GradModeGuard::new(false);
            let o = self.clone_data()?;
            o.index_fill_raw_(d, index, v)?;
            o
        };
        let name = if vt.is_some() { "IndexFillBackward1" } else { "IndexFillBackward0" };
        let index_c = index.clone();
        let (wa, wv) = (self.requires_grad(), vt.is_some_and(|v| v.requires_grad()));
        record(name, &[Some(self), vt], &[&out], move || {
            rule(move |_, g| {
                let Some(g) = g0(g) else { return Ok(vec![None, None]) };
                let dd = d as i64;
                let kept = g.index_fill(dd, &index_c, Operand::S(Scalar::Int(0)))?;
                // Each filled position counts once, even when the index repeats it.
                let gv = if wv { Some(binary(Operand::T(&g), Operand::T(&kept), BinaryOp::Sub)?.sum()?) } else { None };
                let ga = if wa { Some(kept) } else { None };
                Ok(vec![ga, gv])
            })
        });
        Ok(out)
    }

    /// In-place `index_fill_`. PyTorch runs it on targets whose elements share
    /// memory (expanded views), so it writes the named positions only.
    pub fn index_fill_(&self, dim: i64, index: &Tensor, value: Operand) -> Result<()> {
        let (d, v) = self.index_fill_args(dim, index, value)?;
        let others: Vec<&Tensor> = if let Operand::T(v) = value { vec![self, v] } else { vec![self] };
        if needs_grad(&others) {
            return apply_inplace_kernel(self, OldValue::Alias, |old| old.index_fill(dim, index, value), || self.index_fill_raw_(d, index, v));
        }
        self.index_fill_raw_(d, index, v)
    }

    /// `index_fill`'s argument checks (PyTorch's order and exception types):
    /// the wrapped dim and the fill value.
    fn index_fill_args(&self, dim: i64, index: &Tensor, value: Operand) -> Result<(usize, Scalar)> {
        // Unlike index_select/index_add, index_fill takes int64 indices only.
        if index.dtype() != DType::Int64 {
            return Err(Error::index("index_fill_(): Expected dtype int64 for index."));
        }
        if index.ndim() > 1 {
            return Err(Error::runtime("Index has to be a vector/scalar"));
        }
        let d = wrap_dim(dim, self.ndim())?;
        let v = match value {
            Operand::S(s) => s,
            Operand::T(t) => {
                if t.ndim() != 0 {
                    return Err(Error::runtime(format!(
                        "index_fill_ only supports a 0-dimensional value tensor, but got tensor with {} dimension(s).",
                        t.ndim()
                    )));
                }
                t.item()?
            }
        };
        ferrotorch_core::dtype::check_scalar_fits(v, self.dtype(), self.numel())?;
        Ok((d, v))
    }

    /// Writes `v` at `index` along dim `d`, in place, without autograd.
    fn index_fill_raw_(&self, d: usize, index: &Tensor, v: Scalar) -> Result<()> {
        let _g = GradModeGuard::new(false);
        let x = at_least_1d(self)?;
        check_restride_fits(&x, d, index.numel())?;
        let (shape, ix) = along(&x, d, index)?;
        let size = x.shape()[d];
        let acc = Access::along_dim(&x, &shape, d, &ix, oob_index(d, size))?;
        let vals = Tensor::full(&[], v, self.dtype(), self.device())?.expand(&i64s(&shape))?;
        write_at(&x, &acc, &vals, Reduce::Assign)?;
        Ok(())
    }

    /// `take(index)`: elements of the flattened tensor (records `TakeBackward0`).
    pub fn take(&self, index: &Tensor) -> Result<Tensor> {
        if index.dtype() != DType::Int64 {
            return Err(Error::runtime(format!("take(): Expected a long tensor for index, but got {}", pretty(index.dtype()))));
        }
        let numel = self.numel();
        let out = {
            let _g = GradModeGuard::new(false);
            // Flat positions index the row-major elements: a contiguous copy's storage.
            let flat = self.contiguous()?.reshape(&[-1])?;
            let bounds = IndexBounds { size: numel, negative: true, error: OutOfRange::Flat };
            let pos = Layout { shape: index.shape().into(), strides: vec![0isize; index.ndim()].into(), offset: flat.storage_offset() };
            let acc = Access { pos, terms: vec![Term::new(index, index.shape(), 1, bounds)?], block: one_element() };
            read_at(&flat, &acc, index.shape())?
        };
        let (shape, index_c) = (i64s(self.shape()), index.clone());
        record("TakeBackward0", &[Some(self)], &[&out], move || {
            rule(move |_, g| {
                let Some(g) = g0(g) else { return Ok(vec![None]) };
                let z = Tensor::zeros(&[numel], g.dtype(), g.device())?;
                let r = z.index_put(&[Some(index_c.reshape(&[-1])?)], &g.reshape(&[-1])?, true)?;
                Ok(vec![Some(r.reshape(&shape)?)])
            })
        });
        Ok(out)
    }

    /// `take_along_dim(indices, dim)`: `gather` after broadcasting input and
    /// indices against each other (everything flattened when `dim` is None).
    pub fn take_along_dim(&self, indices: &Tensor, dim: Option<i64>) -> Result<Tensor> {
        if !matches!(indices.dtype(), DType::Int64 | DType::Int32) {
            return Err(Error::runtime(format!(
                "torch.take_along_dim(): dtype of indices should be int64 but got {}",
                indices.dtype()
            )));
        }
        let Some(dim) = dim else {
            return self.reshape(&[-1])?.gather(0, &indices.reshape(&[-1])?);
        };
        if self.ndim() == 0 && indices.ndim() == 0 {
            // PyTorch wraps the dim, then reads the size there, which a 0-d tensor lacks.
            let d = wrap_dim(dim, 0)?;
            wrap_dim_no_scalar(d as i64, 0)?;
        }
        if self.ndim() != indices.ndim() {
            return Err(Error::runtime(format!(
                "torch.take_along_dim(): input and indices should have the same number of dimensions, but got {} dimensions for input, and {} dimensions for indices",
                self.ndim(),
                indices.ndim()
            )));
        }
        let d = wrap_dim(dim, self.ndim())?;
        let mut a = self.shape().to_vec();
        let mut b = indices.shape().to_vec();
        a[d] = 1;
        b[d] = 1;
        let mut shape = ferrotorch_core::layout::broadcast_shapes(&a, &b)?.to_vec();
        shape[d] = self.shape()[d];
        let xe = self.expand(&i64s(&shape))?;
        shape[d] = indices.shape()[d];
        let ie = indices.expand(&i64s(&shape))?;
        xe.gather(d as i64, &ie)
    }
}

/// The shape of `x` with `dim` resized to `index.numel()`, and the index as
/// a tensor shaped to broadcast along that dim.
fn along(x: &Tensor, dim: usize, index: &Tensor) -> Result<(Vec<usize>, Tensor)> {
    let n = index.numel();
    let mut shape = x.shape().to_vec();
    shape[dim] = n;
    let mut view = vec![1i64; x.ndim()];
    view[dim] = n as i64;
    Ok((shape, index.reshape(&view)?))
}

/// PyTorch's `index_func_meta_impl` for `index_add`: the index is an int
/// vector, `source` has `self`'s dtype (no conversion), and the shapes agree
/// outside `dim`, where a 0-d `self` or `source` is compared whole (so a 0-d
/// tensor pairs only with a 0-d one).
fn index_add_checks(x: &Tensor, dim: i64, index: &Tensor, source: &Tensor) -> Result<()> {
    let d = wrap_dim(dim, x.ndim())?;
    check_index_vector("index_add_", index)?;
    if x.dtype() != source.dtype() {
        return Err(Error::runtime(format!(
            "index_add_(): self ({}) and source ({}) must have the same scalar type",
            pretty(x.dtype()),
            pretty(source.dtype())
        )));
    }
    if d != 0 && d >= source.ndim() {
        return Err(Error::runtime(format!(
            "index_add_(): Indexing dim {d} is out of bounds of the source tensor with dim {}",
            source.ndim()
        )));
    }
    let along = if source.ndim() == 0 { 1 } else { source.shape()[d] };
    if index.numel() != along && source.ndim() == 0 {
        // PyTorch builds this message with `source.size(dim)`, which fails first.
        return Err(Error::index(format!("Dimension specified as {dim} but tensor has no dimensions")));
    }
    if index.numel() != along {
        return Err(Error::runtime(format!(
            "index_add_(): Number of indices ({}) should be equal to source.size(dim): ({along}), for dim: {d}",
            index.numel()
        )));
    }
    let (xs, ss) = if x.ndim() != 0 && source.ndim() != 0 {
        (drop_dim(x.shape(), d), drop_dim(source.shape(), d))
    } else {
        (x.shape().to_vec(), source.shape().to_vec())
    };
    if xs != ss {
        return Err(Error::runtime(format!(
            "source tensor shape must match self tensor shape, excluding the specified dimension. Got self.shape = {} source.shape = {}",
            fmt_list(&xs),
            fmt_list(&ss)
        )));
    }
    Ok(())
}

/// `[2, 3]`, as PyTorch prints a size vector in messages.
fn fmt_list(v: &[usize]) -> String {
    format!("[{}]", v.iter().map(|s| s.to_string()).collect::<Vec<_>>().join(", "))
}

fn drop_dim(s: &[usize], d: usize) -> Vec<usize> {
    s.iter().enumerate().filter(|&(i, _)| i != d).map(|(_, &v)| v).collect()
}

/// `index_copy_`'s argument checks in PyTorch's order (its index count along
/// `dim` comes last, after the slice shapes, in the caller).
fn check_index_copy_args(x: &Tensor, dim: i64, index: &Tensor, source: &Tensor) -> Result<()> {
    let d = wrap_dim(dim, x.ndim())?;
    if index.ndim() > 1 {
        return Err(Error::index(format!("index_copy_(): Index should have dimension 1 or 0 (got {})", index.ndim())));
    }
    let n = index.numel();
    if source.ndim() == 0 && n != 1 {
        return Err(Error::index(format!("index_copy_(): When source is scalar, index should have one element (got {n})")));
    }
    if source.ndim() != x.ndim() && source.ndim() != 0 && x.ndim() != 0 {
        return Err(Error::index(format!(
            "index_copy_(): When source and destination are not scalars, their dimensionality must match. Source dimensionality ({}), destination dimensionality ({})",
            source.ndim(),
            x.ndim()
        )));
    }
    // Unlike index_add/index_select, index_copy takes int64 indices only.
    if index.dtype() != DType::Int64 {
        return Err(Error::runtime(format!("index_copy_(): Expected a long tensor for index, but got {}", pretty(index.dtype()))));
    }
    if source.dtype() != x.dtype() {
        return Err(Error::runtime(format!(
            "index_copy_(): self and source expected to have the same dtype, but got (self) {} and (source) {}",
            pretty(x.dtype()),
            pretty(source.dtype())
        )));
    }
    // A 0-d side's slice is its whole (empty) shape; the caller compares the rest.
    let slice = |t: &Tensor| if t.ndim() == 0 { Vec::new() } else { drop_dim(t.shape(), d) };
    if (x.ndim() == 0 || source.ndim() == 0) && slice(x) != slice(source) {
        return Err(Error::runtime(format!(
            "index_copy_(): Source/destination tensor must have same slice shapes. Destination slice shape: {} at dimension {d} and source slice shape: {} at dimension 0.",
            fmt_shape(&slice(x)),
            fmt_shape(&slice(source))
        )));
    }
    Ok(())
}

fn check_index_vector(op: &str, index: &Tensor) -> Result<()> {
    if !matches!(index.dtype(), DType::Int64 | DType::Int32) {
        return Err(Error::index(format!("{op}(): Expected dtype int32/int64 for index")));
    }
    if index.ndim() > 1 {
        return Err(Error::index(format!("{op}(): Index is supposed to be a vector")));
    }
    Ok(())
}

fn parse_legacy_reduce(s: &str) -> Result<Reduce> {
    match s {
        "add" => Ok(Reduce::Add),
        "multiply" => Ok(Reduce::Mul),
        _ => Err(Error::runtime(format!("reduce argument must be either add or multiply. Got {s}"))),
    }
}

/// The value a reduction starts from when `include_self=False`.
fn identity(r: ScatterReduce, dt: DType) -> Scalar {
    let float = dt.is_floating_point();
    match r {
        ScatterReduce::Sum | ScatterReduce::Mean => Scalar::Int(0),
        ScatterReduce::Prod => Scalar::Int(1),
        ScatterReduce::Amax if float => Scalar::Float(f64::NEG_INFINITY),
        ScatterReduce::Amin if float => Scalar::Float(f64::INFINITY),
        ScatterReduce::Amax => Scalar::Int(int_range(dt).0),
        ScatterReduce::Amin => Scalar::Int(int_range(dt).1),
    }
}

fn int_range(dt: DType) -> (i64, i64) {
    match dt {
        DType::Bool => (0, 1),
        DType::UInt8 => (0, u8::MAX as i64),
        DType::Int8 => (i8::MIN as i64, i8::MAX as i64),
        DType::Int16 => (i16::MIN as i64, i16::MAX as i64),
        DType::Int32 => (i32::MIN as i64, i32::MAX as i64),
        _ => (i64::MIN, i64::MAX),
    }
}

/// 1 where no index of `index` lands (along `dim`), else 0, in dtype `dt`.
fn untouched(like: &Tensor, dim: i64, index: &Tensor, dt: DType) -> Result<Tensor> {
    let t = Tensor::ones(like.shape(), dt, like.device())?;
    t.scatter_raw_(dim, index, Operand::S(Scalar::Int(0)), Reduce::Assign)?;
    Ok(t)
}

fn has_zero(t: &Tensor) -> Result<bool> {
    let z = binary(Operand::T(t), Operand::S(Scalar::Int(0)), BinaryOp::Eq)?;
    Ok(count_nonzero_raw(&z)? > 0)
}

