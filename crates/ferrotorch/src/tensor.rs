//! The tensor handle: an `Arc` of storage + layout + dtype, cheap to clone.
//!
//! Views share the storage and the version counter of their base; they differ
//! only in their [`Layout`]. Autograd metadata lives next to the data so that a
//! Rust user gets gradients without Python.
//!
//! ```
//! use ferrotorch::Tensor;
//! let x = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[2, 2]).unwrap();
//! let row = x.select(0, 1).unwrap(); // a view: same storage
//! row.fill_(ferrotorch::Scalar::Float(0.0)).unwrap();
//! assert_eq!(x.to_vec::<f32>().unwrap(), vec![1.0, 2.0, 0.0, 0.0]);
//! ```

use crate::defaults::default_dtype;
use ferrotorch_core::layout::fmt_shape;
use ferrotorch_core::{DType, Device, Element, Error, Layout, Result, Storage};
use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, Ordering};
use crate::autograd::node::{Node, PostAccumulateHook, TensorHook};
use std::sync::{Arc, Mutex, MutexGuard, Weak};

/// Autograd state of one tensor.
#[derive(Default)]
pub struct AutogradMeta {
    /// `requires_grad` of a leaf (non-leaves derive it from `grad_fn`).
    pub requires_grad: bool,
    /// Accumulated gradient (`.grad`).
    pub grad: Option<Tensor>,
    /// `retain_grad()` was called on a non-leaf.
    pub retains_grad: bool,
    /// The node that produced this tensor (None for leaves).
    pub grad_fn: Option<Arc<Node>>,
    /// Which output of `grad_fn` this tensor is.
    pub output_nr: usize,
    /// The leaf's `AccumulateGrad` node, held weakly as in PyTorch: the node owns
    /// the leaf, the leaf only points back.
    pub grad_accumulator: Weak<Node>,
    /// Hooks run on the gradient of this tensor before it is used
    /// (`register_hook`), keyed by handle id.
    pub hooks: Vec<(u64, TensorHook)>,
    /// Hooks run after the gradient was accumulated into `.grad` (leaves only).
    pub post_accumulate_hooks: Vec<(u64, PostAccumulateHook)>,
    /// For a view made while grad mode was on (a "differentiable view"): the
    /// version of the shared storage when its `grad_fn` was last set. When an
    /// in-place op changes the version, the view's history is regenerated
    /// over its base (`AsStridedBackward0`), as PyTorch does.
    pub view_version: Option<u64>,
    /// The view was made of a tensor that did not require grad. Until an
    /// in-place op changes the storage, such a view keeps no history even
    /// after its base starts requiring grad (PyTorch regenerates a view's
    /// `grad_fn` only when the version moved).
    pub view_base_untracked: bool,
}

/// Storage and layout of a tensor, replaced together by [`Tensor::resize_`]
/// (the only change of a tensor's metadata after it is made).
struct Meta {
    storage: Arc<Storage>,
    layout: Layout,
}

/// The shared state behind a [`Tensor`].
pub struct TensorImpl {
    /// The current [`Meta`], owned (from `Box::into_raw`), never null.
    meta: AtomicPtr<Meta>,
    /// Metadata replaced by `resize_`. `shape()`, `layout()` and `storage()`
    /// hand out references that live as long as the tensor, so a replaced
    /// `Meta` is kept (not freed) until the tensor itself is dropped.
    retired: Mutex<Vec<Box<Meta>>>,
    dtype: DType,
    /// The conjugate bit (PyTorch's `is_conj()`): the elements are the
    /// complex conjugates of the stored values. Only complex tensors carry
    /// it; kernels never see it, because the op layer hands them resolved
    /// operands (`ops::conj_bit`).
    conj: bool,
    version: Arc<AtomicU64>,
    base: Option<Tensor>,
    autograd: Mutex<AutogradMeta>,
    /// Set (before the lock is taken) by every access to `autograd` that
    /// could change it; while clear, the state is the default one (no
    /// `requires_grad`, no `grad_fn`), so the checks every op makes on its
    /// inputs need no lock for tensors autograd never touched.
    autograd_touched: AtomicBool,
    /// Borrowed pointer to the Python object wrapping this tensor, if any, so the
    /// bindings can return the same object every time (`x.grad is x.grad`). Set
    /// and cleared only by the bindings while holding the interpreter lock.
    pyobj: AtomicPtr<c_void>,
}

