//! Convolutions on CUDA as column matrices and cuBLAS products, the CPU's
//! scheme: `conv.cu` unfolds images into `(channels · taps) × P` column
//! matrices (vol2col) and folds them back (col2vol), and each group's
//! product is one strided-batched GEMM over a chunk of images
//! ([`super::blas::matmul`]). float32/float64, as cuBLAS's products here.
//!
//! The three roles of [`ConvRole`] (operands in the plain convolution's
//! sense): `Forward (x, w) -> y`, `InputGrad (gy, w) -> x`-shaped (also the
//! transposed convolution), `WeightGrad (gy, x) -> w`-shaped. Operands are
//! contiguous (the seam's contract).

use super::blas::{device_of_ptr, matmul};
use super::{device_at, drv, function, grid, no_kernel, ptr, Cuda};
use crate::kernels::Family;
use cudarc::driver::{DeviceRepr, PushKernelArg};
use ferrotorch_core::backend::ConvKernels;
use ferrotorch_core::op::conv::{Conv3d, ConvRole, ConvSpec};
use ferrotorch_core::{Backend, DType, Dst, Layout, Result, Scalar, Shape, Src, Storage, Strides};

/// Most bytes of column matrices one chunk of images unfolds into (at
/// least one image is unfolded whatever its size).
const COL_BUDGET: usize = 256 << 20;

/// `FtConvGeom` of `conv.cu`: the convolution seen in three dims, by value.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct KConvGeom {
    input: [i64; 3],
    kernel: [i64; 3],
    output: [i64; 3],
    stride: [i64; 3],
    padding: [i64; 3],
    dilation: [i64; 3],
}

// SAFETY: `repr(C)` plain data laid out as `FtConvGeom` (six arrays of three
// i64, no padding), so its bytes are a valid kernel parameter of that type.
unsafe impl DeviceRepr for KConvGeom {}

impl KConvGeom {
    /// The kernels' copy of the problem in three dims.
    fn of(v: &Conv3d) -> KConvGeom {
        let wide = |a: [usize; 3]| a.map(|x| x as i64);
        KConvGeom {
            input: wide(v.input),
            kernel: wide(v.kernel),
            output: wide(v.output),
            stride: wide(v.stride),
            padding: wide(v.padding),
            dilation: wide(v.dilation),
        }
    }
}

/// A strided matrix view (`[batch,] rows × cols`) into a storage.
fn view(shape: &[usize], strides: &[isize], offset: usize) -> Layout {
    Layout { shape: Shape::from_slice(shape), strides: Strides::from_slice(strides), offset }
}

/// Sizes of one problem, in elements.
struct Sizes {
    geom: KConvGeom,
    /// The images are their own column matrices ([`Conv3d::direct`]).
    direct: bool,
    cin: usize,
    cout: usize,
    /// Output channels per group.
    og: usize,
    /// Rows of a group's column matrix (`cg · taps`).
    kg: usize,
    /// Output positions per channel.
    p: usize,
    /// Input positions per channel.
    plane: usize,
    /// Elements of one image's column matrix.
    col_image: usize,
}

impl Sizes {
    fn of(spec: &ConvSpec) -> Sizes {
        let v = spec.as_3d();
        let groups = spec.groups.max(1);
        let (cin, cout) = (spec.in_channels, spec.out_channels);
        let (cg, og) = (cin / groups, cout / groups);
        let (taps, p, plane) = (v.taps(), v.out_plane(), v.in_plane());
        Sizes { geom: KConvGeom::of(&v), direct: v.direct(), cin, cout, og, kg: cg * taps, p, plane, col_image: cin * taps * p }
    }

    /// Images per chunk of column matrices.
    fn chunk(&self, batch: usize, itemsize: usize) -> usize {
        (COL_BUDGET / (self.col_image * itemsize).max(1)).clamp(1, batch.max(1))
    }
}

