//! `x[items]` and `x[items] = v` with PyTorch's full semantics: basic items
//! (ints, slices, `None`, `...`, bools) become views; tensor items (integer
//! tensors and boolean masks) are advanced indices, broadcast together. When
//! the advanced indices sit next to each other their result dims take their
//! place, otherwise they go first (NumPy's and PyTorch's placement rule).

use super::kernels::{nonzero_raw, read_at, write_at, Access, OutOfRange, Reduce, Term};
use crate::autograd::{apply_inplace_kernel, needs_grad, record, rule, GradModeGuard, OldValue};
use crate::ops::arith_grad::g0;
use crate::Tensor;
use ferrotorch_core::layout::{broadcast_shapes, fmt_shape};
use crate::ops::{broadcast_layout, common_device};
use ferrotorch_core::op::index::IndexBounds;
use ferrotorch_core::{DType, Error, Layout, Result, Src};

/// One entry of an index expression `x[0, 1:3, None, ..., mask, idx]`.
#[derive(Clone)]
pub enum TensorIndex {
    /// An integer: selects, removing the dim.
    Int(i64),
    /// `start:stop:step` (positive step; stop clamps).
    Slice {
        /// First index.
        start: i64,
        /// One past the last index.
        stop: i64,
        /// Step, at least 1.
        step: i64,
    },
    /// `None`: a new dim of size 1.
    NewAxis,
    /// `...`: as many full slices as needed.
    Ellipsis,
    /// `True` adds a dim of size 1, `False` one of size 0.
    Bool(bool),
    /// An integer tensor (advanced index) or a bool/uint8 mask over as many dims as it has.
    Tensor(Tensor),
}

fn is_mask(t: &Tensor) -> bool {
    matches!(t.dtype(), DType::Bool | DType::UInt8)
}

