//! `count_nonzero`, `nonzero` and `masked_scatter` on `compact.cu`: tile
//! counts, one block scanning them into offsets, then a placing pass. The
//! totals the host needs (an output size, the source-length check) are read
//! back with one synchronous copy.

use super::blas::device_of_ptr;
use super::{device_at, drv, function, no_kernel, per_row, ptr, Cuda};
use crate::geometry::{KLayout, BLOCK};
use crate::kernels::Family;
use cudarc::driver::PushKernelArg;
use ferrotorch_core::{Backend, DType, Dst, Error, Layout, Result, Scalar, Src, Storage};

/// `layout` as the kernels take it, dims kept as they are (the coordinates
/// and the row-major order are those of its shape).
fn uncoalesced(layout: &Layout) -> Result<KLayout> {
    KLayout::new(&layout.shape, &layout.strides, layout.offset)
}

/// `mask`'s layout broadcast to `shape` (right-aligned, stride 0 where it
/// has size 1 or no dim).
fn broadcast_to(mask: &Layout, shape: &[usize]) -> Result<Layout> {
    let lead = shape.len().checked_sub(mask.shape.len()).ok_or_else(|| {
        Error::runtime(format!("masked_scatter: mask of shape {:?} does not broadcast to {shape:?}", mask.shape))
    })?;
    let mut strides = vec![0isize; shape.len()];
    for (k, (&m, &s)) in mask.shape.iter().zip(&mask.strides).enumerate() {
        let d = shape[lead + k];
        if m != d && m != 1 {
            return Err(Error::runtime(format!("masked_scatter: mask of shape {:?} does not broadcast to {shape:?}", mask.shape)));
        }
        strides[lead + k] = if m == 1 { 0 } else { s };
    }
    Ok(Layout { shape: shape.into(), strides: strides.into(), offset: mask.offset })
}

/// Tile counts scanned into offsets: (the offsets' storage, the total).
struct Offsets {
    storage: Storage,
    tiles: usize,
    total: usize,
}

impl Cuda {
    /// Counts the selected elements among the `n` of `x` (a layout and its
    /// storage) per tile with `entry`, then scans the counts into offsets.
    fn tile_offsets(&self, near: *const u8, dtype: DType, entry: &'static str, n: usize, x: (&KLayout, u64)) -> Result<Offsets> {
        let tiles = n.div_ceil(BLOCK as usize).max(1);
        let dev = device_at(near)?;
        // The tile counts, then the total in the last slot.
        let storage = self.allocate((tiles + 1) * 8, device_of_ptr(near)?)?;
        let (cp, tp) = (ptr(storage.as_ptr()), ptr(storage.as_ptr()) + (tiles * 8) as u64);
        let (n64, t64) = (n as i64, tiles as i64);
        let f = function(dev, Family::Compact, dtype, entry)?;
        let mut b = dev.stream.launch_builder(&f);
        b.arg(x.0).arg(&x.1).arg(&n64).arg(&cp).arg(&t64);
        // SAFETY: `compact_tile_counts(FtLayout, const T*, i64, i64*, i64)` or
        // `compact_mask_counts(FtLayout, const ft_bool*, i64, i64*, i64)`, as
        // pushed; the layout addresses n elements of its storage and counts
        // holds `tiles` values.
        unsafe { b.launch(per_row(tiles, BLOCK)) }.map_err(drv)?;
        let f = function(dev, Family::Compact, dtype, "compact_scan_tiles")?;
        let mut b = dev.stream.launch_builder(&f);
        b.arg(&cp).arg(&t64).arg(&tp);
        // SAFETY: `compact_scan_tiles(i64*, i64, i64*)`, as pushed; one block
        // of 1024 threads (its shared array's size).
        unsafe { b.launch(per_row(1, 1024)) }.map_err(drv)?;
        // SAFETY: the storage holds tiles + 1 int64 values; slot `tiles` was
        // written by the scan, which the synchronous read waits for.
        let total = match unsafe { self.read_scalar(storage.as_ptr(), DType::Int64, tiles) }? {
            Scalar::Int(v) => v as usize,
            other => return Err(Error::runtime(format!("compaction total read back as {other:?}"))),
        };
        Ok(Offsets { storage, tiles, total })
    }

