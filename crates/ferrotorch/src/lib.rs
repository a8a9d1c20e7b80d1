//! ferrotorch: a PyTorch-compatible tensor engine, usable from Rust with no
//! Python (and no CUDA: the crate builds and runs on any machine with a Rust
//! toolchain).
//!
//! The crate is layered, each layer using only those above it in this list:
//!
//! - [`Tensor`] ([`tensor`]): a handle on a storage seen through a layout
//!   (shape, strides, offset) with a dtype; views share the storage.
//! - [`ops`]: every op (arithmetic with broadcasting and PyTorch's type
//!   promotion, reductions, linear algebra, convolution, pooling, norms,
//!   indexing ...), checked once and run by the device's [`backend`].
//! - [`autograd`]: ops record a graph when an input requires grad;
//!   [`autograd::backward`] walks it. Grad mode is per thread.
//! - [`nn`]: layers with PyTorch's parameter names ([`nn::Module`],
//!   `load_state_dict`), [`nn::no_grad`], and the optimizers of [`nn::optim`].
//! - [`io`]: safetensors and `torch.save` checkpoints, read without running
//!   any code from the file.
//!
//! [`defaults`] holds the process-wide settings: the default dtype, the
//! random generator, and the kernels' threads ([`set_num_threads`], and
//! [`with_threads`] for one call).
//!
//! ```
//! use ferrotorch::nn::{self, Linear, Module};
//! use ferrotorch::{DType, Tensor};
//! let x = Tensor::arange_f64(0.0, 6.0, 1.0, DType::Float32).unwrap().view(&[2, 3]).unwrap();
//! let t = x.t().unwrap();
//! assert_eq!(t.shape(), &[3, 2]);
//! assert_eq!(t.strides(), &[1, 3]);
//! assert!(!t.is_contiguous());
//!
//! // A layer, run without recording a graph, on its own share of threads.
//! let fc = Linear::new(3, 4, true).unwrap();
//! let _guard = nn::no_grad();
//! let y = ferrotorch::with_threads(1, || fc.forward(&x)).unwrap();
//! assert_eq!(y.shape(), &[2, 4]);
//! assert!(y.grad_fn().is_none());
//! ```

pub mod autograd;
pub mod backend;
pub mod defaults;
pub mod io;
pub mod nn;
pub mod ops;
pub mod tensor;

pub use ferrotorch_core::{dispatch_dtype, DType, Device, DeviceType, Element, Error, ErrorKind, Layout, Result, Scalar, Storage};
pub use defaults::{num_threads, set_num_threads, with_threads};
pub use tensor::Tensor;
