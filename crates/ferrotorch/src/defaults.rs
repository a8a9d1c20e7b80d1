//! Process-wide defaults: the default floating dtype and the default generator.
//!
//! ```
//! use ferrotorch::{defaults, DType, Tensor};
//! defaults::manual_seed(7);
//! let a = Tensor::randn(&[3], DType::Float32, None).unwrap();
//! defaults::manual_seed(7);
//! let b = Tensor::randn(&[3], DType::Float32, None).unwrap();
//! assert_eq!(a.to_vec::<f32>().unwrap(), b.to_vec::<f32>().unwrap());
//! assert_eq!(defaults::default_dtype(), DType::Float32);
//! ```

use ferrotorch_core::{DType, Error, Result};
use ferrotorch_core::random::Generator;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

static DEFAULT_DTYPE: AtomicU8 = AtomicU8::new(DType::Float32 as u8);

/// `torch.get_default_dtype()`.
pub fn default_dtype() -> DType {
    let v = DEFAULT_DTYPE.load(Ordering::Relaxed);
    DType::ALL.into_iter().find(|d| *d as u8 == v).unwrap_or(DType::Float32)
}

/// `torch.set_default_dtype(d)`: only floating types are allowed, as in PyTorch.
pub fn set_default_dtype(d: DType) -> Result<()> {
    if !d.is_floating_point() {
        return Err(Error::type_error(format!(
            "only floating-point types are supported as the default type, got {d}"
        )));
    }
    DEFAULT_DTYPE.store(d as u8, Ordering::Relaxed);
    Ok(())
}

/// A generator shared by reference, as `torch.Generator` objects are.
pub type SharedGenerator = Arc<Mutex<Generator>>;

/// The default CPU generator used when no `generator=` is given.
pub fn default_generator() -> &'static SharedGenerator {
    static G: OnceLock<SharedGenerator> = OnceLock::new();
    G.get_or_init(|| Arc::new(Mutex::new(Generator::default())))
}

/// Runs `f` with the given generator locked, or the default one.
pub fn with_generator<T>(g: Option<&SharedGenerator>, f: impl FnOnce(&mut Generator) -> T) -> T {
    let g = g.unwrap_or_else(|| default_generator());
    let mut guard = g.lock().unwrap_or_else(|p| p.into_inner());
    f(&mut guard)
}

/// `torch.manual_seed(seed)`.
pub fn manual_seed(seed: u64) {
    with_generator(None, |g| g.manual_seed(seed));
}

/// `torch.get_num_threads()`: the threads CPU kernels split their work over.
pub fn num_threads() -> usize {
    crate::backend::cpu_threads()
}

/// `torch.set_num_threads(n)`: caps the threads CPU kernels use (the pool is
/// sized once, from `RAYON_NUM_THREADS` or the core count; asking for more
/// than it holds uses all of it).
///
/// ```
/// ferrotorch::defaults::set_num_threads(1);
/// assert_eq!(ferrotorch::defaults::num_threads(), 1);
/// ```
pub fn set_num_threads(n: usize) -> Result<()> {
    if n == 0 {
        return Err(crate::Error::runtime("set_num_threads expects a positive integer"));
    }
    crate::backend::set_cpu_threads(n);
    Ok(())
}

/// Runs `f` with the CPU kernels it calls on this thread limited to `n`
/// threads (at least 1), leaving other threads and the process-wide
/// [`set_num_threads`] alone: a service gives each request thread its share
/// of the cores so that intra-op threads do not fight request threads.
///
/// ```
/// let n = ferrotorch::with_threads(1, ferrotorch::defaults::effective_threads);
/// assert_eq!(n, 1);
/// ```
pub fn with_threads<R>(n: usize, f: impl FnOnce() -> R) -> R {
    crate::backend::with_cpu_threads(n, f)
}

/// The threads CPU kernels called from this thread split their work over
/// now (the process-wide count, or this thread's [`with_threads`] cap).
pub fn effective_threads() -> usize {
    crate::backend::effective_cpu_threads()
}