impl Drop for TensorImpl {
    fn drop(&mut self) {
        // SAFETY: the current meta came from `Box::into_raw` and nothing borrows it any more.
        drop(unsafe { Box::from_raw(*self.meta.get_mut()) });
    }
}

/// A strided n-dimensional array. Cloning is cheap and aliases the same tensor.
#[derive(Clone)]
pub struct Tensor(pub(crate) Arc<TensorImpl>);

impl Tensor {
    /// Wraps a storage with a layout; checks the layout fits the storage.
    pub fn from_parts(storage: Arc<Storage>, layout: Layout, dtype: DType) -> Result<Tensor> {
        check_fits(&storage, &layout, dtype)?;
        Ok(Tensor::raw(storage, layout, dtype, Arc::new(AtomicU64::new(0)), None))
    }

    fn raw(storage: Arc<Storage>, layout: Layout, dtype: DType, version: Arc<AtomicU64>, base: Option<Tensor>) -> Tensor {
        Tensor::raw_conj(storage, layout, dtype, false, version, base, None, false)
    }

    /// `view_version` starts the autograd state of a view (see
    /// [`AutogradMeta::view_version`]) without a lock on the new tensor.
    fn raw_conj(
        storage: Arc<Storage>,
        layout: Layout,
        dtype: DType,
        conj: bool,
        version: Arc<AtomicU64>,
        base: Option<Tensor>,
        view_version: Option<u64>,
        view_base_untracked: bool,
    ) -> Tensor {
        Tensor(Arc::new(TensorImpl {
            meta: AtomicPtr::new(Box::into_raw(Box::new(Meta { storage, layout }))),
            retired: Mutex::new(Vec::new()),
            dtype,
            conj: conj && dtype.is_complex(),
            version,
            base,
            autograd: Mutex::new(AutogradMeta { view_version, view_base_untracked, ..AutogradMeta::default() }),
            autograd_touched: AtomicBool::new(false),
            pyobj: AtomicPtr::new(std::ptr::null_mut()),
        }))
    }

    /// An uninitialised contiguous tensor on `device`, from its backend's
    /// caching allocator (on `meta`: a size without memory).
    pub fn empty(shape: &[usize], dtype: DType, device: Device) -> Result<Tensor> {
        let storage = crate::backend::for_device(device)?.allocate(Self::nbytes_for(shape, dtype)?, device)?;
        Ok(Tensor::raw(Arc::new(storage), Layout::contiguous(shape), dtype, Arc::new(AtomicU64::new(0)), None))
    }

    /// [`empty`](Self::empty) filled with zeros: a fresh allocation is taken
    /// already zeroed (untouched pages for big sizes, as calloc gives), a
    /// cached block is zeroed by the parallel fill.
    pub(crate) fn empty_zeroed(shape: &[usize], dtype: DType, device: Device) -> Result<Tensor> {
        let (storage, zeroed) = crate::backend::for_device(device)?.allocate_zeroed(Self::nbytes_for(shape, dtype)?, device)?;
        let t = Tensor::raw(Arc::new(storage), Layout::contiguous(shape), dtype, Arc::new(AtomicU64::new(0)), None);
        if !zeroed {
            t.fill_init(ferrotorch_core::Scalar::Int(0))?;
        }
        Ok(t)
    }

