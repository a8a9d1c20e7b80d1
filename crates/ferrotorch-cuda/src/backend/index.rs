//! Indexed reads and writes on the `index.cu` kernels: the storage offset of
//! every position is computed on the device (checking every index value
//! first, as the CPU kernels do), then gathered from or scattered into.

use super::{device_at, drv, function, grid, no_kernel, ptr, Cuda};
use crate::geometry::KLayout;
use crate::kernels::Family;
use cudarc::driver::PushKernelArg;
use ferrotorch_core::backend::IndexTerm;
use ferrotorch_core::op::index::IndexReduce;
use ferrotorch_core::{Backend, DType, Dst, Error, Layout, Result, Scalar, Src, Storage};

fn klayout(l: &Layout) -> Result<KLayout> {
    KLayout::new(&l.shape, &l.strides, l.offset)
}

impl Cuda {
    /// The storage offset of every position of `pos` plus its index terms,
    /// in a device buffer of `pos.numel()` int64; the first bad index value
    /// (first term with one, first position in row-major order) is the error.
    fn indexed_offsets(&self, dtype: DType, pos: &Layout, terms: &[IndexTerm], near: *const u8) -> Result<Storage> {
        let npos = pos.numel();
        let dev = device_at(near)?;
        let device = ferrotorch_core::Device { kind: ferrotorch_core::DeviceType::Cuda, index: Some(dev.index as u32) };
        let offs = self.allocate(npos.max(1) * 8, device)?;
        let flag = self.allocate(8, device)?;
        let one = Layout::contiguous(&[1]);
        // u64::MAX: no bad value yet.
        self.fill(Dst { base: flag.as_mut_ptr(), layout: &one }, DType::Int64, Scalar::Int(-1))?;
        if npos == 0 {
            return Ok(offs);
        }
        let n64 = npos as i64;
        let init = function(dev, Family::Index, dtype, "index_offsets_init")?;
        let (kp, op) = (klayout(pos)?, ptr(offs.as_ptr()));
        let mut b = dev.stream.launch_builder(&init);
        b.arg(&kp).arg(&op).arg(&n64);
        // SAFETY: `index_offsets_init(FtLayout, i64*, i64)`, as pushed; offs
        // holds npos int64.
        unsafe { b.launch(grid(npos)) }.map_err(drv)?;
        let term_fn = function(dev, Family::Index, dtype, "index_offsets_term")?;
        let fp = ptr(flag.as_ptr());
        for (t, term) in terms.iter().enumerate() {
            if term.index.layout.shape != pos.shape {
                return Err(Error::runtime("internal error: an index operand does not match the indexed positions"));
            }
            let (kl, ip) = (klayout(term.index.layout)?, ptr(term.index.base));
            let (size, negative, stride) = (term.bounds.size as i64, term.bounds.negative as i32, term.stride as i64);
            let key_base = (t as u64) * npos as u64;
            let mut b = dev.stream.launch_builder(&term_fn);
            b.arg(&kl).arg(&ip).arg(&n64).arg(&size).arg(&negative).arg(&stride).arg(&op).arg(&fp).arg(&key_base);
            // SAFETY: `index_offsets_term(FtLayout, const i64*, i64, i64, int,
            // i64, i64*, u64*, u64)`, as pushed; the index layout has the
            // positions' shape and lies in its int64 storage.
            unsafe { b.launch(grid(npos)) }.map_err(drv)?;
        }
        // SAFETY: `flag` holds one int64 written by the kernels above (the
        // read is ordered after them on the stream).
        let first = unsafe { self.read_scalar(flag.as_ptr(), DType::Int64, 0)? }.to_i64() as u64;
        if first != u64::MAX {
            let (t, p) = ((first / npos as u64) as usize, (first % npos as u64) as i64);
            let term = terms.get(t).ok_or_else(|| Error::runtime("internal error: bad index key"))?;
            let at = klayout(term.index.layout)?.offset_of(p);
            // SAFETY: `at` is the element of position p in the index operand.
            let v = unsafe { self.read_scalar(term.index.base, DType::Int64, at as usize)? }.to_i64();
            return Err(term.bounds.error(v));
        }
        Ok(offs)
    }

    pub(super) fn index_read_impl(&self, dtype: DType, src: Src, terms: &[IndexTerm], block: &Layout, out: Dst) -> Result<()> {
        let (npos, nblock) = (src.layout.numel(), block.numel());
        let offs = self.indexed_offsets(dtype, src.layout, terms, out.base)?;
        if npos * nblock == 0 {
            return Ok(());
        }
        if out.layout.numel() != npos * nblock {
            return Err(Error::runtime("internal error: index_read offsets do not match the output shape"));
        }
        let dev = device_at(out.base)?;
        let f = function(dev, Family::Index, dtype, "index_gather")?;
        let (kb, ko) = (klayout(block)?, klayout(out.layout)?);
        let (op, sp, dp, np, nb) = (ptr(offs.as_ptr()), ptr(src.base), ptr(out.base), npos as i64, nblock as i64);
        let mut b = dev.stream.launch_builder(&f);
        b.arg(&op).arg(&kb).arg(&sp).arg(&ko).arg(&dp).arg(&np).arg(&nb);
        // SAFETY: `index_gather(const i64*, FtLayout, const T*, FtLayout, T*,
        // i64, i64)`, as pushed; the offsets were checked in range, block
        // offsets are relative to them, and `out` has npos x nblock elements.
        unsafe { b.launch(grid(npos * nblock)) }.map_err(drv)?;
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn index_write_impl(&self, dtype: DType, dst: Dst, terms: &[IndexTerm], block: &Layout, vals: Src, mode: IndexReduce) -> Result<()> {
        let (npos, nblock) = (dst.layout.numel(), block.numel());
        let (code, alpha) = match mode {
            IndexReduce::Assign => (0, 0.0),
            IndexReduce::Add => (1, 0.0),
            IndexReduce::AddScaled(a) if dtype.is_floating_point() => (2, a),
            IndexReduce::AddScaled(_) => return Err(no_kernel("index_add with alpha (integer)")),
            IndexReduce::Mul => (3, 0.0),
            IndexReduce::Max => (4, 0.0),
            IndexReduce::Min => (5, 0.0),
        };
        let offs = self.indexed_offsets(dtype, dst.layout, terms, dst.base)?;
        if npos * nblock == 0 {
            return Ok(());
        }
        if vals.layout.numel() != npos * nblock {
            return Err(Error::runtime("internal error: index_write values do not match the offsets"));
        }
        let dev = device_at(dst.base)?;
        let f = function(dev, Family::Index, dtype, "index_scatter")?;
        let (kb, kv) = (klayout(block)?, klayout(vals.layout)?);
        let (op, dp, vp, np, nb, code) = (ptr(offs.as_ptr()), ptr(dst.base), ptr(vals.base), npos as i64, nblock as i64, code as i32);
        let mut b = dev.stream.launch_builder(&f);
        b.arg(&op).arg(&kb).arg(&dp).arg(&kv).arg(&vp).arg(&np).arg(&nb).arg(&code).arg(&alpha);
        // SAFETY: `index_scatter(const i64*, FtLayout, T*, FtLayout, const
        // T*, i64, i64, int, double)`, as pushed; checked offsets plus block
        // offsets lie in dst; vals has npos x nblock elements and does not
        // alias dst.
        unsafe { b.launch(grid(npos * nblock)) }.map_err(drv)?;
        Ok(())
    }
}
