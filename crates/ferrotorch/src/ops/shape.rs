//! Shape ops that copy: `cat`/`stack`/`hstack`/`vstack`, `flip`, `roll`,
//! `rot90`, `repeat`/`tile`, `repeat_interleave`, `tril`/`triu`, `narrow_copy`;
//! and the ones that only build views: `meshgrid`, `broadcast_tensors`, `movedim`.
//!
//! Ops linear in their input compute under no-grad and record one node whose
//! rule is the adjoint map applied to the gradient (flip ↔ flip, roll ↔ roll
//! back, repeat ↔ sum over the copies), so `grad_fn` names match PyTorch.

use crate::autograd::{record, rule, GradModeGuard};
use crate::ops::arith_grad::g0;
use crate::ops::indexing::where_;
use crate::ops::arith::Operand;
use crate::Tensor;
use ferrotorch_core::error::{wrap_dim, wrap_dim_no_scalar, wrap_dims};
use ferrotorch_core::layout::{broadcast_shapes, fmt_shape};
use ferrotorch_core::{DType, Error, Layout, Result};
use ferrotorch_core::Dst;

fn i64s(s: &[usize]) -> Vec<i64> {
    s.iter().map(|&v| v as i64).collect()
}

/// Records `name` for `out = f(x)` with `f` linear; `back` maps the gradient.
fn record_linear(name: &'static str, x: &Tensor, out: &Tensor, back: impl Fn(&Tensor) -> Result<Tensor> + Send + 'static) {
    let dt = x.dtype();
    record(name, &[Some(x)], &[out], move || {
        rule(move |_, g| {
            let Some(g) = g0(g) else { return Ok(vec![None]) };
            let r = back(&g)?;
            Ok(vec![Some(if r.dtype() != dt && dt.is_differentiable() { r.to_dtype(dt)? } else { r })])
        })
    });
}

/// A fresh contiguous tensor of `shape` filled from `src` read through `layout`
/// (a layout of `src`'s storage with `shape`'s element count, row-major).
fn copy_through(src: &Tensor, layout: &Layout, shape: &[usize]) -> Result<Tensor> {
    let out = Tensor::empty(shape, src.dtype(), src.device())?;
    let dl = Layout::contiguous(&layout.shape);
    out.backend()?.copy_cast(Dst { base: out.storage().raw_ptr(), layout: &dl }, out.dtype(), src.operand_as(layout)?.src(), src.dtype())?;
    Ok(out)
}

impl Tensor {
    /// `torch.cat(tensors, dim)` with type promotion (records `CatBackward0`).
    /// 1-d empty tensors are skipped, as PyTorch's legacy rule does.
    pub fn cat(tensors: &[Tensor], dim: i64) -> Result<Tensor> {
        if tensors.is_empty() {
            return Err(Error::value("torch.cat(): expected a non-empty list of Tensors"));
        }
        for (i, t) in tensors.iter().enumerate() {
            if t.ndim() == 0 {
                return Err(Error::runtime(format!("zero-dimensional tensor (at position {i}) cannot be concatenated")));
            }
        }
        let skip = |t: &Tensor| t.ndim() == 1 && t.numel() == 0;
        let reference = tensors.iter().find(|t| !skip(t)).unwrap_or(&tensors[0]);
        // PyTorch wraps `dim` against the first tensor it does not skip; with
        // only legacy empties there is none and `dim` goes unchecked.
        let d = if tensors.iter().all(skip) { 0 } else { wrap_dim(dim, reference.ndim())? };
        for (i, t) in tensors.iter().enumerate() {
            if skip(t) && !t.same(reference) {
                continue;
            }
            if t.ndim() != reference.ndim() {
                return Err(Error::runtime(format!(
                    "Tensors must have same number of dimensions: got {} and {}",
                    reference.ndim(),
                    t.ndim()
                )));
            }
            for k in 0..t.ndim() {
                if k != d && t.shape()[k] != reference.shape()[k] {
                    return Err(Error::runtime(format!(
                        "Sizes of tensors must match except in dimension {d}. Expected size {} but got size {} for tensor number {i} in the list.",
                        reference.shape()[k],
                        t.shape()[k]
                    )));
                }
            }
        }
        let dtype = tensors.iter().map(|t| t.dtype()).reduce(DType::promote).unwrap_or(DType::Float32);
        let parts: Vec<(usize, usize)> = tensors.iter().map(|t| if skip(t) && !t.same(reference) { (0, 0) } else { (1, t.shape()[d]) }).collect();
        let out = {
            let _g = GradModeGuard::new(false);
            let mut shape = reference.shape().to_vec();
            shape[d] = parts.iter().map(|p| p.1).sum();
            let out = Tensor::empty(&shape, dtype, reference.device())?;
            let mut off = 0;
            for (t, &(used, len)) in tensors.iter().zip(&parts) {
                if used == 1 && len > 0 {
                    out.narrow(d as i64, off as i64, len as i64)?.copy_(t)?;
                }
                off += len;
            }
            out
        };
        let meta: Vec<(usize, usize, DType, bool)> = {
            let mut off = 0;
            tensors
                .iter()
                .zip(&parts)
                .map(|(t, &(used, len))| {
                    let m = (off, len, t.dtype(), used == 1);
                    off += len;
                    m
                })
                .collect()
        };
        let inputs: Vec<Option<&Tensor>> = tensors.iter().map(Some).collect();
        record("CatBackward0", &inputs, &[&out], move || {
            rule(move |_, g| {
                let Some(g) = g0(g) else { return Ok(vec![None; meta.len()]) };
                meta.iter()
                    .map(|&(off, len, dt, used)| {
                        if !dt.is_floating_point() {
                            return Ok(None);
                        }
                        if !used {
                            // A skipped legacy empty (0,) input still gets a
                            // gradient: an empty one, as PyTorch's backward gives.
                            return Ok(Some(Tensor::zeros(&[0], dt, g.device())?));
                        }
                        let p = g.narrow(d as i64, off as i64, len as i64)?;
                        Ok(Some(if p.dtype() != dt { p.to_dtype(dt)? } else { p }))
                    })
                    .collect()
            })
        });
        Ok(out)
    }

