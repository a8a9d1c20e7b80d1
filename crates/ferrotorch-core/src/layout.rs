//! Strided layouts: sizes, strides (in elements) and a storage offset.
//!
//! Every view op is pure arithmetic on a [`Layout`]; no data moves here. Error
//! messages follow PyTorch's wording so users can search for them.

use crate::error::{wrap_dim, wrap_dim_no_scalar, wrap_dims, Error, Result};
use smallvec::SmallVec;

/// Sizes of each dimension.
pub type Shape = SmallVec<[usize; 6]>;
/// Strides of each dimension, in elements.
pub type Strides = SmallVec<[isize; 6]>;

/// Where each element of a tensor lives in its storage:
/// `element[i0, i1, ...] = storage[offset + Σ ik * strides[k]]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// Size of each dimension.
    pub shape: Shape,
    /// Distance in elements between neighbours along each dimension.
    pub strides: Strides,
    /// Index of element `[0, 0, ...]` in the storage.
    pub offset: usize,
}

/// The dims of a set of operands in PyTorch's TensorIterator order
/// (`reorder_dimensions`), innermost first: starting from the reversed dims,
/// an insertion sort by stride, where the first operand whose strides differ
/// (and are both non-zero) decides, and equal strides put the larger dim
/// outside. Layouts, kernels that follow PyTorch's visiting order, and
/// `preserve_format` strides all take their order from here.
pub fn iteration_order(shape: &[usize], operands: &[&[isize]]) -> Shape {
    sort_dims(shape, None, operands)
}

/// [`iteration_order`] for a reduction: the output's strides (0 on reduced
/// dims) come first and put the reduced dims innermost, then the inputs decide
/// as in [`iteration_order`] (TensorIterator with `is_reduction`).
pub fn reduction_order(shape: &[usize], out: &[isize], inputs: &[&[isize]]) -> Shape {
    sort_dims(shape, Some(out), inputs)
}

/// PyTorch's `coalesce_dimensions`: merges neighbouring dims (innermost
/// first, as [`iteration_order`] leaves them) wherever every operand steps
/// through both as through one, or either has size 1. Returns the merged
/// shape; `strides` (one list per operand, in the same dim order) are merged
/// in place.
pub fn coalesce_dims(shape: &[usize], strides: &mut [Strides]) -> Shape {
    let mut shape: Shape = shape.into();
    if shape.len() <= 1 {
        return shape;
    }
    let mut prev = 0;
    for d in 1..shape.len() {
        let (s0, s1) = (shape[prev], shape[d]);
        let merge = s0 == 1 || s1 == 1 || strides.iter().all(|st| s0 as isize * st[prev] == st[d]);
        if merge {
            if shape[prev] == 1 {
                strides.iter_mut().for_each(|st| st[prev] = st[d]);
            }
            shape[prev] *= shape[d];
        } else {
            prev += 1;
            if prev != d {
                strides.iter_mut().for_each(|st| st[prev] = st[d]);
                shape[prev] = shape[d];
            }
        }
    }
    shape.truncate(prev + 1);
    strides.iter_mut().for_each(|st| st.truncate(prev + 1));
    shape
}

fn sort_dims(shape: &[usize], reduced_out: Option<&[isize]>, operands: &[&[isize]]) -> Shape {
    let nd = shape.len();
    let mut perm: Shape = (0..nd).rev().collect();
    // 1: d0 goes outside d1, -1: inside, 0: undecided.
    let should_swap = |d0: usize, d1: usize| -> i32 {
        for (k, st) in reduced_out.iter().chain(operands).enumerate() {
            let (s0, s1) = (st[d0], st[d1]);
            if k == 0 && reduced_out.is_some() && (s0 == 0) != (s1 == 0) {
                return if s1 == 0 { 1 } else { -1 };
            }
            if s0 == 0 || s1 == 0 {
                continue;
            }
            if s0 < s1 {
                return -1;
            }
            if s0 > s1 {
                return 1;
            }
            if shape[d0] > shape[d1] {
                return 1;
            }
        }
        0
    };
    for i in 1..nd {
        let mut d1 = i;
        for d0 in (0..i).rev() {
            match should_swap(perm[d0], perm[d1]) {
                c if c > 0 => {
                    perm.swap(d0, d1);
                    d1 = d0;
                }
                c if c < 0 => break,
                _ => {}
            }
        }
    }
    perm
}