impl Cuda {
    /// Unfolds `images` images of `x` (first element at `x_at`) into `col`.
    fn vol2col(&self, dtype: DType, s: &Sizes, x_at: u64, col: u64, images: usize) -> Result<()> {
        let n = images * s.col_image;
        if n == 0 {
            return Ok(());
        }
        let dev = device_at(col as *const u8)?;
        let f = function(dev, Family::Conv, dtype, "conv_vol2col")?;
        let (imgs, ch, xs, cs) = (images as i64, s.cin as i64, (s.cin * s.plane) as i64, s.col_image as i64);
        let mut b = dev.stream.launch_builder(&f);
        b.arg(&x_at).arg(&col).arg(&imgs).arg(&ch).arg(&s.geom).arg(&xs).arg(&cs);
        // SAFETY: `conv_vol2col(const T*, T*, i64, i64, FtConvGeom, i64,
        // i64)`, as pushed; x holds `images` images of cin × plane elements
        // from x_at and col `images` column matrices of col_image elements.
        unsafe { b.launch(grid(n)) }.map_err(drv)?;
        Ok(())
    }

    /// Folds `images` column matrices of `col` into images at `x_at` (plus
    /// `bias` per channel when not 0).
    fn col2vol(&self, dtype: DType, s: &Sizes, col: u64, bias: u64, x_at: u64, images: usize) -> Result<()> {
        let n = images * s.cin * s.plane;
        if n == 0 {
            return Ok(());
        }
        let dev = device_at(col as *const u8)?;
        let f = function(dev, Family::Conv, dtype, "conv_col2vol")?;
        let (imgs, ch, xs, cs) = (images as i64, s.cin as i64, (s.cin * s.plane) as i64, s.col_image as i64);
        let mut b = dev.stream.launch_builder(&f);
        b.arg(&col).arg(&bias).arg(&x_at).arg(&imgs).arg(&ch).arg(&s.geom).arg(&xs).arg(&cs);
        // SAFETY: `conv_col2vol(const T*, const T* (null: no bias), T*, i64,
        // i64, FtConvGeom, i64, i64)`, as pushed; sizes as in `vol2col`,
        // bias (when given) cin elements. Every image element is written.
        unsafe { b.launch(grid(n)) }.map_err(drv)?;
        Ok(())
    }

    /// A scratch buffer for `images` column matrices on `out`'s device.
    fn columns(&self, dtype: DType, s: &Sizes, images: usize, near: *const u8) -> Result<Storage> {
        self.allocate(images * s.col_image * dtype.itemsize(), device_of_ptr(near)?)
    }

    /// Images per chunk and the chunk's column buffer (none when the images
    /// are their own column matrices: a pointwise unit-stride kernel).
    fn column_chunks(&self, dtype: DType, s: &Sizes, batch: usize, near: *const u8) -> Result<(usize, Option<Storage>)> {
        if s.direct {
            return Ok((batch.max(1), None));
        }
        let chunk = s.chunk(batch, dtype.itemsize());
        Ok((chunk, Some(self.columns(dtype, s, chunk, near)?)))
    }

    /// The column matrices of images `n0..n0 + nb` of `x`: unfolded into
    /// `col`, or the images themselves without one. Returns the storage,
    /// the first element's offset and the element step between images.
    fn unfold_chunk(&self, dtype: DType, s: &Sizes, x: Src, col: Option<&Storage>, n0: usize, nb: usize) -> Result<(*const u8, usize, usize)> {
        let ci = s.cin * s.plane;
        Ok(match col {
            Some(c) => {
                let x_at = ptr(x.base) + ((x.layout.offset + n0 * ci) * dtype.itemsize()) as u64;
                self.vol2col(dtype, s, x_at, ptr(c.as_ptr()), nb)?;
                (c.as_ptr(), 0, s.col_image)
            }
            None => (x.base, x.layout.offset + n0 * ci, ci),
        })
    }

