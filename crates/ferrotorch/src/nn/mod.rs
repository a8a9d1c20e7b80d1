//! Layers with PyTorch's parameter names and layouts, so that a state dict
//! saved in Python loads by name: the [`Module`] trait, the layers, their
//! stateless forms ([`functional`]) and the optimizers ([`optim`]).
//!
//! ```
//! # let dir = std::env::temp_dir().join(format!("ft-doc-nn-{}", std::process::id()));
//! # std::fs::create_dir_all(&dir).unwrap();
//! # let path = dir.join("mlp.safetensors");
//! use ferrotorch::nn::{self, Linear, Module, ReLU, Sequential};
//! use ferrotorch::{io, DType, Device, Tensor};
//! let make = || Sequential::new().push(Linear::new(4, 8, true).unwrap()).push(ReLU).push(Linear::new(8, 2, true).unwrap());
//! let trained = make();
//! io::safetensors::save_file(&trained.state_dict(), None, &path).unwrap();
//!
//! // A service: load by name, switch to evaluation, and run with no graph.
//! let model = make();
//! model.load_state_dict(&io::load(&path).unwrap(), true).unwrap();
//! model.eval();
//! let _guard = nn::no_grad();
//! let x = Tensor::ones(&[1, 4], DType::Float32, Device::CPU).unwrap();
//! let (a, b) = (model.forward(&x).unwrap(), trained.forward(&x).unwrap());
//! assert_eq!(a.to_vec::<f32>().unwrap(), b.to_vec::<f32>().unwrap());
//! # std::fs::remove_dir_all(&dir).unwrap();
//! ```

mod activation;
mod attention;
mod container;
mod conv;
pub mod functional;
pub mod init;
mod linear;
mod module;
mod norm;
pub mod optim;
mod pool;
mod rnn;

pub use activation::{Dropout, ReLU, SiLU, Sigmoid, Softmax, Tanh, GELU};
pub use attention::MultiheadAttention;
pub use container::Sequential;
pub use conv::{Conv, Conv1d, Conv2d, ConvOptions, ConvTranspose2d};
pub use linear::{Embedding, Flatten, Linear};
pub use module::{Entry, IncompatibleKeys, Module};
pub use norm::{BatchNorm, BatchNorm1d, BatchNorm2d, GroupNorm, LayerNorm, RMSNorm};
pub use pool::{AdaptiveAvgPool2d, AvgPool2d, MaxPool2d};
pub use rnn::{Recurrent, GRU, LSTM};

use crate::autograd::GradModeGuard;

/// `torch.no_grad()`: no graph is recorded on this thread until the guard
/// is dropped (grad mode is per thread, so each request thread takes its own).
pub fn no_grad() -> GradModeGuard {
    GradModeGuard::new(false)
}
