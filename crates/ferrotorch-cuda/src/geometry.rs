//! Operand layouts as kernels take them: [`KLayout`], passed by value (no
//! upload per launch), dims innermost first, 64-bit sizes and strides.
//! Operands of one elementwise launch are put in one dim order and their
//! contiguous dims merged, with the engine's one rule for both
//! (`ferrotorch_core::layout::{iteration_order, coalesce_dims}`).

use cudarc::driver::DeviceRepr;
use ferrotorch_core::layout::{coalesce_dims, iteration_order};
use ferrotorch_core::{Error, Layout, Result, Strides};

/// Most dims a kernel operand may have (`FT_MAX_DIMS` in `prelude.cuh`).
pub const MAX_DIMS: usize = 25;

/// `FtLayout` of `prelude.cuh`: sizes and strides innermost first, in
/// elements, plus the storage offset.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KLayout {
    /// Sizes, innermost dim first; unused entries are 1.
    pub sizes: [i64; MAX_DIMS],
    /// Strides, innermost dim first; unused entries are 0.
    pub strides: [i64; MAX_DIMS],
    /// Storage offset in elements.
    pub offset: i64,
    /// Dims in use.
    pub ndim: i32,
    /// Padding to 8 bytes (the C struct has it too).
    pub pad: i32,
}

// SAFETY: `KLayout` is `repr(C)` plain data whose fields match `FtLayout`
// in `prelude.cuh` one for one (25 i64, 25 i64, i64, int, int), so its
// bytes are a valid kernel parameter of that type.
unsafe impl DeviceRepr for KLayout {}

impl KLayout {
    /// Packs `sizes`/`strides` given outermost first.
    pub fn new(sizes: &[usize], strides: &[isize], offset: usize) -> Result<KLayout> {
        if sizes.len() > MAX_DIMS {
            return Err(Error::runtime(format!(
                "CUDA kernels take tensors of at most {MAX_DIMS} dims after merging contiguous dims, got {}",
                sizes.len()
            )));
        }
        let mut k = KLayout { sizes: [1; MAX_DIMS], strides: [0; MAX_DIMS], offset: offset as i64, ndim: sizes.len() as i32, pad: 0 };
        for (j, d) in (0..sizes.len()).rev().enumerate() {
            k.sizes[j] = sizes[d] as i64;
            k.strides[j] = strides[d] as i64;
        }
        if k.ndim == 0 {
            // A 0-d tensor is one element: one dim of size 1 keeps the
            // kernels' loop simple.
            k.ndim = 1;
        }
        Ok(k)
    }

    /// The element offset of the `i`-th element in row-major order (what
    /// `ft_offset` computes on the device), for host-side tests.
    pub fn offset_of(&self, mut i: i64) -> i64 {
        let mut off = self.offset;
        for k in 0..self.ndim as usize {
            let s = self.sizes[k];
            off += (i % s) * self.strides[k];
            i /= s;
        }
        off
    }
}

/// Layouts of `N` operands of the same shape, in one common dim order with
/// mergeable dims merged: what one elementwise launch takes.
pub fn elementwise<const N: usize>(shape: &[usize], layouts: [&Layout; N]) -> Result<[KLayout; N]> {
    let strides: Vec<&[isize]> = layouts.iter().map(|l| &l.strides[..]).collect();
    // Innermost first, as PyTorch's TensorIterator orders dims.
    let order = iteration_order(shape, &strides);
    let inner_shape: Vec<usize> = order.iter().map(|&d| shape[d]).collect();
    let mut per_op: Vec<Strides> = layouts.iter().map(|l| order.iter().map(|&d| l.strides[d]).collect()).collect();
    let merged = coalesce_dims(&inner_shape, &mut per_op);
    // KLayout::new takes outermost first.
    let outer: Vec<usize> = merged.iter().rev().copied().collect();
    let mut out = [KLayout::new(&[], &[], 0)?; N];
    for (k, l) in layouts.iter().enumerate() {
        let st: Vec<isize> = per_op[k].iter().rev().copied().collect();
        out[k] = KLayout::new(&outer, &st, l.offset)?;
    }
    Ok(out)
}

/// A reduction's geometry: the kept dims of `x` and of `out`, and the
/// reduced dims of `x` (offset 0), as `reduce.cu` takes them.
pub struct ReduceGeometry {
    /// The kept dims walked through `x`.
    pub outer_x: KLayout,
    /// The kept dims walked through the output.
    pub outer_out: KLayout,
    /// The reduced dims of `x`.
    pub inner_x: KLayout,
    /// Output elements.
    pub n_out: usize,
    /// Reduced elements per output.
    pub n_in: usize,
}