    fn conv_forward(&self, spec: &ConvSpec, dtype: DType, out: Dst, x: Src, w: Src, bias: Option<Src>) -> Result<()> {
        let s = Sizes::of(spec);
        let total = out.layout.numel();
        if total == 0 {
            return Ok(());
        }
        let size = dtype.itemsize();
        if let Some(b) = bias {
            // The products then accumulate onto the bias.
            let dev = device_at(out.base)?;
            let f = function(dev, Family::Conv, dtype, "conv_bias_fill")?;
            let (yp, bp) = (ptr(out.base) + (out.layout.offset * size) as u64, ptr(b.base) + (b.layout.offset * size) as u64);
            let (n, ch, pl) = (total as i64, s.cout as i64, s.p as i64);
            let mut l = dev.stream.launch_builder(&f);
            l.arg(&yp).arg(&bp).arg(&n).arg(&ch).arg(&pl);
            // SAFETY: `conv_bias_fill(T*, const T*, i64, i64, i64)`, as
            // pushed; out holds n contiguous elements, bias cout.
            unsafe { l.launch(grid(total)) }.map_err(drv)?;
        }
        let (chunk, col) = self.column_chunks(dtype, &s, spec.batch, out.base)?;
        let (cp, kg, p) = (s.cout * s.p, s.kg as isize, s.p as isize);
        for n0 in (0..spec.batch).step_by(chunk.max(1)) {
            let nb = chunk.min(spec.batch - n0);
            let (col_base, col_off, col_step) = self.unfold_chunk(dtype, &s, x, col.as_ref(), n0, nb)?;
            for g in 0..spec.groups.max(1) {
                let yl = view(&[nb, s.og, s.p], &[cp as isize, p, 1], out.layout.offset + n0 * cp + g * s.og * s.p);
                let wl = view(&[nb, s.og, s.kg], &[0, kg, 1], w.layout.offset + g * s.og * s.kg);
                let cl = view(&[nb, s.kg, s.p], &[col_step as isize, p, 1], col_off + g * s.kg * s.p);
                matmul(
                    self,
                    dtype,
                    Dst { base: out.base, layout: &yl },
                    Src { base: w.base, layout: &wl },
                    Src { base: col_base, layout: &cl },
                    bias.is_some(),
                )?;
            }
        }
        Ok(())
    }

    fn conv_input_grad(&self, spec: &ConvSpec, dtype: DType, out: Dst, gy: Src, w: Src, bias: Option<Src>) -> Result<()> {
        let s = Sizes::of(spec);
        if out.layout.numel() == 0 {
            return Ok(());
        }
        let size = dtype.itemsize();
        let chunk = s.chunk(spec.batch, size);
        let col = self.columns(dtype, &s, chunk, out.base)?;
        let (cp, ci, kg, p) = (s.cout * s.p, s.cin * s.plane, s.kg as isize, s.p as isize);
        let bias_at = bias.map_or(0, |b| ptr(b.base) + (b.layout.offset * size) as u64);
        for n0 in (0..spec.batch).step_by(chunk) {
            let nb = chunk.min(spec.batch - n0);
            for g in 0..spec.groups.max(1) {
                let cl = view(&[nb, s.kg, s.p], &[s.col_image as isize, p, 1], g * s.kg * s.p);
                let wl = view(&[nb, s.kg, s.og], &[0, 1, kg], w.layout.offset + g * s.og * s.kg);
                let gl = view(&[nb, s.og, s.p], &[cp as isize, p, 1], gy.layout.offset + n0 * cp + g * s.og * s.p);
                matmul(
                    self,
                    dtype,
                    Dst { base: col.as_mut_ptr(), layout: &cl },
                    Src { base: w.base, layout: &wl },
                    Src { base: gy.base, layout: &gl },
                    false,
                )?;
            }
            let x_at = ptr(out.base) + ((out.layout.offset + n0 * ci) * size) as u64;
            self.col2vol(dtype, &s, ptr(col.as_ptr()), bias_at, x_at, nb)?;
        }
        Ok(())
    }