impl Tensor {
    /// Applies the basic items as views and lines up the tensor items with the
    /// view's dims (masks stay unexpanded, one entry covering their dims).
    fn apply_basic(&self, items: &[TensorIndex]) -> Result<(Tensor, Vec<Option<Tensor>>)> {
        let consumed: usize = items
            .iter()
            .map(|i| match i {
                TensorIndex::Int(_) | TensorIndex::Slice { .. } => 1,
                TensorIndex::Tensor(t) if is_mask(t) => t.ndim(),
                TensorIndex::Tensor(_) => 1,
                _ => 0,
            })
            .sum();
        if consumed > 0 && self.ndim() == 0 {
            return Err(Error::index(
                "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` in C++ to convert a 0-dim tensor to a number",
            ));
        }
        if consumed > self.ndim() {
            return Err(Error::index(format!("too many indices for tensor of dimension {}", self.ndim())));
        }
        // PyTorch accepts several ellipses: each skips the dims the other items
        // leave unnamed, so items after a second one land past the last dim
        // (a full slice there is a no-op; anything else is an IndexError).
        let mut r = self.clone();
        let mut idx: Vec<Option<Tensor>> = Vec::new();
        let mut d: usize = 0;
        // Dims of `self` consumed so far: error messages name the original dim.
        let mut orig: usize = 0;
        for item in items {
            if matches!(item, TensorIndex::Int(_) | TensorIndex::Slice { .. } | TensorIndex::Tensor(_)) {
                orig += 1;
            }
            match item {
                TensorIndex::NewAxis => {
                    r = r.unsqueeze(d as i64)?;
                    idx.push(None);
                    d += 1;
                }
                TensorIndex::Bool(b) => {
                    r = r.unsqueeze(d as i64)?;
                    if !b {
                        r = r.slice(d as i64, 0, 0, 1)?;
                    }
                    idx.push(None);
                    d += 1;
                }
                TensorIndex::Int(i) if d >= r.ndim() => {
                    let od = orig - 1;
                    return Err(Error::index(format!("index {i} is out of bounds for dimension {od} with size 0")));
                }
                TensorIndex::Int(i) => {
                    let size = r.shape()[d] as i64;
                    if *i < -size || *i >= size {
                        let od = orig - 1;
                        return Err(Error::index(format!("index {i} is out of bounds for dimension {od} with size {size}")));
                    }
                    r = r.select(d as i64, *i)?;
                }
                &TensorIndex::Slice { start, stop, step } if d >= r.ndim() => {
                    // PyTorch skips a slice it sees as full before checking the
                    // dim, comparing `stop` with a size it reads past the end of
                    // the size list (in practice the last one); any other slice
                    // there fails the dim check.
                    let last = r.shape().last().copied().unwrap_or(0) as i64;
                    if !(start == 0 && step == 1 && stop >= last) {
                        let n = (r.ndim() as i64).max(1);
                        return Err(Error::index(format!(
                            "Dimension out of range (expected to be in range of [{}, {}], but got {d})",
                            -n,
                            n - 1
                        )));
                    }
                    idx.push(None);
                    d += 1;
                }
                &TensorIndex::Slice { start, stop, step } => {
                    // A full slice needs no view (and so keeps in-place writes on `self`).
                    let size = r.shape()[d] as i64;
                    if !(start == 0 && stop >= size && step == 1) {
                        r = r.slice(d as i64, start, stop, step)?;
                    }
                    idx.push(None);
                    d += 1;
                }
                TensorIndex::Ellipsis => {
                    let n = self.ndim() - consumed;
                    idx.extend(std::iter::repeat_n(None, n));
                    d += n;
                    orig += n;
                }
                TensorIndex::Tensor(t) if is_mask(t) && t.ndim() == 0 => {
                    let b = t.item()?.to_bool();
                    r = r.unsqueeze(d as i64)?;
                    if !b {
                        r = r.slice(d as i64, 0, 0, 1)?;
                    }
                    idx.push(None);
                    d += 1;
                }
                TensorIndex::Tensor(_) if d >= r.ndim() => {
                    return Err(Error::index(format!(
                        "too many indices for tensor of dimension {} (got {})",
                        self.ndim(),
                        d + 1
                    )));
                }
                TensorIndex::Tensor(t) => {
                    d += if is_mask(t) { t.ndim() } else { 1 };
                    idx.push(Some(t.clone()));
                }
            }
        }
        // Entries a second ellipsis pushed past the last dim index nothing.
        while idx.len() > r.ndim() && idx.last().is_some_and(Option::is_none) {
            idx.pop();
        }
        Ok((r, idx))
    }

    /// `self[items]`: a view when every item is basic, else a copy (`IndexBackward0`).
    pub fn getitem(&self, items: &[TensorIndex]) -> Result<Tensor> {
        if let [TensorIndex::Int(i)] = items {
            if let Some(&size) = self.shape().first() {
                let size = size as i64;
                if *i < -size || *i >= size {
                    return Err(Error::index(format!("index {i} is out of bounds for dimension 0 with size {size}")));
                }
                return self.select(0, *i);
            }
        }
        let (v, idx) = self.apply_basic(items)?;
        if idx.iter().all(Option::is_none) {
            // A bool index is a one-element mask in PyTorch: advanced, so a copy.
            let has_bool = items.iter().any(|i| match i {
                TensorIndex::Bool(_) => true,
                TensorIndex::Tensor(t) => is_mask(t) && t.ndim() == 0,
                _ => false,
            });
            if has_bool {
                return v.clone_data();
            }
            if v.same(self) {
                // `x[...]`, `x[:]` are still new views in PyTorch.
                let id = self.layout().clone();
                return self.make_view_recorded(id);
            }
            return Ok(v);
        }
        v.index(&idx)
    }

    fn make_view_recorded(&self, layout: Layout) -> Result<Tensor> {
        let out = self.make_view(layout)?;
        record("AliasBackward0", &[Some(self)], &[&out], || rule(|_, g| Ok(vec![g0(g)])));
        Ok(out)
    }