/// Formats a shape as PyTorch does in messages: `[2, 3]`.
pub fn fmt_shape(shape: &[usize]) -> String {
    let parts: Vec<String> = shape.iter().map(|s| s.to_string()).collect();
    format!("[{}]", parts.join(", "))
}

fn fmt_i64s(v: &[i64]) -> String {
    let parts: Vec<String> = v.iter().map(|s| s.to_string()).collect();
    format!("[{}]", parts.join(", "))
}

/// Row-major strides for `shape`, treating zero-sized dims as size 1 like PyTorch.
pub fn contiguous_strides(shape: &[usize]) -> Strides {
    let mut strides: Strides = SmallVec::from_elem(0, shape.len());
    let mut acc: isize = 1;
    for i in (0..shape.len()).rev() {
        strides[i] = acc;
        acc = acc.saturating_mul(shape[i].max(1) as isize);
    }
    strides
}

/// Product of sizes.
/// Product of sizes, saturating instead of wrapping (user-given sizes can be
/// huge; a saturated count fails allocation and bounds checks cleanly).
pub fn numel(shape: &[usize]) -> usize {
    if shape.contains(&0) {
        return 0;
    }
    shape.iter().fold(1usize, |acc, &s| acc.saturating_mul(s))
}

/// Resolves a requested shape that may hold one `-1` against `numel` elements.
pub fn infer_size(requested: &[i64], numel: usize) -> Result<Shape> {
    let mut infer = None;
    let mut known: usize = 1;
    for (i, &s) in requested.iter().enumerate() {
        if s == -1 {
            if infer.is_some() {
                return Err(Error::runtime("only one dimension can be inferred"));
            }
            infer = Some(i);
        } else if s < 0 {
            return Err(Error::runtime(format!(
                "invalid shape dimension {s} at index {i} of shape {}",
                fmt_i64s(requested)
            )));
        } else {
            known = known.saturating_mul(s as usize);
        }
    }
    let bad = || Error::runtime(format!("shape '{}' is invalid for input of size {}", fmt_i64s(requested), numel));
    let mut shape: Shape = requested.iter().map(|&s| s.max(0) as usize).collect();
    match infer {
        Some(i) => {
            if known == 0 {
                if numel == 0 {
                    return Err(Error::runtime(format!(
                        "cannot reshape tensor of 0 elements into shape {} because the unspecified dimension size -1 can be any value and is ambiguous",
                        fmt_i64s(requested)
                    )));
                }
                return Err(bad());
            }
            if numel % known != 0 {
                return Err(bad());
            }
            shape[i] = numel / known;
        }
        None => {
            if known != numel {
                return Err(bad());
            }
        }
    }
    Ok(shape)
}

/// NumPy/PyTorch broadcasting of two shapes.
pub fn broadcast_shapes(a: &[usize], b: &[usize]) -> Result<Shape> {
    let n = a.len().max(b.len());
    let mut out: Shape = SmallVec::from_elem(0, n);
    // From the right, as PyTorch reports the last mismatching dim.
    for i in (0..n).rev() {
        let da = if i + a.len() >= n { a[i + a.len() - n] } else { 1 };
        let db = if i + b.len() >= n { b[i + b.len() - n] } else { 1 };
        out[i] = if da == db || db == 1 {
            da
        } else if da == 1 {
            db
        } else {
            return Err(Error::runtime(format!(
                "The size of tensor a ({da}) must match the size of tensor b ({db}) at non-singleton dimension {i}"
            )));
        };
    }
    Ok(out)
}

impl Layout {
    /// A fresh row-major layout.
    pub fn contiguous(shape: &[usize]) -> Layout {
        Layout { shape: shape.into(), strides: contiguous_strides(shape), offset: 0 }
    }

