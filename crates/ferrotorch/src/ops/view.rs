//! View ops: new metadata over the same storage, never a copy (except
//! `reshape`/`flatten` when PyTorch would copy too).

use super::arith_grad::g0;
use crate::autograd::{record, rule};
use crate::Tensor;
use ferrotorch_core::error::{wrap_dim, wrap_dim_no_scalar};
use ferrotorch_core::layout::{fmt_shape, infer_size};
use ferrotorch_core::{DType, DeviceType, Error, Layout, Result};

impl Tensor {
    /// Makes a view and records `name` with a rule mapping the view's gradient
    /// back to this tensor's shape.
    fn view_with_grad(
        &self,
        layout: Layout,
        name: &'static str,
        back: impl Fn(&Tensor) -> Result<Tensor> + Send + 'static,
    ) -> Result<Tensor> {
        self.view_with_lazy_grad(layout, name, move || back)
    }

    /// [`view_with_grad`](Self::view_with_grad) building the rule (and what
    /// it captures: shapes, relative layouts) only when autograd records,
    /// so a view of a tensor that needs no gradient allocates nothing more.
    fn view_with_lazy_grad<B>(&self, layout: Layout, name: &'static str, back: impl FnOnce() -> B) -> Result<Tensor>
    where
        B: Fn(&Tensor) -> Result<Tensor> + Send + 'static,
    {
        let out = self.make_view(layout)?;
        record(name, &[Some(self)], &[&out], move || {
            let back = back();
            rule(move |_, g| Ok(vec![g0(g).map(|g| back(&g)).transpose()?]))
        });
        Ok(out)
    }

    /// A view whose gradient scatters back through the same view of a zero
    /// tensor shaped like this one (`select`, `slice`, `diagonal`, `unfold`, ...).
    fn scatter_view(&self, layout: Layout, name: &'static str, rel: impl Fn(&Layout) -> Result<Layout>) -> Result<Tensor> {
        let shape = self.shape();
        let out = self.make_view(layout)?;
        record(name, &[Some(self)], &[&out], || {
            // The same view of a contiguous tensor of this shape cannot fail
            // where the view itself did not; were it to, backward reports it.
            let (shape, rel) = (shape.to_vec(), rel(&Layout::contiguous(shape)));
            rule(move |_, g| {
                let rel = rel.as_ref().map_err(Clone::clone)?;
                Ok(vec![g0(g).map(|g| super::view_grad::view_scatter_add(&g, &shape, rel)).transpose()?])
            })
        });
        Ok(out)
    }

    fn shape_i64(&self) -> Vec<i64> {
        self.shape().iter().map(|&v| v as i64).collect()
    }
}

/// The dim `split`/`chunk` cut along: PyTorch checks for a real dim (its own
/// message) before wrapping, so a 0-d tensor is a `RuntimeError`.
fn split_dim(name: &str, x: &Tensor, dim: i64) -> Result<usize> {
    if x.ndim() == 0 {
        return Err(Error::runtime(format!("{name} expects at least a 1-dimensional tensor")));
    }
    wrap_dim(dim, x.ndim())
}

impl Tensor {
    /// `view(dtype)`: the same bytes read as another dtype of the same element
    /// size (no autograd history, as PyTorch's for a dtype change).
    ///
    /// A bool element must be the byte 0 or 1: the kernels read bools as such,
    /// so viewing bytes holding other values as bool is refused with an error
    /// instead of giving wrong results (PyTorch reads them as true).
    ///
    /// ```
    /// use ferrotorch::{DType, Tensor};
    /// let b = Tensor::from_vec(vec![0u8, 1, 1], &[3]).unwrap().view_dtype(DType::Bool).unwrap();
    /// assert_eq!(b.dtype(), DType::Bool);
    /// ```
    pub fn view_dtype(&self, dtype: DType) -> Result<Tensor> {
        if self.is_conj() {
            return Err(Error::runtime(
                "torch.Tensor.view is not supported for conjugate view tensors when converting to a different dtype.",
            ));
        }
        if dtype == self.dtype() {
            return Ok(self.detach());
        }
        if dtype.itemsize() != self.dtype().itemsize() {
            return Err(Error::runtime(format!(
                "view(dtype): viewing a tensor as a dtype with a different element size ({} -> {}) is not supported yet",
                self.dtype(),
                dtype
            )));
        }
        if dtype == DType::Bool && self.device().kind != DeviceType::Meta {
            let bytes = Tensor::from_parts(self.storage().clone(), self.layout().clone(), DType::UInt8)?;
            let not_bool = bytes.gt_scalar_count(1)?;
            if not_bool > 0 {
                return Err(Error::runtime(format!(
                    "view(torch.bool): {not_bool} of the {} elements of this {} tensor are bytes other than 0 and 1, \
                     which ferrotorch cannot read as bool; use `x != 0` (or `x.bool()`) for a boolean copy",
                    self.numel(),
                    self.dtype()
                )));
            }
        }
        Tensor::from_parts(self.storage().clone(), self.layout().clone(), dtype)
    }

