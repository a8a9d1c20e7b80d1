//! ferrotorch: a PyTorch-compatible tensor engine, usable from Rust with no Python.
//!
//! ```
//! use ferrotorch::{Tensor, DType};
//! let x = Tensor::arange_f64(0.0, 6.0, 1.0, DType::Float32).unwrap().view(&[2, 3]).unwrap();
//! let t = x.t().unwrap();
//! assert_eq!(t.shape(), &[3, 2]);
//! assert_eq!(t.strides(), &[1, 3]);
//! assert!(!t.is_contiguous());
//! ```

pub mod autograd;
pub mod backend;
pub mod defaults;
pub mod io;
pub mod ops;
pub mod tensor;

pub use ferrotorch_core::{dispatch_dtype, DType, Device, DeviceType, Element, Error, ErrorKind, Layout, Result, Scalar, Storage};
pub use tensor::Tensor;