    /// `self[items] = value` in place. Basic items copy into the view
    /// (broadcasting `value`); tensor items write through `index_put_`.
    ///
    /// The value's dtype follows PyTorch's `set_item`: a copy into a basic
    /// view converts it; an advanced write is `index_put_`, which requires the
    /// dtypes to match (see [`Tensor::index_put_`]). A bool item (`True`, a 0-d
    /// bool tensor) is advanced unless it is the only item and a Python bool;
    /// it becomes an integer index there, so it never takes the masked-fill
    /// route. A lone `False` writes nothing.
    pub fn setitem(&self, items: &[TensorIndex], value: &Tensor) -> Result<()> {
        if let [TensorIndex::Bool(false)] = items {
            return Ok(());
        }
        let (v, idx) = self.apply_basic(items)?;
        let value = strip_leading_ones(value)?;
        let bool_index = items.iter().any(|i| match i {
            TensorIndex::Bool(_) => items.len() > 1,
            TensorIndex::Tensor(t) => is_mask(t) && t.ndim() == 0,
            _ => false,
        });
        if idx.iter().all(Option::is_none) {
            if bool_index {
                check_same_dtype(&v, &value)?;
            }
            return v.copy_(&value);
        }
        if bool_index {
            check_same_dtype(&v, &value)?;
        }
        v.index_put_(&idx, &value, false)
    }

    /// `aten::index`: `indices[d]` indexes dim `d` (None = whole dim); bool
    /// masks cover as many dims as they have. Records `IndexBackward0`.
    pub fn index(&self, indices: &[Option<Tensor>]) -> Result<Tensor> {
        let out = {
            let _g = GradModeGuard::new(false);
            let plan = AdvPlan::new(self, indices)?;
            let internal = read_at(self, &plan.acc, &plan.internal_shape)?;
            plan.to_final(&internal)?
        };
        let indices = indices.to_vec();
        let shape = self.shape().to_vec();
        record("IndexBackward0", &[Some(self)], &[&out], move || {
            rule(move |_, g| {
                let Some(g) = g0(g) else { return Ok(vec![None]) };
                let z = Tensor::zeros(&shape, g.dtype(), g.device())?;
                Ok(vec![Some(z.index_put(&indices, &g, true)?)])
            })
        });
        Ok(out)
    }

    /// Out-of-place `index_put(indices, values, accumulate)` (records `IndexPutBackward0`).
    pub fn index_put(&self, indices: &[Option<Tensor>], values: &Tensor, accumulate: bool) -> Result<Tensor> {
        let vals = index_put_values(self, indices, values, accumulate)?;
        let out = {
            let _g = GradModeGuard::new(false);
            let out = self.clone_data()?;
            out.index_put_raw(indices, &vals, accumulate)?;
            out
        };
        record_index_put(self, indices, values, accumulate, &out);
        Ok(out)
    }

    /// `index_put_(indices, values, accumulate)` in place.
    ///
    /// PyTorch runs it on targets whose elements share memory (expanded
    /// views), so it writes the indexed positions only, with or without
    /// autograd.
    pub fn index_put_(&self, indices: &[Option<Tensor>], values: &Tensor, accumulate: bool) -> Result<()> {
        let vals = index_put_values(self, indices, values, accumulate)?;
        if needs_grad(&[self, values]) {
            let compute = |old: &Tensor| old.index_put(indices, values, accumulate);
            return apply_inplace_kernel(self, OldValue::Alias, compute, || self.index_put_raw(indices, &vals, accumulate));
        }
        self.index_put_raw(indices, &vals, accumulate)
    }

