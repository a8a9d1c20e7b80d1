//! Which [`Backend`] runs a tensor's kernels: the one registration point of
//! the devices this build knows (the CPU from `ferrotorch-cpu`, CUDA from
//! `ferrotorch-cuda`, and `meta`).
//!
//! Adding a device means implementing [`Backend`] in its own crate and
//! naming it here; op code asks [`for_device`] and never names a backend.
//! The CPU backend's thread count is configured here too.
//!
//! ```
//! use ferrotorch::{backend, Device};
//! assert!(backend::for_device(Device::CPU).is_ok());
//! assert!(backend::cpu_threads() >= 1);
//! ```

use ferrotorch_core::backend::Meta;
use ferrotorch_core::{Backend, Device, DeviceType, Result};

static CPU: ferrotorch_cpu::Cpu = ferrotorch_cpu::Cpu;
static CUDA: ferrotorch_cuda::Cuda = ferrotorch_cuda::Cuda;
static META: Meta = Meta;

/// The backend of `device`, or PyTorch's error for a device this build
/// cannot run.
pub fn for_device(device: Device) -> Result<&'static dyn Backend> {
    match device.kind {
        DeviceType::Cpu => Ok(&CPU),
        DeviceType::Meta => Ok(&META),
        DeviceType::Cuda => {
            // PyTorch's lazy CUDA init: "Found no NVIDIA driver ..." on a
            // machine without one, an invalid ordinal past the last device.
            let index = match device.index {
                Some(i) => i as usize,
                None => ferrotorch_cuda::device::current_device()?,
            };
            ferrotorch_cuda::device::check_device(index)?;
            Ok(&CUDA)
        }
    }
}

/// The threads the CPU backend's kernels split their work over.
pub fn cpu_threads() -> usize {
    ferrotorch_cpu::parallel::requested_threads()
}

/// Caps the threads the CPU backend's kernels use.
pub fn set_cpu_threads(n: usize) {
    ferrotorch_cpu::parallel::set_threads(n);
}

/// Runs `f` with the CPU kernels it calls on this thread capped at `n` threads.
pub fn with_cpu_threads<R>(n: usize, f: impl FnOnce() -> R) -> R {
    ferrotorch_cpu::parallel::with_threads(n, f)
}

/// The threads CPU kernels called from this thread use now.
pub fn effective_cpu_threads() -> usize {
    ferrotorch_cpu::parallel::threads()
}