    /// `torch.stack(tensors, dim)`: all shapes equal, joined along a new dim.
    pub fn stack(tensors: &[Tensor], dim: i64) -> Result<Tensor> {
        if tensors.is_empty() {
            return Err(Error::runtime("stack expects a non-empty TensorList"));
        }
        for (i, t) in tensors.iter().enumerate().skip(1) {
            if t.shape() != tensors[0].shape() {
                return Err(Error::runtime(format!(
                    "stack expects each tensor to be equal size, but got {} at entry 0 and {} at entry {i}",
                    fmt_shape(tensors[0].shape()),
                    fmt_shape(t.shape())
                )));
            }
        }
        let d = wrap_dim(dim, tensors[0].ndim() + 1)?;
        let out = {
            let _g = GradModeGuard::new(false);
            let us: Vec<Tensor> = tensors.iter().map(|t| t.unsqueeze(d as i64)).collect::<Result<_>>()?;
            Tensor::cat(&us, d as i64)?
        };
        let dts: Vec<DType> = tensors.iter().map(|t| t.dtype()).collect();
        let inputs: Vec<Option<&Tensor>> = tensors.iter().map(Some).collect();
        record("StackBackward0", &inputs, &[&out], move || {
            rule(move |_, g| {
                let Some(g) = g0(g) else { return Ok(vec![None; dts.len()]) };
                dts.iter()
                    .enumerate()
                    .map(|(i, &dt)| {
                        if !dt.is_floating_point() {
                            return Ok(None);
                        }
                        let p = g.select(d as i64, i as i64)?;
                        Ok(Some(if p.dtype() != dt { p.to_dtype(dt)? } else { p }))
                    })
                    .collect()
            })
        });
        Ok(out)
    }

    /// `torch.hstack`: along dim 0 for 1-d inputs, else dim 1.
    pub fn hstack(tensors: &[Tensor]) -> Result<Tensor> {
        let ts: Vec<Tensor> = tensors.iter().map(|t| if t.ndim() == 0 { t.reshape(&[1]) } else { Ok(t.clone()) }).collect::<Result<_>>()?;
        if ts.is_empty() {
            return Err(Error::runtime("hstack expects a non-empty TensorList"));
        }
        let dim = if ts[0].ndim() == 1 { 0 } else { 1 };
        Tensor::cat(&ts, dim)
    }

    /// `torch.vstack`: inputs made at least 2-d, joined along dim 0.
    pub fn vstack(tensors: &[Tensor]) -> Result<Tensor> {
        if tensors.is_empty() {
            return Err(Error::runtime("vstack expects a non-empty TensorList"));
        }
        let ts: Vec<Tensor> = tensors
            .iter()
            .map(|t| match t.ndim() {
                0 => t.reshape(&[1, 1]),
                1 => t.unsqueeze(0),
                _ => Ok(t.clone()),
            })
            .collect::<Result<_>>()?;
        Tensor::cat(&ts, 0)
    }