    /// How many elements exceed `bound` (a scan through the op layer's own ops).
    fn gt_scalar_count(&self, bound: i64) -> Result<i64> {
        use super::arith::{binary, BinaryOp, Operand};
        let over = binary(Operand::T(self), Operand::S(ferrotorch_core::Scalar::Int(bound)), BinaryOp::Gt)?;
        Ok(over.sum_dims(None, false, Some(DType::Int64))?.item()?.to_f64() as i64)
    }

    /// `view(*shape)`.
    pub fn view(&self, shape: &[i64]) -> Result<Tensor> {
        self.view_with_lazy_grad(self.layout().view(shape)?, "ViewBackward0", || {
            let back = self.shape_i64();
            move |g: &Tensor| g.reshape(&back)
        })
    }

    /// `reshape(*shape)`: a view when the strides allow it, otherwise a copy.
    pub fn reshape(&self, shape: &[i64]) -> Result<Tensor> {
        let sizes = infer_size(shape, self.numel())?;
        match self.layout().view_strides(&sizes) {
            Some(strides) => {
                let l = Layout { shape: sizes, strides, offset: self.storage_offset() };
                self.view_with_lazy_grad(l, "ViewBackward0", || {
                    let back = self.shape_i64();
                    move |g: &Tensor| g.reshape(&back)
                })
            }
            // PyTorch's `_unsafe_view(clone(contiguous_format))`: the copy is
            // not a view, so it has no `_base` and its own version counter.
            None => {
                let c = self.clone_data()?;
                let out = Tensor::from_parts(c.storage().clone(), Layout::contiguous(&sizes), c.dtype())?;
                let back = c.shape_i64();
                record("UnsafeViewBackward0", &[Some(&c)], &[&out], move || {
                    rule(move |_, g| Ok(vec![g0(g).map(|g| g.reshape(&back)).transpose()?]))
                });
                Ok(out)
            }
        }
    }

    /// PyTorch's `_unsafe_view`: `self`'s storage seen with `shape`, recorded
    /// as `UnsafeViewBackward0` and not as a view (no `_base`, its own version
    /// counter). Only for fresh results no one else holds (matmul's products),
    /// whose layout can take `shape` without a copy.
    pub(crate) fn unsafe_view(&self, shape: &[i64]) -> Result<Tensor> {
        let sizes = infer_size(shape, self.numel())?;
        let strides = self
            .layout()
            .view_strides(&sizes)
            .ok_or_else(|| Error::runtime(format!("_unsafe_view: cannot view {} as {}", fmt_shape(self.shape()), fmt_shape(&sizes))))?;
        let l = Layout { shape: sizes, strides, offset: self.storage_offset() };
        let out = Tensor::from_parts(self.storage().clone(), l, self.dtype())?;
        let back = self.shape_i64();
        record("UnsafeViewBackward0", &[Some(self)], &[&out], move || {
            rule(move |_, g| Ok(vec![g0(g).map(|g| g.reshape(&back)).transpose()?]))
        });
        Ok(out)
    }

