//! The safetensors format (a JSON header naming each tensor's dtype, shape
//! and byte range, then the raw little-endian data), through the
//! `safetensors` crate: files written here load with the `safetensors`
//! Python package and the other way round.
//!
//! ```no_run
//! use ferrotorch::io::safetensors::{load_file, save_file};
//! use ferrotorch::Tensor;
//! let w = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[2, 2]).unwrap();
//! save_file(&[("weight".to_string(), w)], None, "model.safetensors").unwrap();
//! let loaded = load_file("model.safetensors").unwrap();
//! assert_eq!(loaded[0].0, "weight");
//! ```

use std::borrow::Cow;
use std::collections::HashMap;
use std::fs::File;
use std::path::Path;

use safetensors::tensor::{Dtype, SafeTensorError, SafeTensors, View};

use super::mapped::MappedFile;
use crate::{DType, Device, Error, Layout, Result, Tensor};

// The format stores little-endian bytes; ours are the machine's.
#[cfg(target_endian = "big")]
compile_error!("ferrotorch's safetensors support assumes a little-endian machine");

/// Named tensors in file order, as `load_file` returns them.
pub type NamedTensors = Vec<(String, Tensor)>;

fn to_safe(dtype: DType) -> Result<Dtype> {
    Ok(match dtype {
        DType::Bool => Dtype::BOOL,
        DType::UInt8 => Dtype::U8,
        DType::Int8 => Dtype::I8,
        DType::Int16 => Dtype::I16,
        DType::Int32 => Dtype::I32,
        DType::Int64 => Dtype::I64,
        DType::Float16 => Dtype::F16,
        DType::BFloat16 => Dtype::BF16,
        DType::Float32 => Dtype::F32,
        DType::Float64 => Dtype::F64,
        DType::Complex64 => Dtype::C64,
        DType::Complex128 => {
            return Err(Error::type_error(format!("safetensors has no {dtype} dtype")))
        }
    })
}

fn from_safe(dtype: Dtype, name: &str) -> Result<DType> {
    Ok(match dtype {
        Dtype::BOOL => DType::Bool,
        Dtype::U8 => DType::UInt8,
        Dtype::I8 => DType::Int8,
        Dtype::I16 => DType::Int16,
        Dtype::I32 => DType::Int32,
        Dtype::I64 => DType::Int64,
        Dtype::F16 => DType::Float16,
        Dtype::BF16 => DType::BFloat16,
        Dtype::F32 => DType::Float32,
        Dtype::F64 => DType::Float64,
        Dtype::C64 => DType::Complex64,
        other => return Err(Error::type_error(format!("safetensors: tensor {name:?} has dtype {other:?}, which ferrotorch does not support"))),
    })
}

fn format_error(e: SafeTensorError) -> Error {
    Error::runtime(format!("safetensors: {e:?}"))
}

/// A contiguous tensor seen as the crate's `View` (its bytes are borrowed).
struct Contiguous(Tensor);

impl View for &Contiguous {
    fn dtype(&self) -> Dtype {
        // `contiguous_views` admits only the dtypes `to_safe` maps.
        to_safe(self.0.dtype()).unwrap_or(Dtype::U8)
    }
    fn shape(&self) -> &[usize] {
        self.0.shape()
    }
    fn data(&self) -> Cow<'_, [u8]> {
        // SAFETY: the tensor is contiguous (made so in `contiguous_views`), so
        // its `numel * itemsize` bytes start at `data_ptr` inside its storage,
        // which it keeps alive for the borrow.
        Cow::Borrowed(unsafe { std::slice::from_raw_parts(self.0.data_ptr(), self.data_len()) })
    }
    fn data_len(&self) -> usize {
        self.0.numel() * self.0.dtype().itemsize()
    }
}

fn contiguous_views(tensors: &[(String, Tensor)]) -> Result<Vec<(String, Contiguous)>> {
    let mut seen = std::collections::HashSet::new();
    tensors
        .iter()
        .map(|(name, t)| {
            if !seen.insert(name.as_str()) {
                return Err(Error::value(format!("safetensors: the name {name:?} appears twice")));
            }
            if !t.device().is_cpu() {
                return Err(Error::runtime(format!("safetensors: tensor {name:?} is on {}, not the CPU", t.device())));
            }
            to_safe(t.dtype())?;
            Ok((name.clone(), Contiguous(t.contiguous()?)))
        })
        .collect()
}

/// The safetensors bytes of `tensors` (names must be distinct; any layout
/// or view is written as its contiguous values), with optional string
/// `metadata` in the header's `__metadata__`.
pub fn serialize(tensors: &[(String, Tensor)], metadata: Option<HashMap<String, String>>) -> Result<Vec<u8>> {
    let views = contiguous_views(tensors)?;
    safetensors::tensor::serialize(views.iter().map(|(n, v)| (n.as_str(), v)), metadata).map_err(format_error)
}

/// Writes `tensors` to the file at `path` (see [`serialize`]).
pub fn save_file(tensors: &[(String, Tensor)], metadata: Option<HashMap<String, String>>, path: impl AsRef<Path>) -> Result<()> {
    let views = contiguous_views(tensors)?;
    safetensors::tensor::serialize_to_file(views.iter().map(|(n, v)| (n.as_str(), v)), metadata, path.as_ref())
        .map_err(format_error)
}