    /// Number of dimensions.
    pub fn ndim(&self) -> usize {
        self.shape.len()
    }

    /// Number of elements.
    pub fn numel(&self) -> usize {
        numel(&self.shape)
    }

    /// PyTorch's rule: row-major once size-1 dims are ignored; empty tensors are contiguous.
    pub fn is_contiguous(&self) -> bool {
        if self.numel() == 0 {
            return true;
        }
        let mut expected: isize = 1;
        for i in (0..self.ndim()).rev() {
            if self.shape[i] != 1 {
                if self.strides[i] != expected {
                    return false;
                }
                expected *= self.shape[i] as isize;
            }
        }
        true
    }

    /// PyTorch's `is_non_overlapping_and_dense`: the elements fill a block of
    /// storage exactly once, in some order of the dims.
    pub fn is_non_overlapping_and_dense(&self) -> bool {
        if self.is_contiguous() {
            return true;
        }
        let n = self.ndim();
        if n == 1 {
            return self.shape[0] < 2 || self.strides[0] == 1;
        }
        let mut perm: Vec<usize> = (0..n).collect();
        // Size-0/1 dims go last; the others by increasing stride.
        perm.sort_by(|&a, &b| {
            let (sa, sb) = (self.shape[a] < 2, self.shape[b] < 2);
            sa.cmp(&sb).then(if sa || sb { std::cmp::Ordering::Equal } else { self.strides[a].cmp(&self.strides[b]) })
        });
        let mut require: isize = 1;
        for &d in &perm {
            let size = self.shape[d];
            if size < 2 {
                return true;
            }
            if self.strides[d] != require {
                return false;
            }
            require *= size as isize;
        }
        true
    }

    /// PyTorch's `has_internal_overlap(...) == MemOverlap::Yes`: some element of
    /// the tensor is certainly stored at the same place as another (a broadcast
    /// dim). Writing into such a tensor is refused.
    pub fn has_internal_overlap(&self) -> bool {
        if self.is_non_overlapping_and_dense() {
            return false;
        }
        self.shape.iter().zip(&self.strides).any(|(&s, &st)| st == 0 && s > 1)
    }

    /// PyTorch's `assert_no_internal_overlap`, run before writing into a tensor
    /// (`copy_`, in-place arithmetic, `t[idx] = v`).
    pub fn check_no_internal_overlap(&self) -> Result<()> {
        if self.has_internal_overlap() {
            return Err(Error::runtime(
                "unsupported operation: more than one element of the written-to tensor refers to a single memory location. Please clone() the tensor before performing the operation.",
            ));
        }
        Ok(())
    }

    /// Strides of a fresh tensor shaped like this one under PyTorch's
    /// `preserve_format` (`clone()`, `to()`, `*_like`): the same strides when
    /// the layout is non-overlapping and dense, otherwise dense strides that keep
    /// the order of the dims in memory (`infer_dense_strides`).
    pub fn preserved_strides(&self) -> Strides {
        if self.is_non_overlapping_and_dense() {
            return self.strides.clone();
        }
        let n = self.ndim();
        let perm = iteration_order(&self.shape, &[&self.strides]);
        let mut out: Strides = SmallVec::from_elem(0, n);
        let mut cur: isize = 1;
        for &d in &perm {
            out[d] = cur;
            if self.shape[d] > 1 {
                cur *= self.shape[d] as isize;
            }
        }
        out
    }

    /// Lowest and one-past-highest storage element this layout touches (None if
    /// empty). Computed without overflow: an extent beyond the address space
    /// saturates, so bounds checks against a storage fail instead of wrapping.
    pub fn storage_span(&self) -> Option<(usize, usize)> {
        if self.numel() == 0 {
            return None;
        }
        let mut lo = self.offset as i128;
        let mut hi = self.offset as i128;
        for (&s, &st) in self.shape.iter().zip(&self.strides) {
            let ext = (s as i128 - 1) * st as i128;
            if ext < 0 {
                lo += ext;
            } else {
                hi += ext;
            }
        }
        let clamp = |v: i128| v.clamp(0, usize::MAX as i128 - 1) as usize;
        Some((clamp(lo), clamp(hi) + 1))
    }

