//! Core types of ferrotorch, shared by every other crate: element types and the
//! promotion rules between them, devices, strided layouts (pure metadata), the
//! storage that owns tensor memory, and the error type every layer returns.
//!
//! It also holds what every device shares: the op vocabulary ([`op`]) and
//! the [`backend::Backend`] trait a device implements, with the `meta`
//! device's backend (which has no memory, so no kernels).
//!
//! Nothing here knows about CPU or GPU kernels, autograd or Python.

pub mod backend;
pub mod complex;
pub mod dtype;
pub mod device;
pub mod element;
pub mod error;
pub mod host_vec;
pub mod layout;
pub mod op;
pub mod random;
pub mod scalar;
pub mod storage;

pub use device::{Device, DeviceType};
pub use dtype::DType;
pub use element::Element;
pub use error::{Error, ErrorKind, Result};
pub use layout::{Layout, Shape, Strides};
pub use scalar::Scalar;
pub use backend::{Backend, Dst, Src};
pub use op::{BinaryEntry, BinaryOp, Surface, UnaryEntry, UnaryOp};
pub use storage::Storage;
pub use half;
pub use num_complex;
