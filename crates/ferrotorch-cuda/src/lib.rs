//! The CUDA backend of ferrotorch, through cudarc.
//!
//! * [`library`]: run-time discovery of the driver, NVRTC and cuBLAS (absence is an
//!   error, never a panic);
//! * [`device`]: device count, current device, the per-device state created
//!   on first use (context, stream, memory pool, kernels);
//! * [`alloc`]: device memory through the `ferrotorch-alloc` caching
//!   allocator (per-stream pools, out-of-memory retry, PyTorch's message);
//! * [`kernels`]: self-contained CUDA C sources compiled per (family, dtype,
//!   arch) by NVRTC, cached in memory and on disk;
//! * [`geometry`]: operand layouts packed for kernels (by value, 64-bit);
//! * [`blas_plan`]: strided matrix products mapped onto cuBLAS's
//!   column-major batched calls (host-testable arithmetic);
//! * [`backend`]: [`Cuda`], the [`Backend`](ferrotorch_core::Backend) of
//!   the `cuda` device.
//!
//! The crate builds with no CUDA toolkit and no driver (cudarc loads the
//! libraries at run time); on such a machine [`is_available`] is `false`
//! and every device call returns PyTorch's "Found no NVIDIA driver" error.

#![warn(missing_docs)]

pub mod alloc;
pub mod backend;
pub mod blas_plan;
pub mod device;
pub mod geometry;
pub mod kernels;
pub mod library;

pub use backend::Cuda;
pub use device::{device_count, is_available};