    /// `index_put_` without autograd.
    pub fn index_put_raw(&self, indices: &[Option<Tensor>], values: &Tensor, accumulate: bool) -> Result<()> {
        if !accumulate && values.ndim() == 0 && self.mask_fill_raw_(indices, values)? {
            return Ok(());
        }
        let plan = AdvPlan::new(self, indices)?;
        // Plain broadcasting: only `x[idx] = v` drops the value's leading ones
        // first (`setitem` does), `index_put_` itself does not.
        let v = values;
        let fshape = plan.final_shape();
        let ok = broadcast_shapes(v.shape(), &fshape).map(|b| b.as_slice() == fshape.as_slice()).unwrap_or(false);
        if !ok {
            return Err(Error::runtime(format!(
                "shape mismatch: value tensor of shape {} cannot be broadcast to indexing result of shape {}",
                fmt_shape(values.shape()),
                fmt_shape(&fshape)
            )));
        }
        let sizes: Vec<i64> = fshape.iter().map(|&s| s as i64).collect();
        let vb = v.expand(&sizes)?;
        let vi = match &plan.perm {
            Some(p) => {
                let mut inv = vec![0i64; p.len()];
                for (i, &x) in p.iter().enumerate() {
                    inv[x as usize] = i as i64;
                }
                vb.permute(&inv)?
            }
            None => vb,
        };
        let mode = if accumulate { Reduce::Add } else { Reduce::Assign };
        write_at(self, &plan.acc, &vi, mode)
    }

    /// `x[.., mask, ..] = value` for a 0-d value through exactly one bool
    /// mask that matches the dims it covers: the value written where the
    /// mask is true, with no pass over the mask's coordinates first (so it
    /// runs on `meta`, as PyTorch's `masked_fill_` dispatch does). Returns
    /// whether it applied.
    fn mask_fill_raw_(&self, indices: &[Option<Tensor>], value: &Tensor) -> Result<bool> {
        let present: Vec<usize> = (0..indices.len()).filter(|&i| indices[i].is_some()).collect();
        let [d] = present.as_slice() else { return Ok(false) };
        let Some(m) = indices[*d].as_ref().filter(|m| m.dtype() == DType::Bool && m.ndim() > 0) else { return Ok(false) };
        // Dims before the mask are whole-dim entries, so the mask starts at `d`.
        let (d, k) = (*d, m.ndim());
        if d + k > self.ndim() || m.shape() != &self.shape()[d..d + k] {
            return Ok(false); // the general path reports the mismatch
        }
        common_device(&[self, m, value])?;
        let mut lifted = vec![1i64; self.ndim()];
        for (i, &s) in m.shape().iter().enumerate() {
            lifted[d + i] = s as i64;
        }
        let mv = m.reshape(&lifted)?;
        let ml = broadcast_layout(&mv, self.shape())?;
        let v = value.to_dtype(self.dtype())?;
        let mask = Src { base: mv.storage().raw_ptr(), layout: &ml };
        self.backend()?.masked_fill(self.dtype(), self.operand_mut()?.dst(), mask, v.operand()?.src())?;
        self.bump_version();
        Ok(true)
    }
}

/// The values `index_put_` writes, in `x`'s dtype. PyTorch's
/// `canDispatchToMaskedFill`: a one-element value written (not accumulated)
/// through exactly one bool mask (the other entries whole dims) is a
/// `masked_fill_`, which converts the value; every other write requires the
/// dtypes to match.
fn index_put_values(x: &Tensor, indices: &[Option<Tensor>], values: &Tensor, accumulate: bool) -> Result<Tensor> {
    let mut given = indices.iter().flatten();
    let masked_fill = !accumulate
        && values.numel() == 1
        && matches!((given.next(), given.next()), (Some(m), None) if is_mask(m));
    if !masked_fill {
        check_indexed_dims_nonempty(x, indices)?;
        check_same_dtype(x, values)?;
        return Ok(values.clone());
    }
    if let Some(m) = indices.iter().flatten().next() {
        if m.dtype() != DType::Bool {
            return Err(Error::runtime(format!(
                "masked_fill_ only supports boolean masks, but got mask with dtype {}",
                crate::ops::creation::pretty(m.dtype()).to_lowercase()
            )));
        }
    }
    // `masked_fill_(mask, value.item())`: the value's shape plays no part,
    // and the number is converted with masked_fill_'s overflow check.
    // (A meta value has no number to check, as in PyTorch's meta kernel.)
    if !values.device().is_meta() {
        ferrotorch_core::dtype::check_scalar_fits(values.item()?, x.dtype(), 2)?;
    }
    let _g = GradModeGuard::new(false);
    values.reshape(&[])?.to_dtype(x.dtype())
}

