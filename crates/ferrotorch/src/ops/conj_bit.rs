//! The conjugate bit at the backend seam: the one place where a tensor's
//! lazy conjugation (`x.conj()` of a complex tensor, a view with the bit set)
//! meets the kernels, which know nothing of it.
//!
//! Every kernel operand is taken through [`Tensor::operand`] (reads) or
//! [`Tensor::operand_mut`] (writes), which return the holders here. For a
//! tensor without the bit they are the tensor's own storage and layout. For
//! one with the bit:
//!
//! - a read gets a scratch copy of the storage span its layout touches,
//!   conjugated, at the same element positions, so the operand's layout
//!   (or any broadcast of it) addresses it unchanged;
//! - a write gets such a scratch copy too (the plain values, so
//!   read-modify-write and partial writes such as `masked_fill_` see what
//!   the user sees), and when the holder is dropped (after the kernel, at the
//!   end of the statement that took it) the span is conjugated back into the
//!   real storage: `y = x.conj(); y[0] = 1+2j` stores `1-2j` in `x`.
//!
//! This is PyTorch's conjugate fallback (resolve the inputs, write a
//! mutable argument back through `copy_`) placed at the seam instead of
//! around each op.

use crate::Tensor;
use ferrotorch_core::{Backend, DType, Dst, Layout, Result, Src, Storage, UnaryOp};
use std::sync::Arc;

/// A kernel input: the tensor's storage, or a conjugated scratch copy of it.
pub(crate) struct Read<'a> {
    base: *const u8,
    layout: &'a Layout,
    /// Keeps the scratch copy alive while a kernel may read `base`.
    _scratch: Option<Arc<Storage>>,
}

impl Read<'_> {
    /// The operand for the kernel; borrows the holder so the scratch copy
    /// outlives every use of the pointer.
    pub(crate) fn src(&self) -> Src<'_> {
        Src { base: self.base, layout: self.layout }
    }
}

/// A kernel output: the tensor's storage, or (conjugate bit set) a scratch
/// copy written back conjugated when dropped.
pub(crate) struct Write<'a> {
    base: *mut u8,
    layout: &'a Layout,
    /// With the bit set: the tensor whose storage receives the write-back,
    /// and the scratch copy the kernel writes.
    back: Option<(&'a Tensor, Arc<Storage>, Option<Layout>)>,
}

impl Write<'_> {
    /// The operand for the kernel; borrows the holder so the write-back
    /// happens after every use of the pointer.
    pub(crate) fn dst(&self) -> Dst<'_> {
        Dst { base: self.base, layout: self.layout }
    }
}

impl Drop for Write<'_> {
    fn drop(&mut self) {
        if let Some((t, scratch, span)) = self.back.take() {
            // A same-device copy of one dtype cannot fail once the scratch
            // copy was made; Drop has no way to report it anyway.
            let _ = conj_span(t.backend(), t.dtype(), span.as_ref().unwrap_or(self.layout), scratch.raw_ptr(), t.storage().raw_ptr());
        }
    }
}

/// Does reading/writing `t` need the conjugation step? (Not on `meta`,
/// which has no values.)
fn needs_resolution(t: &Tensor) -> bool {
    t.is_conj() && !t.device().is_meta()
}

/// `t`'s storage, read through `layout`, as a kernel input.
pub(crate) fn read<'a>(t: &Tensor, layout: &'a Layout) -> Result<Read<'a>> {
    read_spanning(t, layout, None)
}

/// [`read`] for kernels that reach past `layout`'s span (indexing: the
/// index terms add offsets), resolving the whole storage.
pub(crate) fn read_whole<'a>(t: &Tensor, layout: &'a Layout) -> Result<Read<'a>> {
    read_spanning(t, layout, Some(whole(t)))
}

/// `t`'s storage, written through `layout`, as a kernel output.
pub(crate) fn write<'a>(t: &'a Tensor, layout: &'a Layout) -> Result<Write<'a>> {
    write_spanning(t, layout, None)
}

/// [`write`] for kernels that reach past `layout`'s span (see [`read_whole`]).
pub(crate) fn write_whole<'a>(t: &'a Tensor, layout: &'a Layout) -> Result<Write<'a>> {
    write_spanning(t, layout, Some(whole(t)))
}