    /// `flatten(start_dim, end_dim)`.
    pub fn flatten(&self, start: i64, end: i64) -> Result<Tensor> {
        let s = wrap_dim(start, self.ndim())?;
        let e = wrap_dim(end, self.ndim())?;
        if self.ndim() == 0 {
            return self.reshape(&[1]);
        }
        if s > e {
            return Err(Error::runtime("flatten() has invalid args: start_dim cannot come after end_dim"));
        }
        if s == e {
            return Ok(self.clone());
        }
        let mut shape: Vec<i64> = self.shape()[..s].iter().map(|&v| v as i64).collect();
        shape.push(self.shape()[s..=e].iter().product::<usize>() as i64);
        shape.extend(self.shape()[e + 1..].iter().map(|&v| v as i64));
        self.reshape(&shape)
    }

    /// `unflatten(dim, sizes)`.
    pub fn unflatten(&self, dim: i64, sizes: &[i64]) -> Result<Tensor> {
        if sizes.is_empty() {
            return Err(Error::runtime("unflatten: sizes must be non-empty"));
        }
        let d = wrap_dim(dim, self.ndim())?;
        // PyTorch reads `size(d)` inside a try block that rewraps its error.
        wrap_dim_no_scalar(d as i64, self.ndim())
            .map_err(|e| Error::runtime(format!("unflatten got an unexpected error:\n{}", e.msg)))?;
        let inner = infer_size(sizes, self.shape()[d]).map_err(|_| {
            Error::runtime(format!(
                "unflatten: Provided sizes {:?} don't multiply up to the size of dim {} ({}) in the input tensor",
                sizes, dim, self.shape()[d]
            ).replace('[', "[").replace(']', "]"))
        })?;
        let mut shape: Vec<i64> = self.shape()[..d].iter().map(|&v| v as i64).collect();
        shape.extend(inner.iter().map(|&v| v as i64));
        shape.extend(self.shape()[d + 1..].iter().map(|&v| v as i64));
        self.view(&shape)
    }

    /// `transpose(dim0, dim1)`.
    pub fn transpose(&self, d0: i64, d1: i64) -> Result<Tensor> {
        self.view_with_grad(self.layout().transpose(d0, d1)?, "TransposeBackward0", move |g| g.transpose(d0, d1))
    }

    /// `t()`: only for tensors of at most 2 dims.
    pub fn t(&self) -> Result<Tensor> {
        if self.ndim() > 2 {
            return Err(Error::runtime(format!(
                "t() expects a tensor with <= 2 dimensions, but self is {}D",
                self.ndim()
            )));
        }
        let l = if self.ndim() < 2 { self.layout().clone() } else { self.layout().transpose(0, 1)? };
        self.view_with_grad(l, "TBackward0", |g| g.t())
    }

    /// `mT`: transpose of the last two dims.
    pub fn mt(&self) -> Result<Tensor> {
        if self.ndim() < 2 {
            return Err(Error::runtime(format!(
                "tensor.mT is only supported on matrices or batches of matrices. Got {}-D tensor.",
                self.ndim()
            )));
        }
        self.transpose(-2, -1)
    }

    /// `permute(*dims)`.
    pub fn permute(&self, dims: &[i64]) -> Result<Tensor> {
        let l = self.layout().permute(dims)?;
        let n = self.ndim();
        let mut inv = vec![0i64; n];
        for (i, &d) in dims.iter().enumerate() {
            inv[wrap_dim(d, n)?] = i as i64;
        }
        self.view_with_grad(l, "PermuteBackward0", move |g| g.permute(&inv))
    }

    /// `expand(*sizes)`.
    pub fn expand(&self, sizes: &[i64]) -> Result<Tensor> {
        let shape = self.shape().to_vec();
        self.view_with_grad(self.layout().expand(sizes)?, "ExpandBackward0", move |g| g.sum_to(&shape))
    }

    /// `squeeze()` / `squeeze(dims)`.
    pub fn squeeze(&self, dims: Option<&[i64]>) -> Result<Tensor> {
        let name = match dims {
            None => "SqueezeBackward0",
            Some([_]) => "SqueezeBackward1",
            Some(_) => "SqueezeBackward2",
        };
        self.view_with_lazy_grad(self.layout().squeeze(dims)?, name, || {
            let back = self.shape_i64();
            move |g: &Tensor| g.reshape(&back)
        })
    }