/// PyTorch refuses any index into a dim of size 0 (even an empty write would
/// need one) before it compares dtypes.
fn check_indexed_dims_nonempty(x: &Tensor, indices: &[Option<Tensor>]) -> Result<()> {
    let mut d = 0;
    for ix in indices {
        match ix {
            Some(t) if is_mask(t) => d += t.ndim(),
            Some(t) => {
                if x.shape().get(d) == Some(&0) && t.numel() > 0 {
                    return Err(Error::index("index is out of bounds for dimension with size 0"));
                }
                d += 1;
            }
            None => d += 1,
        }
    }
    Ok(())
}

fn check_same_dtype(x: &Tensor, values: &Tensor) -> Result<()> {
    if x.dtype() != values.dtype() {
        return Err(Error::runtime(format!(
            "Index put requires the source and destination dtypes match, got {} for the destination and {} for the source.",
            crate::ops::creation::pretty(x.dtype()),
            crate::ops::creation::pretty(values.dtype())
        )));
    }
    Ok(())
}

/// Drops leading size-1 dims of a value, as PyTorch does before broadcasting
/// it into an indexing result (`x[0] = ones(1, 3)` works for `x` of `[2, 3]`).
fn strip_leading_ones(v: &Tensor) -> Result<Tensor> {
    let lead = v.shape().iter().take_while(|&&s| s == 1).count();
    if lead == 0 {
        return Ok(v.clone());
    }
    let rest: Vec<i64> = v.shape()[lead..].iter().map(|&s| s as i64).collect();
    v.reshape(&rest)
}

fn record_index_put(input: &Tensor, indices: &[Option<Tensor>], values: &Tensor, accumulate: bool, out: &Tensor) {
    let indices = indices.to_vec();
    let (vshape, vdt) = (values.shape().to_vec(), values.dtype());
    let (wi, wv) = (input.requires_grad(), values.requires_grad());
    record("IndexPutBackward0", &[Some(input), Some(values)], &[out], move || {
        rule(move |_, g| {
            let Some(g) = g0(g) else { return Ok(vec![None, None]) };
            let gi = if !wi {
                None
            } else if accumulate {
                Some(g.clone())
            } else {
                let zero = Tensor::zeros(&[], g.dtype(), g.device())?;
                Some(g.index_put(&indices, &zero, false)?)
            };
            let gv = if wv {
                let picked = g.index(&indices)?;
                let stripped: Vec<usize> = vshape.iter().copied().skip_while(|&s| s == 1).collect();
                let r = picked.sum_to(&stripped)?;
                let r = r.reshape(&vshape.iter().map(|&s| s as i64).collect::<Vec<_>>())?;
                Some(if r.dtype() != vdt && vdt.is_floating_point() { r.to_dtype(vdt)? } else { r })
            } else {
                None
            };
            Ok(vec![gi, gv])
        })
    });
}

/// Where the elements picked by a set of advanced indices live: one storage
/// offset per broadcast index position, one relative offset per element of
/// the un-indexed dims, and how to reorder the result into PyTorch's layout.
struct AdvPlan {
    acc: Access,
    /// Result shape with the broadcast index dims first.
    internal_shape: Vec<usize>,
    /// Permutation from the internal order to the final one (None if equal).
    perm: Option<Vec<i64>>,
}

