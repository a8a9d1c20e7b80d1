//! The CPU's factory kernels: ranges and random draws, written serially in
//! row-major order (a draw's position in the generator's stream is its
//! element's position, whatever the thread count).

use super::Cpu;
use crate::dense::{elems, elems_mut};
use crate::{Dst, Src};
use ferrotorch_core::backend::FactoryKernels;
use ferrotorch_core::element::cast;
use ferrotorch_core::op::factory::{Distribution, Sequence};
use ferrotorch_core::random::Generator;
use ferrotorch_core::{dispatch_dtype, DType, Element, Error, Result};

const WHAT: &str = "factory";

impl FactoryKernels for Cpu {
    fn sequence(&self, seq: Sequence, dtype: DType, out: Dst) -> Result<()> {
        if dtype.is_complex() {
            return Err(crate::complex::not_impl("sequence", dtype));
        }
        dispatch_dtype!(dtype, T => {
            // SAFETY: `out` is a fresh contiguous tensor of `dtype`.
            let o = unsafe { elems_mut::<T>(WHAT, out)? };
            let n = o.len();
            match seq {
                Sequence::AffineInt { start, step } => {
                    for (i, v) in o.iter_mut().enumerate() {
                        *v = cast::<i64, T>(start.wrapping_add((i as i64).wrapping_mul(step)));
                    }
                }
                _ => {
                    for (i, v) in o.iter_mut().enumerate() {
                        *v = cast::<f64, T>(seq.value(i, n));
                    }
                }
            }
        });
        Ok(())
    }

    fn random(&self, dist: Distribution, gen: &mut Generator, dtype: DType, out: Dst, params: &[Src]) -> Result<()> {
        if dtype.is_complex() {
            return Err(crate::complex::not_impl("random", dtype));
        }
        if dist == Distribution::Permutation {
            if dtype != DType::Int64 {
                return Err(Error::runtime("randperm: the kernel writes int64"));
            }
            // SAFETY: `out` is a fresh contiguous int64 tensor.
            let v = unsafe { elems_mut::<i64>(WHAT, out)? };
            for (i, x) in v.iter_mut().enumerate() {
                *x = i as i64;
            }
            for i in (1..v.len()).rev() {
                let j = gen.below(i as u64 + 1) as usize;
                v.swap(i, j);
            }
            return Ok(());
        }
        dispatch_dtype!(dtype, T => {
            // SAFETY: `out` is a fresh contiguous tensor of `dtype`; each of
            // `params` a live contiguous one of `dtype` and `out`'s size that
            // `out` does not alias.
            let o = unsafe { elems_mut::<T>(WHAT, out)? };
            match dist {
                Distribution::Uniform => o.iter_mut().for_each(|v| *v = cast::<f64, T>(gen.uniform())),
                Distribution::Normal { mean, std } => o.iter_mut().for_each(|v| *v = cast::<f64, T>(mean + std * gen.normal())),
                Distribution::Integers { low, span } => {
                    o.iter_mut().for_each(|v| *v = cast::<i64, T>((low as i128 + gen.below(span) as i128) as i64))
                }
                Distribution::Poisson => {
                    let [rates] = params else { return Err(Error::runtime("poisson: the kernel needs the rates")) };
                    let lam = unsafe { elems::<T>(WHAT, *rates)? };
                    // NaN fails `>= 0` too; every rate is checked before any draw.
                    if lam.iter().any(|&l| !(l.to_f64() >= 0.0)) {
                        return Err(Error::runtime("invalid Poisson rate, expected rate to be non-negative"));
                    }
                    for (v, &l) in o.iter_mut().zip(lam) {
                        *v = cast::<f64, T>(gen.poisson(l.to_f64()));
                    }
                }
                Distribution::Binomial => {
                    let [count, prob] = params else { return Err(Error::runtime("binomial: the kernel needs counts and probabilities")) };
                    let (n, p) = unsafe { (elems::<T>(WHAT, *count)?, elems::<T>(WHAT, *prob)?) };
                    if n.len() != o.len() || p.len() != o.len() {
                        return Err(Error::runtime("binomial: the parameters must have the output's size"));
                    }
                    for ((v, &n), &p) in o.iter_mut().zip(n).zip(p) {
                        *v = cast::<f64, T>(gen.binomial(n.to_f64(), p.to_f64()));
                    }
                }
                Distribution::Permutation => return Err(Error::runtime("randperm: the kernel writes int64")),
            }
        });
        Ok(())
    }
}