/// The tensors held in safetensors `bytes`, each copied into its own storage,
/// in the order of their data in the buffer.
pub fn deserialize(bytes: &[u8]) -> Result<NamedTensors> {
    let st = SafeTensors::deserialize(bytes).map_err(format_error)?;
    let mut named = st.tensors();
    named.sort_by_key(|(_, v)| v.data().as_ptr() as usize);
    named
        .into_iter()
        .map(|(name, view)| {
            let dtype = from_safe(view.dtype(), &name)?;
            let t = Tensor::empty(view.shape(), dtype, Device::CPU)?;
            let data = view.data();
            // The crate has checked that the byte range matches dtype and shape.
            if data.len() != t.numel() * dtype.itemsize() {
                return Err(Error::runtime(format!("safetensors: tensor {name:?} has {} bytes for shape {:?}", data.len(), view.shape())));
            }
            // SAFETY: `t` is a fresh contiguous buffer of exactly `data.len()` bytes.
            unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), t.data_ptr_mut(), data.len()) };
            Ok((name, t))
        })
        .collect()
}

/// The `__metadata__` strings of safetensors `bytes` (empty when absent).
pub fn metadata(bytes: &[u8]) -> Result<HashMap<String, String>> {
    let (_, meta) = SafeTensors::read_metadata(bytes).map_err(format_error)?;
    Ok(meta.metadata().clone().unwrap_or_default())
}

/// Memory-maps the file at `path` and reads its tensors (see [`deserialize`]);
/// only the bytes of the tensors are read, once each.
pub fn load_file(path: impl AsRef<Path>) -> Result<NamedTensors> {
    let map = map_file(path.as_ref())?;
    deserialize(&map)
}

/// Memory-maps the file at `path` (copy-on-write) and returns its tensors
/// in file order as views of the mapping: nothing is copied, the tensors
/// share the one mapping (which lives until the last of them is dropped),
/// and writing into one never changes the file. A tensor whose data is not
/// aligned to its element size in the file is copied instead.
///
/// ```
/// # let dir = std::env::temp_dir().join(format!("ft-doc-mmap-{}", std::process::id()));
/// # std::fs::create_dir_all(&dir).unwrap();
/// # let path = dir.join("w.safetensors");
/// use ferrotorch::io::safetensors::{mmap_file, save_file};
/// use ferrotorch::Tensor;
/// let w = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[2, 2]).unwrap();
/// save_file(&[("weight".to_string(), w)], None, &path).unwrap();
/// let loaded = mmap_file(&path).unwrap();
/// assert_eq!(loaded[0].1.to_vec::<f32>().unwrap(), vec![1.0, 2.0, 3.0, 4.0]);
/// # std::fs::remove_dir_all(&dir).unwrap();
/// ```
pub fn mmap_file(path: impl AsRef<Path>) -> Result<NamedTensors> {
    let file = MappedFile::open(path.as_ref(), "safetensors")?;
    let bytes = file.bytes();
    let st = SafeTensors::deserialize(bytes).map_err(format_error)?;
    let mut named = st.tensors();
    named.sort_by_key(|(_, v)| v.data().as_ptr() as usize);
    named
        .into_iter()
        .map(|(name, view)| {
            let dtype = from_safe(view.dtype(), &name)?;
            let start = view.data().as_ptr() as usize - bytes.as_ptr() as usize;
            let storage = file.storage(start..start + view.data().len(), dtype.itemsize())?;
            let t = Tensor::from_parts(storage, Layout::contiguous(view.shape()), dtype)?;
            Ok((name, t))
        })
        .collect()
}

/// The `__metadata__` strings of the file at `path`.
pub fn load_file_metadata(path: impl AsRef<Path>) -> Result<HashMap<String, String>> {
    metadata(&map_file(path.as_ref())?)
}

fn map_file(path: &Path) -> Result<memmap2::Mmap> {
    let file = File::open(path).map_err(|e| Error::runtime(format!("safetensors: cannot open {}: {e}", path.display())))?;
    // SAFETY: the map is read-only and dropped before this call's caller
    // returns; a file truncated by another process meanwhile could fault, as
    // with every reader of memory-mapped files (the Python package included).
    unsafe { memmap2::Mmap::map(&file) }.map_err(|e| Error::runtime(format!("safetensors: cannot map {}: {e}", path.display())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_keeps_dtypes_shapes_values_and_metadata() {
        let a = Tensor::from_vec(vec![1.5f32, -2.0, 3.25, 4.0, 5.0, 6.0], &[2, 3]).unwrap();
        let b = Tensor::from_vec(vec![7i64, -8], &[2]).unwrap();
        let t = a.transpose(0, 1).unwrap(); // a non-contiguous view is written by value
        let meta: HashMap<String, String> = [("format".to_string(), "pt".to_string())].into();
        let bytes = serialize(&[("a".into(), a.clone()), ("b".into(), b), ("t".into(), t)], Some(meta)).unwrap();
        let back = deserialize(&bytes).unwrap();
        let get = |n: &str| back.iter().find(|(k, _)| k == n).unwrap().1.clone();
        assert_eq!(get("a").to_vec::<f32>().unwrap(), vec![1.5, -2.0, 3.25, 4.0, 5.0, 6.0]);
        assert_eq!(get("b").to_vec::<i64>().unwrap(), vec![7, -8]);
        assert_eq!(get("t").shape(), &[3, 2]);
        assert_eq!(get("t").to_vec::<f32>().unwrap(), vec![1.5, 4.0, -2.0, 5.0, 3.25, 6.0]);
        assert_eq!(metadata(&bytes).unwrap()["format"], "pt");
    }

    #[test]
    fn duplicate_names_and_garbage_are_errors() {
        let a = Tensor::from_vec(vec![1u8], &[1]).unwrap();
        assert!(serialize(&[("x".into(), a.clone()), ("x".into(), a)], None).is_err());
        assert!(deserialize(b"\x05\x00\x00\x00\x00\x00\x00\x00{}").is_err());
        assert!(deserialize(b"").is_err());
    }
}
