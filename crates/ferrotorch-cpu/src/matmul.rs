//! Matrix multiply: the `gemm` crate for floats, a plain loop for integers.
//!
//! `gemm` computes `dst = alpha * dst + beta * lhs @ rhs` (note: alpha scales the
//! old destination, beta the product, the reverse of BLAS), with strides in
//! elements given as (column stride, row stride).

use crate::{at, at_mut};
use ferrotorch_core::Element;
use gemm::Parallelism;

/// One matrix operand: pointer to element [0, 0] and its row/column strides.
#[derive(Clone, Copy)]
pub struct Mat {
    /// Address of element [0, 0].
    pub ptr: *mut u8,
    /// Stride between rows, in elements.
    pub rs: isize,
    /// Stride between columns, in elements.
    pub cs: isize,
}

fn parallelism(m: usize, n: usize, k: usize) -> Parallelism {
    if m * n * k >= 64 * 64 * 64 {
        Parallelism::Rayon(rayon::current_num_threads())
    } else {
        Parallelism::None
    }
}

/// `dst (m×n) = lhs (m×k) @ rhs (k×n)`, overwriting dst.
///
/// # Safety
/// Each `Mat` must address valid memory of type `T` for every index its
/// strides produce within the given sizes, and dst must not overlap the inputs.
pub unsafe fn matmul<T: Element>(m: usize, n: usize, k: usize, dst: Mat, lhs: Mat, rhs: Mat) {
    matmul_threads::<T>(m, n, k, dst, lhs, rhs, true)
}

/// [`matmul`] that stays on the calling thread unless `threads`: batched
/// callers parallelise over the batch instead.
///
/// # Safety
/// As for [`matmul`].
pub unsafe fn matmul_threads<T: Element>(m: usize, n: usize, k: usize, dst: Mat, lhs: Mat, rhs: Mat, threads: bool) {
    use ferrotorch_core::DType;
    let parallelism = |m, n, k| if threads { parallelism(m, n, k) } else { Parallelism::None };
    macro_rules! via_gemm {
        ($t:ty, $zero:expr, $one:expr) => {
            gemm::gemm::<$t>(
                m, n, k,
                dst.ptr as *mut $t, dst.cs, dst.rs,
                false,
                lhs.ptr as *const $t, lhs.cs, lhs.rs,
                rhs.ptr as *const $t, rhs.cs, rhs.rs,
                $zero, $one,
                false, false, false,
                parallelism(m, n, k),
            )
        };
    }
    match T::DTYPE {
        DType::Float32 => via_gemm!(f32, 0.0f32, 1.0f32),
        DType::Float64 => via_gemm!(f64, 0.0f64, 1.0f64),
        DType::Float16 => via_gemm!(gemm::f16, gemm::f16::from_f32(0.0), gemm::f16::from_f32(1.0)),
        _ => naive::<T>(m, n, k, dst, lhs, rhs),
    }
}

/// Float types the GEMM adapter takes directly.
pub trait GemmFloat: Element + crate::elementwise::Float {}
impl GemmFloat for f32 {}
impl GemmFloat for f64 {}

/// `dst (m×n) = [dst +] lhs (m×k) @ rhs (k×n)` for f32/f64, accumulating into
/// the old `dst` when `accumulate`, on the calling thread only unless `threads`.
///
/// # Safety
/// As for [`matmul`].
pub unsafe fn gemm_into<T: GemmFloat>(m: usize, n: usize, k: usize, dst: Mat, lhs: Mat, rhs: Mat, accumulate: bool, threads: bool) {
    let par = if threads { parallelism(m, n, k) } else { Parallelism::None };
    gemm::gemm::<T>(
        m, n, k,
        dst.ptr as *mut T, dst.cs, dst.rs,
        accumulate,
        lhs.ptr as *const T, lhs.cs, lhs.rs,
        rhs.ptr as *const T, rhs.cs, rhs.rs,
        T::one(), T::one(),
        false, false, false,
        par,
    )
}

/// Integer (and fallback) matmul with an accumulator of the element's own kind.
unsafe fn naive<T: Element>(m: usize, n: usize, k: usize, dst: Mat, lhs: Mat, rhs: Mat) {
    let float = T::DTYPE.is_floating_point();
    for i in 0..m as isize {
        for j in 0..n as isize {
            let (mut fi, mut ii) = (0f64, 0i64);
            for p in 0..k as isize {
                let a = *at::<T>(lhs.ptr, i * lhs.rs + p * lhs.cs);
                let b = *at::<T>(rhs.ptr, p * rhs.rs + j * rhs.cs);
                if float {
                    fi += a.to_f64() * b.to_f64();
                } else {
                    ii = ii.wrapping_add(a.to_i64().wrapping_mul(b.to_i64()));
                }
            }
            *at_mut::<T>(dst.ptr, i * dst.rs + j * dst.cs) = if float { T::from_f64(fi) } else { T::from_i64(ii) };
        }
    }
}