    /// `flip(dims)`: a copy read through negative strides (records `FlipBackward0`).
    pub fn flip(&self, dims: &[i64]) -> Result<Tensor> {
        let ds = wrap_dims(dims, self.ndim())?;
        // A 0-d tensor has nothing to reverse (wrap_dim accepts dim 0/-1 for it).
        let out = if self.numel() == 0 || self.ndim() == 0 {
            self.clone_data_raw()?
        } else {
            let mut l = self.layout().clone();
            for &d in &ds {
                l.offset = (l.offset as isize + (l.shape[d] as isize - 1) * l.strides[d]) as usize;
                l.strides[d] = -l.strides[d];
            }
            copy_through(self, &l, self.shape())?
        };
        let dims = dims.to_vec();
        record_linear("FlipBackward0", self, &out, move |g| g.flip(&dims));
        Ok(out)
    }

    fn clone_data_raw(&self) -> Result<Tensor> {
        let _g = GradModeGuard::new(false);
        self.clone_data()
    }

    /// `roll(shifts, dims)`; with no dims the flattened tensor rolls (records `RollBackward0`).
    pub fn roll(&self, shifts: &[i64], dims: &[i64]) -> Result<Tensor> {
        if dims.is_empty() && shifts.len() != 1 {
            return Err(Error::runtime(format!("`shifts` required to be of size 1 when `dims` is empty, but got {}", shifts.len())));
        }
        if !dims.is_empty() && shifts.len() != dims.len() {
            return Err(Error::runtime(format!("shifts and dimensions must align. shifts: {}, dims:{}", shifts.len(), dims.len())));
        }
        // Rolling along a named dim needs a real one (a 0-d tensor has none).
        // PyTorch returns a copy of an empty tensor before looking at the dims.
        if self.numel() > 0 {
            for &d in dims {
                wrap_dim_no_scalar(d, self.ndim())?;
            }
        }
        let out = {
            let _g = GradModeGuard::new(false);
            if self.numel() == 0 {
                self.clone_data()?
            } else if dims.is_empty() {
                let first = [shifts[0]];
                self.reshape(&[-1])?.roll(&first, &[0])?.reshape(&i64s(self.shape()))?
            } else {
                let mut x = self.clone();
                for (&s, &d) in shifts.iter().zip(dims) {
                    let dd = wrap_dim(d, self.ndim())?;
                    let n = x.shape()[dd] as i64;
                    if n == 0 {
                        continue;
                    }
                    let s = s.rem_euclid(n);
                    if s != 0 {
                        x = Tensor::cat(&[x.narrow(dd as i64, n - s, s)?, x.narrow(dd as i64, 0, n - s)?], dd as i64)?;
                    }
                }
                if x.same(self) { self.clone_data()? } else { x }
            }
        };
        let neg: Vec<i64> = shifts.iter().map(|s| -s).collect();
        let dims = dims.to_vec();
        record_linear("RollBackward0", self, &out, move |g| g.roll(&neg, &dims));
        Ok(out)
    }

    /// `rot90(k, dims)`, composed of `flip` and `transpose` as in PyTorch.
    pub fn rot90(&self, k: i64, dims: &[i64]) -> Result<Tensor> {
        if dims.len() != 2 {
            return Err(Error::runtime(format!("expected total rotation dims == 2, but got dims = {}", dims.len())));
        }
        if self.ndim() < 2 {
            return Err(Error::runtime(format!("expected total dims >= 2, but got total dims = {}", self.ndim())));
        }
        let (d0, d1) = (wrap_dim(dims[0], self.ndim())? as i64, wrap_dim(dims[1], self.ndim())? as i64);
        if d0 == d1 {
            return Err(Error::runtime(format!("expected rotation dims to be different, but got dim0 = {d0} and dim1 = {d1}")));
        }
        match k.rem_euclid(4) {
            1 => self.flip(&[d1])?.transpose(d0, d1),
            2 => self.flip(&[d0, d1]),
            3 => self.flip(&[d0])?.transpose(d0, d1),
            _ => self.clone_data(),
        }
    }