    /// `unsqueeze(dim)`.
    pub fn unsqueeze(&self, dim: i64) -> Result<Tensor> {
        self.view_with_lazy_grad(self.layout().unsqueeze(dim)?, "UnsqueezeBackward0", || {
            let back = self.shape_i64();
            move |g: &Tensor| g.reshape(&back)
        })
    }

    /// `narrow(dim, start, length)`.
    pub fn narrow(&self, dim: i64, start: i64, length: i64) -> Result<Tensor> {
        let l = self.layout().narrow(dim, start, length)?;
        self.scatter_view(l, "SliceBackward0", |c| c.narrow(dim, start, length))
    }

    /// `select(dim, index)`.
    pub fn select(&self, dim: i64, index: i64) -> Result<Tensor> {
        let l = self.layout().select(dim, index)?;
        self.scatter_view(l, "SelectBackward0", |c| c.select(dim, index))
    }

    /// Python slicing along one dim.
    pub fn slice(&self, dim: i64, start: i64, end: i64, step: i64) -> Result<Tensor> {
        let l = self.layout().slice(dim, start, end, step)?;
        self.scatter_view(l, "SliceBackward0", |c| c.slice(dim, start, end, step))
    }

    /// `diagonal(offset, dim1, dim2)`.
    pub fn diagonal(&self, offset: i64, dim1: i64, dim2: i64) -> Result<Tensor> {
        let l = self.layout().diagonal(offset, dim1, dim2)?;
        self.scatter_view(l, "DiagonalBackward0", |c| c.diagonal(offset, dim1, dim2))
    }

    /// `unfold(dimension, size, step)`.
    pub fn unfold(&self, dim: i64, size: i64, step: i64) -> Result<Tensor> {
        let l = self.layout().unfold(dim, size, step)?;
        self.scatter_view(l, "UnfoldBackward0", |c| c.unfold(dim, size, step))
    }

    /// `as_strided(size, stride, storage_offset)`.
    pub fn as_strided(&self, sizes: &[i64], strides: &[i64], offset: Option<i64>) -> Result<Tensor> {
        let layout = Layout::as_strided(sizes, strides, offset.unwrap_or(self.storage_offset() as i64))?;
        // The gradient maps back through the same geometry, taken relative to
        // this tensor when it is a dense block of its storage.
        let base = self.storage_offset();
        let dense = self.is_contiguous();
        let rel = Layout { offset: layout.offset.saturating_sub(base), ..layout.clone() };
        if !dense && crate::autograd::needs_grad(&[self]) {
            return Err(Error::not_implemented(
                "as_strided backward on a non-contiguous input is not implemented yet; call .contiguous() first",
            ));
        }
        let shape = self.shape().to_vec();
        self.view_with_grad(layout, "AsStridedBackward0", move |g| super::view_grad::as_strided_scatter_add(g, &shape, &rel))
    }

    /// Records the one node PyTorch gives all outputs of `unbind`/`split`/
    /// `chunk` (`name`): its backward joins the outputs' gradients back along
    /// `d` (`stack` for unbind, `cat` for the splits), with zeros for the
    /// outputs that got none, instead of one full-size scatter per output.
    fn record_pieces(&self, name: &'static str, outs: &[Tensor], d: usize, stack: bool) {
        let refs: Vec<&Tensor> = outs.iter().collect();
        let shapes: Vec<Vec<usize>> = outs.iter().map(|o| o.shape().to_vec()).collect();
        let (dt, dev) = (self.dtype(), self.device());
        record(name, &[Some(self)], &refs, move || {
            rule(move |_, grads| {
                if grads.iter().all(Option::is_none) {
                    return Ok(vec![None]);
                }
                let parts = grads
                    .into_iter()
                    .zip(&shapes)
                    .map(|(g, s)| match g {
                        Some(g) => Ok(g),
                        None => Tensor::zeros(s, dt, dev),
                    })
                    .collect::<Result<Vec<_>>>()?;
                Ok(vec![Some(if stack { Tensor::stack(&parts, d as i64)? } else { Tensor::cat(&parts, d as i64)? })])
            })
        });
    }