    /// Strides for viewing this layout as `new_shape` without copying, if possible
    /// (PyTorch's `computeStride`).
    pub fn view_strides(&self, new_shape: &[usize]) -> Option<Strides> {
        let old = &self.shape;
        let olds = &self.strides;
        let n = self.numel();
        if old.is_empty() {
            return Some(SmallVec::from_elem(1, new_shape.len()));
        }
        if n == 0 {
            if old.as_slice() == new_shape {
                return Some(olds.clone());
            }
            return Some(contiguous_strides(new_shape));
        }
        let mut new_strides: Strides = SmallVec::from_elem(0, new_shape.len());
        let mut view_d = new_shape.len() as isize - 1;
        let mut chunk_base_stride = *olds.last()?;
        let mut tensor_numel: isize = 1;
        let mut view_numel: isize = 1;
        for tensor_d in (0..old.len()).rev() {
            tensor_numel *= old[tensor_d] as isize;
            if tensor_d == 0
                || (old[tensor_d - 1] != 1 && olds[tensor_d - 1] != tensor_numel * chunk_base_stride)
            {
                while view_d >= 0 && (view_numel < tensor_numel || new_shape[view_d as usize] == 1) {
                    new_strides[view_d as usize] = view_numel * chunk_base_stride;
                    view_numel *= new_shape[view_d as usize] as isize;
                    view_d -= 1;
                }
                if view_numel != tensor_numel {
                    return None;
                }
                if tensor_d > 0 {
                    chunk_base_stride = olds[tensor_d - 1];
                    tensor_numel = 1;
                    view_numel = 1;
                }
            }
        }
        if view_d != -1 {
            return None;
        }
        Some(new_strides)
    }

    /// `Tensor.view(*shape)`.
    pub fn view(&self, requested: &[i64]) -> Result<Layout> {
        if let Some(flat) = self.flat_view(requested) {
            return Ok(flat);
        }
        let shape = infer_size(requested, self.numel())?;
        match self.view_strides(&shape) {
            Some(strides) => Ok(Layout { shape, strides, offset: self.offset }),
            None => Err(Error::runtime(
                "view size is not compatible with input tensor's size and stride (at least one dimension spans across two contiguous subspaces). Use .reshape(...) instead.",
            )),
        }
    }

    /// [`view`](Self::view) of a contiguous layout as one dim (`view(-1)`,
    /// `view(numel)`), the common flattening, without the general stride
    /// computation: one dim of every element at stride 1, which is what that
    /// computation gives there. `None` for every other request.
    fn flat_view(&self, requested: &[i64]) -> Option<Layout> {
        let &[d] = requested else { return None };
        let n = self.numel();
        // One element keeps its stride in the general computation (a
        // stride-2 slice of one element viewed as (1,) has stride 2).
        let fits = n > 1 && (d == -1 || usize::try_from(d).is_ok_and(|d| d == n));
        (fits && self.is_contiguous()).then(|| Layout { shape: smallvec::smallvec![n], strides: smallvec::smallvec![1], offset: self.offset })
    }

    /// The layout of a complex tensor's parts in its real element type
    /// (`view_as_real`): each stride and the offset doubled (a complex
    /// element is two reals), and a last dim of size 2 and stride 1 holding
    /// the real and imaginary parts.
    pub fn as_real_parts(&self) -> Layout {
        let mut shape = self.shape.clone();
        shape.push(2);
        let mut strides: Strides = self.strides.iter().map(|&st| st * 2).collect();
        strides.push(1);
        Layout { shape, strides, offset: self.offset * 2 }
    }

    /// Swaps two dimensions.
    pub fn transpose(&self, d0: i64, d1: i64) -> Result<Layout> {
        let a = wrap_dim(d0, self.ndim())?;
        let b = wrap_dim(d1, self.ndim())?;
        let mut out = self.clone();
        if self.ndim() > 0 {
            out.shape.swap(a, b);
            out.strides.swap(a, b);
        }
        Ok(out)
    }

