//! Reading and writing tensors in files, with no Python involved.
//!
//! - [`safetensors`]: the safetensors format, read memory-mapped
//!   ([`safetensors::mmap_file`]) or copied, and written.
//! - [`pt`]: the zip checkpoints of `torch.save(model.state_dict(), f)`,
//!   read with an allow-listed pickle reader ([`pickle`]) that runs no code.
//!
//! [`load`] reads either, telling them apart by their first bytes:
//!
//! ```
//! # let dir = std::env::temp_dir().join(format!("ft-doc-io-{}", std::process::id()));
//! # std::fs::create_dir_all(&dir).unwrap();
//! # let path = dir.join("m.safetensors");
//! use ferrotorch::{io, Tensor};
//! let b = Tensor::from_vec(vec![0.5f32, -1.0], &[2]).unwrap();
//! io::safetensors::save_file(&[("fc.bias".to_string(), b)], None, &path).unwrap();
//! let state = io::load(&path).unwrap();
//! assert_eq!(state[0].0, "fc.bias");
//! # std::fs::remove_dir_all(&dir).unwrap();
//! ```

mod mapped;
pub mod pickle;
pub mod pt;
pub mod safetensors;
#[cfg(unix)]
pub mod shared_memory;
pub mod zip;

use std::io::Read;
use std::path::Path;

use crate::{Error, Result};
pub use safetensors::NamedTensors;

/// The named tensors of a state dict saved by `torch.save` (a zip archive)
/// or as safetensors, as views of the memory-mapped file.
pub fn load(path: impl AsRef<Path>) -> Result<NamedTensors> {
    let path = path.as_ref();
    let mut magic = [0u8; 4];
    let mut f = std::fs::File::open(path).map_err(|e| Error::runtime(format!("cannot open {}: {e}", path.display())))?;
    let n = f.read(&mut magic).map_err(|e| Error::runtime(format!("cannot read {}: {e}", path.display())))?;
    if n == 4 && &magic == b"PK\x03\x04" {
        pt::load(path)
    } else {
        safetensors::mmap_file(path)
    }
}