    /// The byte size of a contiguous `shape` of `dtype`, with PyTorch's
    /// checks in its order: the byte count must fit (`empty(2**62, 4)`), then
    /// the contiguous strides (products of the sizes, a 0 counted as 1) must
    /// fit an i64, which an empty shape can break too (`empty(0, 2**62, 2)`).
    fn nbytes_for(shape: &[usize], dtype: DType) -> Result<usize> {
        let nbytes = shape
            .iter()
            .try_fold(1usize, |acc, &s| acc.checked_mul(s))
            .and_then(|n| n.checked_mul(dtype.itemsize()))
            .ok_or_else(|| Error::runtime(format!("Storage size calculation overflowed with sizes={}", fmt_shape(shape))))?;
        // The stride of dim 0 is the product of the other sizes; one past it
        // (the size of dim 0 times that) is never a stride.
        let strides_fit = shape
            .iter()
            .skip(1)
            .try_fold(1i64, |acc, &s| acc.checked_mul(i64::try_from(s.max(1)).ok()?))
            .is_some();
        if !strides_fit {
            return Err(Error::runtime("Stride calculation overflowed"));
        }
        Ok(nbytes)
    }

    /// A contiguous tensor holding `data` with `shape`.
    pub fn from_vec<T: Element>(data: Vec<T>, shape: &[usize]) -> Result<Tensor> {
        let n: usize = shape.iter().product();
        if n != data.len() {
            return Err(Error::runtime(format!(
                "shape {} is invalid for input of size {}",
                fmt_shape(shape),
                data.len()
            )));
        }
        let t = Tensor::empty(shape, T::DTYPE, Device::CPU)?;
        // SAFETY: t is a fresh contiguous buffer of exactly n elements of T.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), t.data_ptr_mut() as *mut T, n) };
        Ok(t)
    }

    /// A 0-d tensor.
    pub fn scalar<T: Element>(v: T) -> Result<Tensor> {
        Tensor::from_vec(vec![v], &[])
    }

    /// A view of this tensor with another layout on the same storage, sharing
    /// the version counter and the conjugate bit; `_base` points at the root
    /// tensor.
    pub fn make_view(&self, layout: Layout) -> Result<Tensor> {
        self.view_with(layout, self.0.dtype, self.0.conj)
    }

    /// [`make_view`](Self::make_view) reading the storage as another dtype
    /// (`layout` in elements of `dtype`): the parts of a complex tensor
    /// (`real`, `imag`, `view_as_real`) and back (`view_as_complex`). The
    /// stored values are seen as they are (no conjugate bit).
    pub fn make_view_as(&self, layout: Layout, dtype: DType) -> Result<Tensor> {
        self.view_with(layout, dtype, false)
    }

    /// The same elements with the conjugate bit flipped (`conj()` of a
    /// complex tensor): a view sharing storage and version counter.
    pub fn conj_view(&self) -> Result<Tensor> {
        self.view_with(self.layout().clone(), self.0.dtype, !self.0.conj)
    }

    /// `is_conj()`: are the elements the conjugates of the stored values?
    pub fn is_conj(&self) -> bool {
        self.0.conj
    }

    fn view_with(&self, layout: Layout, dtype: DType, conj: bool) -> Result<Tensor> {
        check_fits(&self.meta().storage, &layout, dtype)?;
        let base = Some(self.0.base.clone().unwrap_or_else(|| self.clone()));
        let view_version = crate::autograd::is_grad_enabled().then(|| self.version());
        let untracked = view_version.is_some() && !self.requires_grad();
        Ok(Tensor::raw_conj(self.meta().storage.clone(), layout, dtype, conj, self.0.version.clone(), base, view_version, untracked))
    }

    /// Same data, same version counter and conjugate bit, no autograd
    /// history (`detach()`).
    pub fn detach(&self) -> Tensor {
        Tensor::raw_conj(self.meta().storage.clone(), self.meta().layout.clone(), self.0.dtype, self.0.conj, self.0.version.clone(), None, None, false)
    }

    /// Same data and conjugate bit with a fresh version counter (`.data`).
    pub fn data_alias(&self) -> Tensor {
        Tensor::raw_conj(self.meta().storage.clone(), self.meta().layout.clone(), self.0.dtype, self.0.conj, Arc::new(AtomicU64::new(0)), None, None, false)
    }