    /// Reorders dimensions.
    pub fn permute(&self, dims: &[i64]) -> Result<Layout> {
        let n = self.ndim();
        if dims.len() != n {
            return Err(Error::runtime(format!(
                "permute(sparse_coo): number of dimensions in the tensor input does not match the length of the desired ordering of dimensions i.e. input.dim() = {} is not equal to len(dims) = {}",
                n,
                dims.len()
            )));
        }
        let mut seen = vec![false; n];
        let mut out = self.clone();
        for (i, &d) in dims.iter().enumerate() {
            let d = wrap_dim(d, n)?;
            if seen[d] {
                return Err(Error::runtime("permute(): duplicate dims are not allowed."));
            }
            seen[d] = true;
            out.shape[i] = self.shape[d];
            out.strides[i] = self.strides[d];
        }
        Ok(out)
    }

    /// Broadcasts to `sizes` (which may use -1 to keep a size) with stride 0.
    pub fn expand(&self, sizes: &[i64]) -> Result<Layout> {
        let n = sizes.len();
        if n < self.ndim() {
            return Err(Error::runtime(format!(
                "expand({}, size={}): the number of sizes provided ({}) must be greater or equal to the number of dimensions in the tensor ({})",
                fmt_shape(&self.shape),
                fmt_i64s(sizes),
                n,
                self.ndim()
            )));
        }
        let lead = n - self.ndim();
        let mut shape: Shape = SmallVec::from_elem(0, n);
        let mut strides: Strides = SmallVec::from_elem(0, n);
        for i in (0..n).rev() {
            let target = sizes[i];
            if i >= lead {
                let (s, st) = (self.shape[i - lead], self.strides[i - lead]);
                if target == -1 || target as usize == s && target >= 0 {
                    shape[i] = s;
                    strides[i] = st;
                } else if s == 1 && target >= 0 {
                    shape[i] = target as usize;
                    strides[i] = 0;
                } else {
                    return Err(Error::runtime(format!(
                        "The expanded size of the tensor ({}) must match the existing size ({}) at non-singleton dimension {}.  Target sizes: {}.  Tensor sizes: {}",
                        target,
                        s,
                        i,
                        fmt_i64s(sizes),
                        fmt_shape(&self.shape)
                    )));
                }
            } else {
                if target < 0 {
                    return Err(Error::runtime(format!(
                        "The expanded size of the tensor ({target}) isn't allowed in a leading, non-existing dimension {i}"
                    )));
                }
                shape[i] = target as usize;
                // PyTorch's inferExpandGeometry: a new dim of size 1 gets
                // size * stride of the dim after it, others (and every new dim
                // of a 0-d tensor) 0.
                strides[i] = if target == 1 {
                    if i + 1 < n { shape[i + 1] as isize * strides[i + 1] } else { 0 }
                } else {
                    0
                };
            }
        }
        Ok(Layout { shape, strides, offset: self.offset })
    }

    /// Removes size-1 dims (all, or the listed ones that have size 1).
    pub fn squeeze(&self, dims: Option<&[i64]>) -> Result<Layout> {
        let n = self.ndim();
        let mut drop = vec![false; n];
        match dims {
            None => {
                for i in 0..n {
                    drop[i] = self.shape[i] == 1;
                }
            }
            Some(ds) => {
                for d in wrap_dims(ds, n)? {
                    if n > 0 && self.shape[d] == 1 {
                        drop[d] = true;
                    }
                }
            }
        }
        let mut out = Layout { shape: SmallVec::new(), strides: SmallVec::new(), offset: self.offset };
        for i in 0..n {
            if !drop[i] {
                out.shape.push(self.shape[i]);
                out.strides.push(self.strides[i]);
            }
        }
        Ok(out)
    }