    fn conv_weight_grad(&self, spec: &ConvSpec, dtype: DType, out: Dst, gy: Src, x: Src) -> Result<()> {
        let s = Sizes::of(spec);
        if out.layout.numel() == 0 {
            return Ok(());
        }
        if spec.batch == 0 || s.p == 0 {
            return self.fill(out, dtype, Scalar::Float(0.0));
        }
        let (chunk, col) = self.column_chunks(dtype, &s, spec.batch, out.base)?;
        let (cp, kg, p) = (s.cout * s.p, s.kg as isize, s.p as isize);
        for n0 in (0..spec.batch).step_by(chunk.max(1)) {
            let nb = chunk.min(spec.batch - n0);
            let (col_base, col_off, col_step) = self.unfold_chunk(dtype, &s, x, col.as_ref(), n0, nb)?;
            // The batch is a sum, not a batch of products: one GEMM per
            // image, accumulating after the first.
            for j in 0..nb {
                for g in 0..spec.groups.max(1) {
                    let wl = view(&[s.og, s.kg], &[kg, 1], out.layout.offset + g * s.og * s.kg);
                    let gl = view(&[s.og, s.p], &[p, 1], gy.layout.offset + (n0 + j) * cp + g * s.og * s.p);
                    let cl = view(&[s.p, s.kg], &[1, p], col_off + j * col_step + g * s.kg * s.p);
                    matmul(
                        self,
                        dtype,
                        Dst { base: out.base, layout: &wl },
                        Src { base: gy.base, layout: &gl },
                        Src { base: col_base, layout: &cl },
                        n0 + j > 0,
                    )?;
                }
            }
        }
        Ok(())
    }
}

impl ConvKernels for Cuda {
    fn convolution(&self, role: ConvRole, spec: &ConvSpec, dtype: DType, out: Dst, a: Src, b: Src, bias: Option<Src>) -> Result<()> {
        if !matches!(dtype, DType::Float32 | DType::Float64) {
            return Err(no_kernel(&format!("convolution ({dtype})")));
        }
        spec.validate()?;
        match role {
            ConvRole::Forward => self.conv_forward(spec, dtype, out, a, b, bias),
            ConvRole::InputGrad => self.conv_input_grad(spec, dtype, out, a, b, bias),
            ConvRole::WeightGrad => self.conv_weight_grad(spec, dtype, out, a, b),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec2d(k: usize, stride: usize, pad: usize) -> ConvSpec {
        let out = (7 + 2 * pad - k) / stride + 1;
        ConvSpec {
            dims: 2,
            batch: 3,
            in_channels: 4,
            out_channels: 6,
            groups: 2,
            input: [7, 7, 0],
            kernel: [k, k, 0],
            output: [out, out, 0],
            stride: [stride, stride, 0],
            padding: [pad, pad, 0],
            dilation: [1, 1, 0],
        }
    }

    #[test]
    fn a_2d_problem_is_3d_with_a_unit_depth() {
        let g = KConvGeom::of(&spec2d(3, 2, 1).as_3d());
        assert_eq!(std::mem::size_of::<KConvGeom>(), 6 * 3 * 8);
        assert_eq!((g.input, g.kernel, g.output), ([1, 7, 7], [1, 3, 3], [1, 4, 4]));
        assert_eq!((g.stride, g.padding, g.dilation), ([1, 2, 2], [0, 1, 1], [1, 1, 1]));
        let s = Sizes::of(&spec2d(3, 2, 1));
        assert_eq!((s.og, s.kg, s.p, s.plane, s.col_image), (3, 18, 16, 49, 4 * 9 * 16));
    }

    #[test]
    fn only_pointwise_unit_stride_convolutions_skip_the_unfold() {
        assert!(spec2d(1, 1, 0).as_3d().direct());
        assert!(!spec2d(1, 2, 0).as_3d().direct());
        assert!(!spec2d(3, 1, 1).as_3d().direct());
    }

    #[test]
    fn chunks_cap_the_column_bytes_but_take_one_image_at_least() {
        let s = Sizes::of(&spec2d(3, 1, 1));
        assert_eq!(s.chunk(3, 4), 3);
        let huge = Sizes { col_image: COL_BUDGET, ..Sizes::of(&spec2d(3, 1, 1)) };
        assert_eq!(huge.chunk(5, 4), 1);
        assert_eq!(huge.chunk(0, 4), 1);
    }
}
