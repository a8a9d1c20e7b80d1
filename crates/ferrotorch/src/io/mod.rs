//! Reading and writing tensors in files, with no Python involved.

pub mod safetensors;
#[cfg(unix)]
pub mod shared_memory;