    /// Inserts a size-1 dim at `dim` (in `-(ndim+1)..=ndim`).
    pub fn unsqueeze(&self, dim: i64) -> Result<Layout> {
        let d = wrap_dim(dim, self.ndim() + 1)?;
        let mut out = self.clone();
        // PyTorch's rule: size * stride of the dim it is inserted before (0 when
        // that dim is empty or expanded), 1 at the end.
        let st = if d < self.ndim() { self.strides[d] * self.shape[d] as isize } else { 1 };
        out.shape.insert(d, 1);
        out.strides.insert(d, st);
        Ok(out)
    }

    /// `narrow(dim, start, length)`.
    pub fn narrow(&self, dim: i64, start: i64, length: i64) -> Result<Layout> {
        if self.ndim() == 0 {
            return Err(Error::runtime("narrow() cannot be applied to a 0-dim tensor."));
        }
        let d = wrap_dim(dim, self.ndim())?;
        let size = self.shape[d] as i64;
        if length < 0 {
            return Err(Error::runtime("narrow(): length must be non-negative."));
        }
        if start < -size || start > size {
            return Err(Error::index(format!(
                "start out of range (expected to be in range of [{}, {}], but got {})",
                -size, size, start
            )));
        }
        let start = if start < 0 { start + size } else { start };
        if start + length > size {
            return Err(Error::runtime(format!(
                "start ({start}) + length ({length}) exceeds dimension size ({size})."
            )));
        }
        self.slice(d as i64, start, start + length, 1)
    }

    /// Picks index `index` along `dim`, removing that dim.
    pub fn select(&self, dim: i64, index: i64) -> Result<Layout> {
        if self.ndim() == 0 {
            return Err(Error::index("select() cannot be applied to a 0-dim tensor."));
        }
        let d = wrap_dim(dim, self.ndim())?;
        let size = self.shape[d] as i64;
        if index < -size || index >= size {
            return Err(Error::index(format!(
                "select(): index {} out of range for tensor of size {} at dimension {}",
                index,
                fmt_shape(&self.shape),
                d
            )));
        }
        let i = if index < 0 { index + size } else { index };
        let mut out = self.clone();
        out.offset = (self.offset as isize + i as isize * self.strides[d]) as usize;
        out.shape.remove(d);
        out.strides.remove(d);
        Ok(out)
    }

    /// Python slicing `start:end:step` along `dim`, with Python's clamping of bounds.
    pub fn slice(&self, dim: i64, start: i64, end: i64, step: i64) -> Result<Layout> {
        if step <= 0 {
            return Err(Error::value("step must be greater than zero"));
        }
        let d = wrap_dim_no_scalar(dim, self.ndim())?;
        let size = self.shape[d] as i64;
        let clamp = |v: i64| -> i64 {
            let v = if v < 0 { v + size } else { v };
            v.clamp(0, size)
        };
        let s = clamp(start);
        let e = clamp(end).max(s);
        let len = (e - s + step - 1) / step;
        let mut out = self.clone();
        if len > 0 {
            out.offset = (self.offset as isize + s as isize * self.strides[d]) as usize;
        } else {
            out.offset = (self.offset as isize + s.min(size) as isize * self.strides[d]).max(0) as usize;
        }
        out.shape[d] = len as usize;
        out.strides[d] = self.strides[d] * step as isize;
        Ok(out)
    }

    /// `diagonal(offset, dim1, dim2)`: the diagonal becomes the last dim.
    pub fn diagonal(&self, offset: i64, dim1: i64, dim2: i64) -> Result<Layout> {
        let n = self.ndim();
        let a = wrap_dim(dim1, n)?;
        let b = wrap_dim(dim2, n)?;
        if a == b {
            return Err(Error::runtime(format!(
                "diagonal dimensions cannot be identical {dim1}, {dim2}"
            )));
        }
        let (sa, sb) = (self.shape[a] as i64, self.shape[b] as i64);
        let len = if offset >= 0 { sa.min(sb - offset) } else { (sa + offset).min(sb) }.max(0);
        let mut off = self.offset as isize;
        if len > 0 {
            off += if offset >= 0 {
                offset as isize * self.strides[b]
            } else {
                -offset as isize * self.strides[a]
            };
        }
        let mut out = Layout { shape: SmallVec::new(), strides: SmallVec::new(), offset: off as usize };
        for i in 0..n {
            if i != a && i != b {
                out.shape.push(self.shape[i]);
                out.strides.push(self.strides[i]);
            }
        }
        out.shape.push(len as usize);
        out.strides.push(self.strides[a] + self.strides[b]);
        Ok(out)
    }