    /// `repeat(*sizes)`: tiles the tensor (records `RepeatBackward0`).
    pub fn repeat(&self, repeats: &[i64]) -> Result<Tensor> {
        if repeats.len() < self.ndim() {
            return Err(Error::runtime(
                "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor",
            ));
        }
        if repeats.iter().any(|&r| r < 0) {
            return Err(Error::runtime(format!(
                "Trying to create tensor with negative dimension {}: {:?}",
                repeats.iter().find(|&&r| r < 0).copied().unwrap_or(-1),
                repeats
            ).replace(' ', " ")));
        }
        let pad = repeats.len() - self.ndim();
        // Interleave (repeat, size) pairs: the copy dims have stride 0.
        let (mut ishape, mut istrides, mut fshape) = (Vec::new(), Vec::new(), Vec::new());
        for (i, &r) in repeats.iter().enumerate() {
            let (s, st) = if i < pad { (1, 0) } else { (self.shape()[i - pad], self.strides()[i - pad]) };
            ishape.extend([r as usize, s]);
            istrides.extend([0isize, st]);
            fshape.push(r as usize * s);
        }
        let l = Layout { shape: ishape.clone().into(), strides: istrides.into(), offset: self.storage_offset() };
        let out = copy_through(self, &l, &fshape)?;
        let xshape = i64s(self.shape());
        let sum_dims: Vec<i64> = (0..repeats.len()).map(|i| 2 * i as i64).collect();
        let ishape = i64s(&ishape);
        record_linear("RepeatBackward0", self, &out, move |g| g.reshape(&ishape)?.sum_dims(Some(&sum_dims), false, None)?.reshape(&xshape));
        Ok(out)
    }

    /// `tile(dims)`: `repeat` with the reps padded by leading ones.
    pub fn tile(&self, reps: &[i64]) -> Result<Tensor> {
        let mut r = vec![1i64; self.ndim().saturating_sub(reps.len())];
        r.extend_from_slice(reps);
        self.repeat(&r)
    }

    /// `repeat_interleave(repeats, dim)`: each slice repeated in place, via
    /// `index_select` (so the gradient is its `index_add`).
    pub fn repeat_interleave(&self, repeats: &Tensor, dim: Option<i64>, output_size: Option<i64>) -> Result<Tensor> {
        let (x, d) = match dim {
            None => (self.reshape(&[-1])?, 0usize),
            // Repeating along a named dim needs a real one (a 0-d tensor has none).
            Some(d) => (self.clone(), wrap_dim_no_scalar(d, self.ndim())?),
        };
        let n = x.shape()[d];
        if repeats.ndim() > 1 {
            return Err(Error::runtime("repeat_interleave only accept 1D vector as repeat"));
        }
        if repeats.dtype().is_floating_point() || repeats.dtype() == DType::Bool {
            return Err(Error::runtime("repeats has to be Long or Int tensor"));
        }
        let reps = repeats.to_dtype(DType::Int64)?.to_vec::<i64>()?;
        let reps = if reps.len() == 1 && repeats.ndim() <= 1 { vec![reps[0]; n] } else { reps };
        if reps.len() != n {
            return Err(Error::runtime(format!(
                "repeats must have the same size as input along dim, but got repeats.size(0) = {} and input.size({d}) = {n}",
                reps.len()
            )));
        }
        let index = Tensor::repeat_interleave_index(&reps, output_size)?;
        x.index_select(d as i64, &index)
    }

    /// `torch.repeat_interleave(repeats)`: `i` repeated `repeats[i]` times.
    pub fn repeat_interleave_index(reps: &[i64], output_size: Option<i64>) -> Result<Tensor> {
        if reps.iter().any(|&r| r < 0) {
            return Err(Error::runtime("repeats can not be negative"));
        }
        let idx: Vec<i64> = reps.iter().enumerate().flat_map(|(i, &r)| std::iter::repeat_n(i as i64, r as usize)).collect();
        if let Some(o) = output_size {
            if o as usize != idx.len() {
                return Err(Error::runtime("allocated size does not match required size"));
            }
        }
        let n = idx.len();
        Tensor::from_vec(idx, &[n])
    }