/// A flat layout over every element of `t`'s storage.
fn whole(t: &Tensor) -> Layout {
    Layout::contiguous(&[t.storage().nbytes() / t.dtype().itemsize()])
}

fn read_spanning<'a>(t: &Tensor, layout: &'a Layout, span: Option<Layout>) -> Result<Read<'a>> {
    if !needs_resolution(t) {
        return Ok(Read { base: t.storage().raw_ptr(), layout, _scratch: None });
    }
    let scratch = scratch_like(t)?;
    conj_span(t.backend(), t.dtype(), span.as_ref().unwrap_or(layout), t.storage().raw_ptr(), scratch.raw_ptr())?;
    Ok(Read { base: scratch.raw_ptr(), layout, _scratch: Some(scratch) })
}

fn write_spanning<'a>(t: &'a Tensor, layout: &'a Layout, span: Option<Layout>) -> Result<Write<'a>> {
    if !needs_resolution(t) {
        return Ok(Write { base: t.storage().raw_ptr(), layout, back: None });
    }
    let scratch = scratch_like(t)?;
    conj_span(t.backend(), t.dtype(), span.as_ref().unwrap_or(layout), t.storage().raw_ptr(), scratch.raw_ptr())?;
    Ok(Write { base: scratch.raw_ptr(), layout, back: Some((t, scratch, span)) })
}

/// An uninitialised buffer as large as `t`'s storage, on its device, so
/// that positions in it are positions in the storage.
fn scratch_like(t: &Tensor) -> Result<Arc<Storage>> {
    let device = t.device();
    Ok(Arc::new(t.backend()?.allocate(t.storage().nbytes(), device)?))
}

/// Writes the conjugates of the complex elements `from[lo..hi]` to
/// `to[lo..hi]`, where `lo..hi` is the storage span of `layout`: the real
/// parts copied, the imaginary parts negated, by the real kernels over the
/// interleaved parts.
fn conj_span(backend: Result<&'static dyn Backend>, dtype: DType, layout: &Layout, from: *const u8, to: *mut u8) -> Result<()> {
    let Some((lo, hi)) = layout.storage_span() else { return Ok(()) };
    let backend = backend?;
    let n = hi - lo;
    let part = |which: usize| Layout { shape: [n].as_slice().into(), strides: [2isize].as_slice().into(), offset: 2 * lo + which };
    let (re, im) = (part(0), part(1));
    let rdt = dtype.to_real();
    backend.copy_cast(Dst { base: to, layout: &re }, rdt, Src { base: from, layout: &re }, rdt)?;
    backend.unary(UnaryOp::Neg, rdt, Dst { base: to, layout: &im }, Src { base: from, layout: &im })
}

/// `out = a @ b` (`+=` with `accumulate`) on `out`'s backend. Conjugate-bit
/// operands are read by the backend's conjugating product (`gemm`'s flags
/// on the CPU) where it has one, else resolved as every read is.
pub(crate) fn matmul(dtype: DType, out: &Tensor, a: &Tensor, b: &Tensor, accumulate: bool) -> Result<()> {
    let backend = out.backend()?;
    if needs_resolution(a) || needs_resolution(b) {
        fn stored(t: &Tensor) -> Src<'_> {
            Src { base: t.storage().raw_ptr(), layout: t.layout() }
        }
        let dst = out.operand_mut()?;
        if backend.matmul_conj(dtype, dst.dst(), stored(a), stored(b), accumulate, [a.is_conj(), b.is_conj()])? {
            return Ok(());
        }
    }
    backend.matmul(dtype, out.operand_mut()?.dst(), a.operand()?.src(), b.operand()?.src(), accumulate)
}

/// [`Tensor::operand`] of an optional tensor, taken before the kernel call
/// so that `.as_ref().map(Read::src)` can borrow it.
pub(crate) fn read_opt(t: Option<&Tensor>) -> Result<Option<Read<'_>>> {
    t.map(|t| t.operand()).transpose()
}

/// [`Tensor::operand_mut`] of an optional tensor (see [`read_opt`]).
pub(crate) fn write_opt(t: Option<&Tensor>) -> Result<Option<Write<'_>>> {
    t.map(|t| t.operand_mut()).transpose()
}