    pub(super) fn count_nonzero_impl(&self, x: Src, dtype: DType) -> Result<usize> {
        let n = x.layout.numel();
        if n == 0 {
            return Ok(0);
        }
        if dtype.is_complex() {
            return Err(no_kernel(&format!("count_nonzero ({dtype})")));
        }
        let xl = uncoalesced(x.layout)?;
        Ok(self.tile_offsets(x.base, dtype, "compact_tile_counts", n, (&xl, ptr(x.base)))?.total)
    }

    pub(super) fn nonzero_impl(&self, x: Src, dtype: DType, out: Dst) -> Result<()> {
        let n = x.layout.numel();
        if n == 0 || out.layout.numel() == 0 {
            return Ok(());
        }
        if dtype.is_complex() {
            return Err(no_kernel(&format!("nonzero ({dtype})")));
        }
        let xl = uncoalesced(x.layout)?;
        let offs = self.tile_offsets(x.base, dtype, "compact_tile_counts", n, (&xl, ptr(x.base)))?;
        if offs.total * x.layout.ndim() != out.layout.numel() {
            return Err(Error::runtime(format!(
                "nonzero: the output of shape {:?} does not hold {} coordinates",
                out.layout.shape, offs.total
            )));
        }
        let dev = device_at(x.base)?;
        let f = function(dev, Family::Compact, dtype, "compact_nonzero")?;
        let (xp, op, n64, t64) = (ptr(x.base), ptr(out.base) + (out.layout.offset * 8) as u64, n as i64, offs.tiles as i64);
        let cp = ptr(offs.storage.as_ptr());
        let mut b = dev.stream.launch_builder(&f);
        b.arg(&xl).arg(&xp).arg(&n64).arg(&cp).arg(&t64).arg(&op);
        // SAFETY: `compact_nonzero(FtLayout, const T*, i64, const i64*, i64,
        // i64*)`, as pushed; out is contiguous int64 of total × ndim
        // (checked above), the offsets `tiles` values.
        unsafe { b.launch(per_row(offs.tiles, BLOCK)) }.map_err(drv)?;
        Ok(())
    }

    pub(super) fn masked_scatter_impl(&self, dtype: DType, dst: Dst, mask: Src, source: Src) -> Result<()> {
        let n = dst.layout.numel();
        if n == 0 {
            return Ok(());
        }
        if dtype.is_complex() {
            return Err(no_kernel(&format!("masked_scatter ({dtype})")));
        }
        if dst.layout.has_internal_overlap() {
            return Err(no_kernel("masked_scatter into an overlapping view"));
        }
        let dl = uncoalesced(dst.layout)?;
        let ml = uncoalesced(&broadcast_to(mask.layout, &dst.layout.shape)?)?;
        let sl = uncoalesced(source.layout)?;
        // The mask's module is the destination dtype's (it reads the mask as bool).
        let offs = self.tile_offsets(dst.base, dtype, "compact_mask_counts", n, (&ml, ptr(mask.base)))?;
        if offs.total > source.layout.numel() {
            return Err(Error::runtime("Number of elements of source < number of ones in mask"));
        }
        if offs.total == 0 {
            return Ok(());
        }
        let dev = device_at(dst.base)?;
        let f = function(dev, Family::Compact, dtype, "compact_masked_scatter")?;
        let (dp, mp, sp, n64, t64) = (ptr(dst.base), ptr(mask.base), ptr(source.base), n as i64, offs.tiles as i64);
        let cp = ptr(offs.storage.as_ptr());
        let mut b = dev.stream.launch_builder(&f);
        b.arg(&dl).arg(&dp).arg(&ml).arg(&mp).arg(&sl).arg(&sp).arg(&n64).arg(&cp).arg(&t64);
        // SAFETY: `compact_masked_scatter(FtLayout, T*, FtLayout, const
        // ft_bool*, FtLayout, const T*, i64, const i64*, i64)`, as pushed;
        // each layout addresses its own storage, dst has no overlap (each
        // element written once) and at most `total` <= source's numel source
        // elements are read.
        unsafe { b.launch(per_row(offs.tiles, BLOCK)) }.map_err(drv)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_broadcast_right_aligned_with_zero_strides() {
        let m = Layout::contiguous(&[3, 1]);
        let b = broadcast_to(&m, &[2, 3, 4]).unwrap();
        assert_eq!(&b.strides[..], &[0, 1, 0]);
        assert!(broadcast_to(&Layout::contiguous(&[5]), &[2, 3]).is_err());
        assert!(broadcast_to(&Layout::contiguous(&[2, 2, 2, 2]), &[2, 2]).is_err());
    }
}