    fn triangle(&self, k: i64, lower: bool) -> Result<Tensor> {
        let name = if lower { "tril" } else { "triu" };
        if self.ndim() < 2 {
            return Err(Error::runtime(format!("{name}: input tensor must have at least 2 dimensions")));
        }
        let (r, c) = (self.shape()[self.ndim() - 2], self.shape()[self.ndim() - 1]);
        let out = {
            let _g = GradModeGuard::new(false);
            let keep: Vec<bool> = (0..r * c)
                .map(|p| {
                    let diff = (p % c) as i64 - (p / c) as i64;
                    if lower { diff <= k } else { diff >= k }
                })
                .collect();
            let mask = Tensor::from_vec(keep, &[r, c])?;
            let zero = Tensor::zeros(&[], self.dtype(), self.device())?;
            where_(&mask, Operand::T(self), Operand::T(&zero))?
        };
        let nm = if lower { "TrilBackward0" } else { "TriuBackward0" };
        record_linear(nm, self, &out, move |g| g.triangle(k, lower));
        Ok(out)
    }

    /// `tril(diagonal)`: zeros above the `diagonal`-th diagonal.
    pub fn tril(&self, diagonal: i64) -> Result<Tensor> {
        self.triangle(diagonal, true)
    }

    /// `triu(diagonal)`: zeros below the `diagonal`-th diagonal.
    pub fn triu(&self, diagonal: i64) -> Result<Tensor> {
        self.triangle(diagonal, false)
    }

    /// `torch.meshgrid(*tensors, indexing)`: expanded views (`xy` swaps the first two dims).
    pub fn meshgrid(tensors: &[Tensor], xy: bool) -> Result<Vec<Tensor>> {
        for t in tensors {
            if t.ndim() > 1 {
                return Err(Error::runtime(format!("torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: {:?}", t)));
            }
            if t.dtype() != tensors[0].dtype() {
                return Err(Error::runtime("torch.meshgrid: Expected all tensors in the tensor list to have the same dtype"));
            }
        }
        let n = tensors.len();
        let swap = xy && n >= 2;
        let pos = |i: usize| if swap && i < 2 { 1 - i } else { i };
        let mut shape = vec![0i64; n];
        for (i, t) in tensors.iter().enumerate() {
            shape[pos(i)] = t.numel() as i64;
        }
        tensors
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let mut v = vec![1i64; n];
                v[pos(i)] = -1;
                t.reshape(&v)?.expand(&shape)
            })
            .collect()
    }

    /// `torch.broadcast_tensors(*tensors)`: expanded views to the common shape.
    pub fn broadcast_tensors(tensors: &[Tensor]) -> Result<Vec<Tensor>> {
        let mut shape: Vec<usize> = Vec::new();
        for t in tensors {
            shape = broadcast_shapes(&shape, t.shape())?.to_vec();
        }
        let s = i64s(&shape);
        tensors.iter().map(|t| t.expand(&s)).collect()
    }

    /// `movedim(source, destination)`: a permutation view.
    pub fn movedim(&self, source: &[i64], destination: &[i64]) -> Result<Tensor> {
        if source.len() != destination.len() {
            return Err(Error::runtime(format!(
                "movedim: Invalid source or destination dims: source ({:?} dims) should contain the same number of dims as destination ({:?} dims)",
                source, destination
            )));
        }
        let n = self.ndim();
        // PyTorch wraps both lists (IndexError when out of range) before it
        // looks for repeats in either.
        let wrap = |dims: &[i64]| dims.iter().map(|&d| wrap_dim(d, n.max(1))).collect::<Result<Vec<usize>>>();
        let (src, dst) = (wrap(source)?, wrap(destination)?);
        let repeats = |v: &[usize]| v.iter().enumerate().any(|(i, d)| v[..i].contains(d));
        if repeats(&src) {
            return Err(Error::runtime(format!("movedim: repeated dim in `source` ({source:?})")));
        }
        if repeats(&dst) {
            return Err(Error::runtime(format!("movedim: repeated dim in `destination` ({destination:?})")));
        }
        if n == 0 {
            return Ok(self.clone());
        }
        let mut perm: Vec<Option<usize>> = vec![None; n];
        for (&s, &d) in src.iter().zip(&dst) {
            perm[d] = Some(s);
        }
        let mut rest = (0..n).filter(|d| !src.contains(d));
        let perm: Vec<i64> = perm.into_iter().map(|p| p.or_else(|| rest.next()).unwrap_or(0) as i64).collect();
        self.permute(&perm)
    }

    /// `narrow_copy(dim, start, length)`: a contiguous copy of the narrowed view.
    pub fn narrow_copy(&self, dim: i64, start: i64, length: i64) -> Result<Tensor> {
        self.narrow(dim, start, length)?.clone_data()
    }
}