    fn meta(&self) -> &Meta {
        // SAFETY: `meta` always points at a live `Meta` owned by this tensor: a
        // replaced one moves to `retired` and is freed only with the tensor.
        unsafe { &*self.0.meta.load(Ordering::Acquire) }
    }

    /// `resize_(shape)` as PyTorch: contiguous strides from the same storage
    /// offset, on the same storage when it is large enough, else on a larger
    /// one holding the old bytes (the new elements are uninitialised). Views
    /// made before keep the old storage. Used by `out=` of the wrong shape.
    pub fn resize_(&self, shape: &[usize]) -> Result<()> {
        if self.requires_grad() {
            return Err(Error::runtime("cannot resize variables that require grad"));
        }
        let old = self.meta();
        let mut layout = Layout::contiguous(shape);
        layout.offset = old.layout.offset;
        let need = shape
            .iter()
            .try_fold(1usize, |a, &d| a.checked_mul(d))
            .and_then(|n| n.checked_add(layout.offset))
            .and_then(|n| n.checked_mul(self.0.dtype.itemsize()))
            .ok_or_else(|| Error::runtime(format!("Trying to resize storage that is not resizable to shape {}", fmt_shape(shape))))?;
        let storage = if need <= old.storage.nbytes() {
            old.storage.clone()
        } else {
            let device = old.storage.device();
            let backend = crate::backend::for_device(device)?;
            let s = Arc::new(backend.allocate(need, device)?);
            // The old bytes move over as a flat byte copy on the device.
            let bytes = Layout::contiguous(&[old.storage.nbytes()]);
            let (dst, src) = (ferrotorch_core::Dst { base: s.raw_ptr(), layout: &bytes }, ferrotorch_core::Src { base: old.storage.raw_ptr(), layout: &bytes });
            backend.copy_cast(dst, DType::UInt8, src, DType::UInt8)?;
            s
        };
        self.set_storage_(storage, layout)?;
        self.bump_version();
        Ok(())
    }

    /// `set_(source, storage_offset, size, stride)` as PyTorch: this tensor
    /// (not views made before) now looks at `source`'s storage through
    /// `layout`. With `source` = self it is the in-place view ops (`t_`,
    /// `transpose_`, `as_strided_`, ...), which only change the geometry.
    pub fn set_(&self, source: &Tensor, layout: Layout) -> Result<()> {
        if source.dtype() != self.dtype() {
            return Err(Error::runtime(format!(
                "Could not set tensor of type {} to a tensor of type {}",
                source.dtype().name(),
                self.dtype().name()
            )));
        }
        self.set_storage_(source.meta().storage.clone(), layout)?;
        self.bump_version();
        Ok(())
    }

    /// Points this tensor (not views made before) at `storage` with `layout`.
    pub(crate) fn set_storage_(&self, storage: Arc<Storage>, layout: Layout) -> Result<()> {
        check_fits(&storage, &layout, self.0.dtype)?;
        let new = Box::into_raw(Box::new(Meta { storage, layout }));
        let prev = self.0.meta.swap(new, Ordering::AcqRel);
        // SAFETY: `prev` came from `Box::into_raw` and is no longer the current meta.
        let prev = unsafe { Box::from_raw(prev) };
        self.0.retired.lock().unwrap_or_else(|e| e.into_inner()).push(prev);
        Ok(())
    }