impl AdvPlan {
    fn new(x: &Tensor, indices: &[Option<Tensor>]) -> Result<AdvPlan> {
        let indices = expand_masks(x, indices)?;
        let nd = x.ndim();
        if indices.len() > nd {
            return Err(Error::index(format!("too many indices for tensor of dimension {nd}")));
        }
        let adv: Vec<usize> = (0..indices.len()).filter(|&d| indices[d].is_some()).collect();
        let ts: Vec<&Tensor> = adv.iter().filter_map(|&d| indices[d].as_ref()).collect();
        for t in &ts {
            if !t.dtype().is_integral() {
                return Err(Error::index("tensors used as indices must be long, int, byte or bool tensors"));
            }
        }
        let mut bshape: Vec<usize> = Vec::new();
        for t in &ts {
            bshape = match broadcast_shapes(&bshape, t.shape()) {
                Ok(s) => s.to_vec(),
                Err(_) => {
                    let shapes: Vec<String> = ts.iter().map(|t| fmt_shape(t.shape())).collect();
                    return Err(Error::index(format!(
                        "shape mismatch: indexing tensors could not be broadcast together with shapes {}",
                        shapes.join(", ")
                    )));
                }
            };
        }
        let rest: Vec<usize> = (0..nd).filter(|d| !adv.contains(d)).collect();
        let l = x.layout();
        let pos = Layout { shape: bshape[..].into(), strides: vec![0isize; bshape.len()].into(), offset: l.offset };
        let mut terms = Vec::with_capacity(ts.len());
        for (j, (&d, t)) in adv.iter().zip(&ts).enumerate() {
            let bounds = IndexBounds { size: l.shape[d], negative: true, error: OutOfRange::Dim { dim: j, prefix: "", index_error: true } };
            terms.push(Term::new(t, &bshape, l.strides[d], bounds)?);
        }
        let rest_layout = Layout {
            shape: rest.iter().map(|&d| l.shape[d]).collect(),
            strides: rest.iter().map(|&d| l.strides[d]).collect(),
            offset: 0,
        };
        let mut internal_shape = bshape.clone();
        internal_shape.extend(rest_layout.shape.iter());
        let adjacent = adv.windows(2).all(|w| w[1] == w[0] + 1);
        let p0 = adv.first().copied().unwrap_or(0);
        let perm = if adjacent && p0 > 0 {
            let (nb, nr) = (bshape.len(), rest.len());
            let mut p: Vec<i64> = (nb..nb + p0).map(|v| v as i64).collect();
            p.extend((0..nb).map(|v| v as i64));
            p.extend((nb + p0..nb + nr).map(|v| v as i64));
            Some(p)
        } else {
            None
        };
        Ok(AdvPlan { acc: Access { pos, terms, block: rest_layout }, internal_shape, perm })
    }

    fn final_shape(&self) -> Vec<usize> {
        match &self.perm {
            Some(p) => p.iter().map(|&i| self.internal_shape[i as usize]).collect(),
            None => self.internal_shape.clone(),
        }
    }

    /// The internal-order result moved into PyTorch's order, contiguous.
    fn to_final(&self, internal: &Tensor) -> Result<Tensor> {
        match &self.perm {
            Some(p) => internal.permute(p)?.contiguous(),
            None => Ok(internal.clone()),
        }
    }
}

/// Replaces every bool/uint8 mask by the integer indices of its true
/// elements (one index tensor per mask dim), checking the mask's shape.
fn expand_masks(x: &Tensor, indices: &[Option<Tensor>]) -> Result<Vec<Option<Tensor>>> {
    let mut out = Vec::with_capacity(indices.len());
    let mut d = 0usize;
    for ix in indices {
        match ix {
            Some(m) if is_mask(m) => {
                let k = m.ndim();
                for i in 0..k {
                    if d + i >= x.ndim() || m.shape()[i] != x.shape()[d + i] {
                        return Err(Error::index(format!(
                            "The shape of the mask {} at index {} does not match the shape of the indexed tensor {} at index {}",
                            fmt_shape(m.shape()),
                            i,
                            fmt_shape(x.shape()),
                            d + i
                        )));
                    }
                }
                let nz = nonzero_raw(m)?;
                for i in 0..k {
                    out.push(Some(nz.select(1, i as i64)?));
                }
                d += k;
            }
            other => {
                out.push(other.clone());
                d += 1;
            }
        }
    }
    Ok(out)
}