    /// `unfold(dim, size, step)`: sliding windows become a new last dim.
    pub fn unfold(&self, dim: i64, size: i64, step: i64) -> Result<Layout> {
        let n = self.ndim();
        let d = wrap_dim(dim, n)?;
        let dim_size = if n == 0 { 1 } else { self.shape[d] as i64 };
        if size > dim_size {
            return Err(Error::runtime(format!(
                "maximum size for tensor at dimension {d} is {dim_size} but size is {size}"
            )));
        }
        if step <= 0 {
            return Err(Error::runtime(format!("step is {step} but must be > 0")));
        }
        if size < 0 {
            return Err(Error::runtime(format!("size is {size} but must be >= 0")));
        }
        let mut out = self.clone();
        if n == 0 {
            out.shape.push(size as usize);
            out.strides.push(1);
            return Ok(out);
        }
        out.shape[d] = ((dim_size - size) / step + 1) as usize;
        out.strides[d] = self.strides[d] * step as isize;
        out.shape.push(size as usize);
        out.strides.push(self.strides[d]);
        Ok(out)
    }

    /// `as_strided(size, stride, storage_offset)`; bounds are checked by the caller
    /// against the storage size.
    pub fn as_strided(sizes: &[i64], strides: &[i64], offset: i64) -> Result<Layout> {
        if sizes.len() != strides.len() {
            return Err(Error::runtime("mismatch in length of strides and shape"));
        }
        if sizes.iter().any(|&s| s < 0) {
            return Err(Error::runtime(format!(
                "Storage size calculation overflowed with sizes={} and strides={}",
                fmt_i64s(sizes),
                fmt_i64s(strides)
            )));
        }
        let overflow = sizes.iter().zip(strides).try_fold(1i128, |acc, (&s, &st)| {
            let v = acc + (s as i128 - 1).max(0) * st as i128;
            (v <= i64::MAX as i128).then_some(v)
        });
        if overflow.is_none() || sizes.iter().try_fold(1u64, |acc, &s| acc.checked_mul(s as u64)).is_none() {
            return Err(Error::runtime(format!(
                "Storage size calculation overflowed with sizes={} and strides={}",
                fmt_i64s(sizes),
                fmt_i64s(strides)
            )));
        }
        if strides.iter().any(|&s| s < 0) {
            return Err(Error::runtime("as_strided: Negative strides are not supported at the moment, got strides: ".to_string() + &fmt_i64s(strides)));
        }
        if offset < 0 {
            return Err(Error::runtime(format!("Tensor: invalid storage offset {offset}")));
        }
        Ok(Layout {
            shape: sizes.iter().map(|&s| s as usize).collect(),
            strides: strides.iter().map(|&s| s as isize).collect(),
            offset: offset as usize,
        })
    }
}