    /// Sizes.
    pub fn shape(&self) -> &[usize] {
        &self.meta().layout.shape
    }
    /// Strides in elements.
    pub fn strides(&self) -> &[isize] {
        &self.meta().layout.strides
    }
    /// Offset of element 0 in the storage, in elements.
    pub fn storage_offset(&self) -> usize {
        self.meta().layout.offset
    }
    /// The full layout.
    pub fn layout(&self) -> &Layout {
        &self.meta().layout
    }
    /// Element type.
    pub fn dtype(&self) -> DType {
        self.0.dtype
    }
    /// Device of the storage.
    pub fn device(&self) -> Device {
        self.meta().storage.device()
    }
    /// Number of dimensions.
    pub fn ndim(&self) -> usize {
        self.meta().layout.ndim()
    }
    /// Number of elements.
    pub fn numel(&self) -> usize {
        self.meta().layout.numel()
    }
    /// PyTorch's contiguity (size-1 dims ignored).
    pub fn is_contiguous(&self) -> bool {
        self.meta().layout.is_contiguous()
    }
    /// The shared storage.
    pub fn storage(&self) -> &Arc<Storage> {
        &self.meta().storage
    }
    /// Address of element 0.
    pub fn data_ptr(&self) -> *const u8 {
        // SAFETY: check_fits guaranteed offset*itemsize <= nbytes.
        unsafe { self.meta().storage.as_ptr().add(self.meta().layout.offset * self.0.dtype.itemsize()) }
    }
    /// Address of element 0, for kernels that write.
    pub fn data_ptr_mut(&self) -> *mut u8 {
        self.data_ptr() as *mut u8
    }
    /// `_version`: bumped by every in-place op on this tensor or its views.
    pub fn version(&self) -> u64 {
        self.0.version.load(Ordering::Relaxed)
    }
    /// Records an in-place modification.
    pub fn bump_version(&self) {
        self.0.version.fetch_add(1, Ordering::Relaxed);
    }
    /// `_base`: the tensor this one is a view of.
    pub fn base(&self) -> Option<&Tensor> {
        self.0.base.as_ref()
    }
    /// Do two handles refer to the very same tensor?
    pub fn same(&self, other: &Tensor) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
    /// Do the two tensors share one version counter (views of one base)?
    pub fn shares_version_with(&self, other: &Tensor) -> bool {
        Arc::ptr_eq(&self.0.version, &other.0.version)
    }
    /// Locks the autograd metadata.
    pub fn autograd(&self) -> MutexGuard<'_, AutogradMeta> {
        self.0.autograd_touched.store(true, Ordering::Release);
        self.0.autograd.lock().unwrap_or_else(|p| p.into_inner())
    }
    /// Is the autograd state still the default one of a new non-view
    /// tensor (see `TensorImpl::autograd_touched`)? A view's history can
    /// change through its base, so views never take this shortcut.
    fn autograd_untouched(&self) -> bool {
        self.0.base.is_none() && !self.0.autograd_touched.load(Ordering::Acquire)
    }
    /// `requires_grad`: a leaf flag, or true for any tensor with a `grad_fn`.
    pub fn requires_grad(&self) -> bool {
        if !self.autograd_untouched() {
            crate::autograd::inplace::refresh_view(self);
            let m = self.autograd();
            if m.requires_grad || m.grad_fn.is_some() {
                return true;
            }
        }
        // A differentiable view requires grad when its base does, with or without
        // history (one made before the base required grad has none).
        match &self.0.base {
            Some(base) => base.requires_grad() && self.autograd().view_version.is_some(),
            None => false,
        }
    }
    /// The node that produced this tensor.
    pub fn grad_fn(&self) -> Option<Arc<Node>> {
        crate::autograd::inplace::refresh_view(self);
        self.autograd().grad_fn.clone()
    }
    /// `is_leaf`: no `grad_fn`.
    pub fn is_leaf(&self) -> bool {
        if self.autograd_untouched() {
            return true;
        }
        crate::autograd::inplace::refresh_view(self);
        self.autograd().grad_fn.is_none()
    }
    /// Which output of its `grad_fn` this tensor is.
    pub fn output_nr(&self) -> usize {
        self.autograd().output_nr
    }
    /// A weak handle (used by hooks that must not keep the tensor alive).
    pub fn downgrade(&self) -> Weak<TensorImpl> {
        Arc::downgrade(&self.0)
    }
    /// Rebuilds a tensor from a weak handle, if it is still alive.
    pub fn upgrade(w: &Weak<TensorImpl>) -> Option<Tensor> {
        w.upgrade().map(Tensor)
    }
    /// Sets `requires_grad`, which only floating tensors may have.
    pub fn set_requires_grad(&self, on: bool) -> Result<()> {
        if on && !self.dtype().is_floating_point() && !self.dtype().is_complex() {
            return Err(Error::runtime("only Tensors of floating point dtype can require gradients"));
        }
        let mut m = self.autograd();
        if m.grad_fn.is_some() {
            if !on {
                return Err(Error::runtime(
                    "you can only change requires_grad flags of leaf variables. If you want to use a computed variable in a subgraph that doesn't require differentiation use var_no_grad = var.detach().",
                ));
            }
            return Ok(());
        }
        m.requires_grad = on;
        Ok(())
    }
    /// `.grad`.
    pub fn grad(&self) -> Option<Tensor> {
        self.autograd().grad.clone()
    }
    /// Sets `.grad`.
    pub fn set_grad(&self, g: Option<Tensor>) {
        self.autograd().grad = g;
    }
    /// The Python object slot (see [`TensorImpl`]).
    pub fn pyobj_slot(&self) -> &AtomicPtr<c_void> {
        &self.0.pyobj
    }
    /// Address identifying the tensor impl (stable while alive).
    pub fn impl_id(&self) -> usize {
        Arc::as_ptr(&self.0) as usize
    }

    /// The backend that runs this tensor's kernels.
    pub fn backend(&self) -> Result<&'static dyn ferrotorch_core::Backend> {
        crate::backend::for_device(self.device())
    }

    /// PyTorch's error for reading values out of a `meta` tensor.
    pub fn check_has_data(&self) -> Result<()> {
        if self.device().is_meta() {
            return Err(ferrotorch_core::backend::meta_has_no_data());
        }
        Ok(())
    }

    /// Reads every element converted to `f64`, in row-major order (copied to
    /// host memory by the tensor's backend first).
    pub fn to_f64_vec(&self) -> Result<Vec<f64>> {
        self.check_has_data()?;
        let c = self.to_device(Device::CPU, DType::Float64, false)?.contiguous()?;
        let n = c.numel();
        // SAFETY: c is a contiguous f64 tensor of n elements.
        Ok(unsafe { std::slice::from_raw_parts(c.data_ptr() as *const f64, n) }.to_vec())
    }

    /// Reads every element as `T` (no conversion: the dtype must match),
    /// copied to host memory by the tensor's backend first.
    pub fn to_vec<T: Element>(&self) -> Result<Vec<T>> {
        if T::DTYPE != self.dtype() {
            return Err(Error::type_error(format!("expected dtype {} but the tensor is {}", T::DTYPE, self.dtype())));
        }
        self.check_has_data()?;
        let c = self.to_device(Device::CPU, self.dtype(), false)?.contiguous()?;
        // SAFETY: c is a contiguous tensor of numel elements of T.
        Ok(unsafe { std::slice::from_raw_parts(c.data_ptr() as *const T, c.numel()) }.to_vec())
    }
}

/// Checks that every element `layout` addresses lies inside `storage`.
pub fn check_fits(storage: &Storage, layout: &Layout, dtype: DType) -> Result<()> {
    let cap = storage.nbytes() / dtype.itemsize();
    if let Some((_, hi)) = layout.storage_span() {
        if hi > cap {
            return Err(Error::runtime(format!(
                "setStorage: sizes {}, strides {}, storage offset {}, and itemsize {} requiring a storage size of {} are out of bounds for storage of size {}",
                fmt_shape(&layout.shape),
                format!("{:?}", layout.strides.as_slice()).replace(' ', ""),
                layout.offset,
                dtype.itemsize(),
                hi.saturating_mul(dtype.itemsize()),
                storage.nbytes()
            )));
        }
    }
    Ok(())
}

impl std::fmt::Debug for Tensor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let vals = self.to_f64_vec().unwrap_or_default();
        let dt = if self.dtype() == default_dtype() || self.dtype() == DType::Int64 { String::new() } else { format!(", dtype={}", self.dtype()) };
        write!(f, "tensor({:?}, shape={:?}{})", vals, self.shape(), dt)
    }
}