    /// Views of `(start, length)` pieces along `d`, recorded as one `name` node.
    fn split_pieces(&self, name: &'static str, d: usize, pieces: impl Iterator<Item = (i64, i64)>) -> Result<Vec<Tensor>> {
        let outs = pieces
            .map(|(start, len)| self.make_view(self.layout().narrow(d as i64, start, len)?))
            .collect::<Result<Vec<_>>>()?;
        self.record_pieces(name, &outs, d, false);
        Ok(outs)
    }

    /// `unbind(dim)`: views of every index along `dim`, one `UnbindBackward0` node.
    pub fn unbind(&self, dim: i64) -> Result<Vec<Tensor>> {
        let d = wrap_dim(dim, self.ndim())?;
        if self.ndim() == 0 {
            return Err(Error::index("Dimension specified as 0 but tensor has no dimensions"));
        }
        let outs = (0..self.shape()[d] as i64)
            .map(|i| self.make_view(self.layout().select(d as i64, i)?))
            .collect::<Result<Vec<_>>>()?;
        self.record_pieces("UnbindBackward0", &outs, d, true);
        Ok(outs)
    }

    /// `split(split_size, dim)`: equal pieces, the last possibly smaller
    /// (one `SplitBackward0` node).
    pub fn split(&self, size: i64, dim: i64) -> Result<Vec<Tensor>> {
        let d = split_dim("split", self, dim)?;
        if size < 0 {
            return Err(Error::runtime(format!("split expects split_size be non-negative, but got split_size={size}")));
        }
        let len = self.shape()[d] as i64;
        if size == 0 && len != 0 {
            return Err(Error::runtime(format!(
                "split_size can only be 0 if dimension size is 0, but got dimension size of {len}"
            )));
        }
        let n = if size == 0 { 1 } else { ((len + size - 1) / size).max(1) };
        self.split_pieces("SplitBackward0", d, (0..n).map(|i| (i * size, size.min(len - i * size))))
    }

    /// `split(sizes, dim)` with explicit sizes (one `SplitWithSizesBackward0` node).
    pub fn split_with_sizes(&self, sizes: &[i64], dim: i64) -> Result<Vec<Tensor>> {
        let d = split_dim("split", self, dim)?;
        if sizes.iter().any(|&s| s < 0) {
            return Err(Error::runtime(format!(
                "split_with_sizes expects split_sizes have only non-negative entries, but got split_sizes={sizes:?}"
            )));
        }
        let total: i64 = sizes.iter().sum();
        if total != self.shape()[d] as i64 {
            return Err(Error::runtime(format!(
                "split_with_sizes expects split_sizes to sum exactly to {} (input tensor's size at dimension {}), but got split_sizes={:?}",
                self.shape()[d], d, sizes
            )));
        }
        let starts = sizes.iter().scan(0i64, |acc, &s| {
            let st = *acc;
            *acc += s;
            Some((st, s))
        });
        self.split_pieces("SplitWithSizesBackward0", d, starts)
    }

    /// `chunk(chunks, dim)`.
    pub fn chunk(&self, chunks: i64, dim: i64) -> Result<Vec<Tensor>> {
        if chunks <= 0 {
            return Err(Error::runtime("chunk expects `chunks` to be greater than 0, got: ".to_string() + &chunks.to_string()));
        }
        let d = split_dim("chunk", self, dim)?;
        let len = self.shape()[d] as i64;
        let size = (len + chunks - 1) / chunks;
        if size == 0 {
            // Like PyTorch: chunk of an empty dim yields `chunks` empty pieces
            // (split_with_sizes of zeros).
            return self.split_with_sizes(&vec![0; chunks as usize], d as i64);
        }
        self.split(size, d as i64)
    }

    /// `expand_as(other)`.
    pub fn expand_as(&self, other: &Tensor) -> Result<Tensor> {
        let sizes: Vec<i64> = other.shape().iter().map(|&s| s as i64).collect();
        self.expand(&sizes)
    }

    /// Checks that `shape` equals this tensor's shape, for error messages.
    pub fn check_shape(&self, shape: &[usize], what: &str) -> Result<()> {
        if self.shape() != shape {
            return Err(Error::runtime(format!(
                "{what}: expected shape {} but got {}",
                fmt_shape(shape),
                fmt_shape(self.shape())
            )));
        }
        Ok(())
    }
}