/// Checks a user-supplied size list for negative entries, with PyTorch's message.
pub fn check_sizes(sizes: &[i64]) -> Result<Shape> {
    if let Some(s) = sizes.iter().find(|&&s| s < 0) {
        return Err(Error::runtime(format!(
            "Trying to create tensor with negative dimension {}: {}",
            s,
            fmt_i64s(sizes)
        )));
    }
    Ok(sizes.iter().map(|&s| s as usize).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flat_views_are_the_general_stride_computation() {
        let layouts = [
            Layout::contiguous(&[4, 4]),
            Layout::contiguous(&[]),
            Layout::contiguous(&[0, 3]),
            Layout { shape: [4, 1].into_iter().collect(), strides: [1, 7].into_iter().collect(), offset: 3 },
            Layout { shape: [1, 5].into_iter().collect(), strides: [9, 1].into_iter().collect(), offset: 0 },
            Layout { shape: [3, 4].into_iter().collect(), strides: [1, 3].into_iter().collect(), offset: 0 },
            Layout { shape: [1].into_iter().collect(), strides: [2].into_iter().collect(), offset: 1 },
            Layout { shape: [1, 1].into_iter().collect(), strides: [5, 3].into_iter().collect(), offset: 0 },
        ];
        for x in &layouts {
            let n = x.numel() as i64;
            for req in [-1, n, n + 1, 0] {
                let general = infer_size(&[req], x.numel()).and_then(|shape| match x.view_strides(&shape) {
                    Some(strides) => Ok(Layout { shape, strides, offset: x.offset }),
                    None => Err(Error::runtime("not viewable")),
                });
                match x.flat_view(&[req]) {
                    Some(flat) => assert_eq!(Ok(flat), general, "{x:?} view({req})"),
                    None => assert!(general.is_err() || !x.is_contiguous() || n < 2, "{x:?} view({req}) missed"),
                }
            }
        }
    }

    fn l(shape: &[usize]) -> Layout {
        Layout::contiguous(shape)
    }

    /// `view_as_real` of a transposed, offset (2, 3) complex view: PyTorch
    /// gives sizes (3, 2, 2), strides (2, 6, 1) and offset 2 for `x.t()` of
    /// a view at offset 1.
    #[test]
    fn real_parts_double_strides_and_offset() {
        let t = Layout { offset: 1, ..l(&[2, 3]) }.transpose(0, 1).unwrap();
        let r = t.as_real_parts();
        assert_eq!((r.shape.as_slice(), r.strides.as_slice(), r.offset), (&[3usize, 2, 2][..], &[2isize, 6, 1][..], 2));
    }

    #[test]
    fn contiguity_ignores_unit_dims() {
        let t = l(&[2, 3]).transpose(0, 1).unwrap();
        assert!(!t.is_contiguous());
        let u = l(&[1, 3]).transpose(0, 1).unwrap();
        assert!(u.is_contiguous());
        assert_eq!(contiguous_strides(&[3, 0]).as_slice(), &[1, 1]);
    }

    #[test]
    fn view_of_transposed_fails_but_splits_work() {
        let t = l(&[3, 4]).transpose(0, 1).unwrap();
        assert!(t.view(&[12]).is_err());
        assert_eq!(t.view(&[2, 2, 3]).unwrap().strides.as_slice(), &[2, 1, 4]);
        let v = l(&[2, 3]).view(&[-1]).unwrap();
        assert_eq!(v.shape.as_slice(), &[6]);
        assert!(l(&[2, 3]).view(&[4, -1]).is_err());
        assert!(l(&[2, 3]).view(&[-1, -1]).is_err());
    }

    #[test]
    fn slices_diagonals_unfold() {
        let s = l(&[10]).slice(0, 1, i64::MAX, 3).unwrap();
        assert_eq!((s.shape[0], s.strides[0], s.offset), (3, 3, 1));
        let d = l(&[3, 4]).diagonal(1, 0, 1).unwrap();
        assert_eq!((d.shape[0], d.strides[0], d.offset), (3, 5, 1));
        let u = l(&[7]).unfold(0, 2, 1).unwrap();
        assert_eq!(u.shape.as_slice(), &[6, 2]);
        assert_eq!(u.strides.as_slice(), &[1, 1]);
    }

    #[test]
    fn expand_and_broadcast() {
        let e = l(&[3, 1]).expand(&[2, 3, 4]).unwrap();
        assert_eq!(e.strides.as_slice(), &[0, 1, 0]);
        assert!(l(&[3]).expand(&[4]).is_err());
        assert_eq!(broadcast_shapes(&[3, 1], &[4]).unwrap().as_slice(), &[3, 4]);
        assert!(broadcast_shapes(&[3], &[4]).is_err());
    }
}