#[cfg(test)]
mod tests {
    use crate::ops::arith::{binary_, BinaryOp, Operand};
    use crate::Tensor;
    use ferrotorch_core::Scalar;

    /// `[re0, im0, re1, im1, ...]` as a complex128 tensor of shape `shape`.
    fn c(parts: Vec<f64>, shape: &[usize]) -> Tensor {
        let n = parts.len() / 2;
        let z = Tensor::from_vec(parts, &[n, 2]).unwrap().view_as_complex().unwrap();
        z.reshape(&shape.iter().map(|&s| s as i64).collect::<Vec<_>>()).unwrap()
    }

    /// The stored parts (through a view without the bit).
    fn stored(t: &Tensor) -> Vec<f64> {
        let t = if t.is_conj() { t.conj_view().unwrap() } else { t.clone() };
        t.view_as_real().unwrap().contiguous().unwrap().to_vec::<f64>().unwrap()
    }

    /// The parts as the tensor shows them (a resolved copy).
    fn seen(t: &Tensor) -> Vec<f64> {
        stored(&t.resolve_conj().unwrap())
    }

    #[test]
    fn a_conj_view_shares_storage_and_reads_conjugated() {
        let x = c(vec![1.0, 2.0, 3.0, -4.0], &[2]);
        let y = x.conj().unwrap();
        assert!(y.is_conj() && !x.is_conj());
        assert!(std::sync::Arc::ptr_eq(x.storage(), y.storage()) && y.shares_version_with(&x));
        assert_eq!(seen(&y), vec![1.0, -2.0, 3.0, 4.0]);
        // conj of a conj view clears the bit; real tensors are returned as they are.
        assert!(!y.conj().unwrap().is_conj());
        let r = Tensor::from_vec(vec![1.0f64], &[1]).unwrap();
        assert!(r.conj().unwrap().same(&r));
        // Elementwise reads: y + y = 2 conj(x).
        assert_eq!(stored(&y.add(&y).unwrap()), vec![2.0, -4.0, 6.0, 8.0]);
        assert_eq!(y.item_at(1), Scalar::Complex(3.0, 4.0));
    }

    #[test]
    fn writes_store_conjugates_in_the_base() {
        let x = c(vec![1.0, 2.0, 3.0, -4.0, 5.0, 6.0], &[3]);
        let y = x.conj().unwrap();
        let v0 = x.version();
        // A partial write: only the middle element, read-modify-write.
        let mid = y.narrow(0, 1, 1).unwrap();
        binary_(&mid, Operand::S(Scalar::Complex(1.0, 1.0)), BinaryOp::Add).unwrap();
        // seen (3 + 4i) + (1 + i) = 4 + 5i, stored 4 - 5i; the others untouched.
        assert_eq!(stored(&x), vec![1.0, 2.0, 4.0, -5.0, 5.0, 6.0]);
        assert!(x.version() > v0);
        y.fill_(Scalar::Complex(0.5, 1.5)).unwrap();
        assert_eq!(stored(&x), vec![0.5, -1.5, 0.5, -1.5, 0.5, -1.5]);
    }

    #[test]
    fn products_see_the_conjugates() {
        let x = c(vec![1.0, 2.0, 3.0, -4.0, 0.0, 1.0, 2.0, 0.5], &[2, 2]);
        // The Hermitian product x^H x against the resolved operand.
        let xh = x.conj().unwrap().transpose(0, 1).unwrap();
        let want = xh.resolve_conj().unwrap().matmul(&x).unwrap();
        assert_eq!(seen(&xh.matmul(&x).unwrap()), seen(&want));
        // (x^H x)[0][0] = |1+2i|^2 + |i|^2 = 6.
        assert_eq!(&seen(&want)[..2], &[6.0, 0.0]);
        // The conjugate on the right, through the accumulating product of addmm.
        let zero = c(vec![0.0; 8], &[2, 2]);
        let got = zero.addmm_scaled(&x, &x.conj().unwrap(), Scalar::Float(1.0), Scalar::Float(1.0)).unwrap();
        let want = x.matmul(&x.conj().unwrap().resolve_conj().unwrap()).unwrap();
        assert_eq!(seen(&got), seen(&want));
    }

    impl Tensor {
        fn item_at(&self, i: usize) -> Scalar {
            self.get_flat(i).unwrap()
        }
    }
}