/// Splits `x` (with `out` of the keepdim shape) by the `dims` flags.
pub fn reduction(x: &Layout, out: &Layout, dims: &[bool]) -> Result<ReduceGeometry> {
    let (mut ks, mut kx, mut ko, mut rs, mut rx) = (vec![], vec![], vec![], vec![], vec![]);
    for d in 0..x.ndim() {
        if dims.get(d).copied().unwrap_or(false) {
            rs.push(x.shape[d]);
            rx.push(x.strides[d]);
        } else {
            ks.push(x.shape[d]);
            kx.push(x.strides[d]);
            ko.push(out.strides[d]);
        }
    }
    Ok(ReduceGeometry {
        outer_x: KLayout::new(&ks, &kx, x.offset)?,
        outer_out: KLayout::new(&ks, &ko, out.offset)?,
        inner_x: KLayout::new(&rs, &rx, 0)?,
        n_out: ks.iter().product(),
        n_in: rs.iter().product(),
    })
}

/// Threads per block of the elementwise and reduction launches.
pub const BLOCK: u32 = 256;

/// Blocks for a grid-stride loop over `n` elements: enough to fill the
/// device, capped so huge tensors loop instead of launching millions.
pub fn grid_for(n: usize) -> u32 {
    let blocks = n.div_ceil(BLOCK as usize).max(1);
    blocks.min(65_535 * 8) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    fn offsets(k: &KLayout, n: i64) -> Vec<i64> {
        (0..n).map(|i| k.offset_of(i)).collect()
    }

    /// Row-major element offsets straight from a Layout (the reference).
    fn reference(l: &Layout) -> Vec<i64> {
        let n = l.numel();
        (0..n)
            .map(|mut i| {
                let mut off = l.offset as i64;
                for d in (0..l.ndim()).rev() {
                    off += (i % l.shape[d]) as i64 * l.strides[d] as i64;
                    i /= l.shape[d];
                }
                off
            })
            .collect()
    }

    #[test]
    fn klayout_is_the_c_struct() {
        assert_eq!(std::mem::size_of::<KLayout>(), 8 * (2 * MAX_DIMS + 1) + 8);
        assert_eq!(std::mem::align_of::<KLayout>(), 8);
    }

    #[test]
    fn packed_layouts_visit_every_element_as_the_layout_does() {
        let base = Layout::contiguous(&[2, 3, 4]);
        let cases = [
            base.clone(),
            base.transpose(0, 2).unwrap(),
            base.permute(&[1, 2, 0]).unwrap(),
            base.slice(2, 1, 4, 2).unwrap(),
            base.expand(&[2, 3, 4]).unwrap(),
            Layout::contiguous(&[3, 1]).expand(&[3, 5]).unwrap(),
            base.narrow(1, 1, 2).unwrap(),
            Layout::contiguous(&[]),
        ];
        for l in &cases {
            let out = Layout::contiguous(&l.shape);
            let [ko, kx] = elementwise(&l.shape, [&out, l]).unwrap();
            // Same element pairs (out offset -> x offset) as the reference,
            // in whatever order the merged dims visit them.
            let n = l.numel().max(1) as i64;
            let mut got: Vec<(i64, i64)> = offsets(&ko, n).into_iter().zip(offsets(&kx, n)).collect();
            let mut want: Vec<(i64, i64)> = reference(&out).into_iter().zip(reference(l)).collect();
            if l.ndim() == 0 {
                want = vec![(0, l.offset as i64)];
            }
            got.sort();
            want.sort();
            assert_eq!(got, want, "{l:?}");
        }
    }

    #[test]
    fn contiguous_operands_merge_into_one_dim() {
        let l = Layout::contiguous(&[4, 5, 6]);
        let [k] = elementwise(&l.shape, [&l]).unwrap();
        assert_eq!((k.ndim, k.sizes[0], k.strides[0]), (1, 120, 1));
    }

    #[test]
    fn too_many_dims_is_an_error() {
        // Alternating strides cannot merge.
        let shape = vec![2usize; 26];
        let strides: Vec<isize> = (0..26).map(|d| if d % 2 == 0 { 1 << (d + 30) } else { 1 << d }).collect();
        let l = Layout { shape: shape.clone().into(), strides: strides.into(), offset: 0 };
        let err = elementwise(&shape, [&l]).unwrap_err();
        assert!(err.msg.contains("at most 25 dims"), "{}", err.msg);
    }

    #[test]
    fn reduction_splits_kept_and_reduced_dims() {
        let x = Layout::contiguous(&[2, 3, 4]);
        let out = Layout::contiguous(&[2, 1, 4]);
        let g = reduction(&x, &out, &[false, true, false]).unwrap();
        assert_eq!((g.n_out, g.n_in), (8, 3));
        // Output r = (i, k) reads x[i, :, k]: its first element and stride.
        for r in 0..8i64 {
            let (i, k) = (r / 4, r % 4);
            assert_eq!(g.outer_x.offset_of(r), i * 12 + k);
            assert_eq!(g.outer_out.offset_of(r), i * 4 + k);
        }
        assert_eq!(offsets(&g.inner_x, 3), vec![0, 4, 8]);
    }
}
