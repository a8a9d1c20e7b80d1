//! PyTorch checkpoints: the zip archives `torch.save(model.state_dict(), f)`
//! writes (its default format since PyTorch 1.6), read with the allow-listed
//! pickle reader of [`super::pickle`], so loading a file runs no code.
//!
//! The archive holds `<name>/data.pkl` (the pickled dict, whose tensors name
//! their storages by persistent id) and one entry `<name>/data/<key>` per
//! storage. [`load`] maps the file and the tensors are views of the mapping;
//! tensors that shared a storage in Python (tied weights, views) share it
//! here too. Storages saved from CUDA come back on the CPU.

use std::collections::HashMap;
use std::ops::Range;
use std::path::Path;
use std::sync::Arc;

use ferrotorch_core::{DType, Error, Result, Storage};

use super::mapped::{copied_storage, MappedFile};
use super::pickle::{self, Global, StorageRef, Value};
use super::safetensors::NamedTensors;
use super::zip;

/// Maps the checkpoint at `path` and returns its state dict, in the order
/// it was saved, as views of the mapping (copy-on-write: writing a tensor
/// never changes the file).
///
/// ```
/// // A file that is not a checkpoint is an error, never a panic.
/// # let path = std::env::temp_dir().join(format!("ft-doc-pt-{}.pt", std::process::id()));
/// std::fs::write(&path, b"PK\x03\x04 but not really").unwrap();
/// assert!(ferrotorch::io::pt::load(&path).is_err());
/// # std::fs::remove_file(&path).unwrap();
/// ```
pub fn load(path: impl AsRef<Path>) -> Result<NamedTensors> {
    let file = MappedFile::open(path.as_ref(), "torch checkpoint")?;
    read(file.bytes(), &|range, align| file.storage(range, align))
}

/// The state dict held in the checkpoint `bytes`, each storage copied.
pub fn load_from_bytes(bytes: &[u8]) -> Result<NamedTensors> {
    read(bytes, &|range: Range<usize>, _| copied_storage(&bytes[range]))
}

type StorageSource<'a> = &'a dyn Fn(Range<usize>, usize) -> Result<Arc<Storage>>;

fn read(bytes: &[u8], storage_at: StorageSource) -> Result<NamedTensors> {
    let entries = zip::entries(bytes)?;
    let by_name: HashMap<&str, &Range<usize>> = entries.iter().map(|e| (e.name.as_str(), &e.data)).collect();
    let pkl = entries
        .iter()
        .filter_map(|e| e.name.strip_suffix("data.pkl").filter(|p| p.is_empty() || p.ends_with('/')).map(|p| (p, &e.data)))
        .min_by_key(|(p, _)| p.len())
        .ok_or_else(|| Error::runtime("PytorchStreamReader failed locating file data.pkl: file not found"))?;
    let (prefix, pkl_range) = (pkl.0.to_string(), pkl.1.clone());
    if let Some(r) = by_name.get(format!("{prefix}byteorder").as_str()) {
        let order = &bytes[(*r).clone()];
        if order != b"little" {
            return Err(Error::runtime(format!(
                "the checkpoint was saved with byte order {:?}; only little-endian checkpoints are read",
                String::from_utf8_lossy(order)
            )));
        }
    }
    let mut storages: HashMap<String, StorageRef> = HashMap::new();
    let mut persistent_load = |pid: &[Value]| -> Result<Value> {
        let bad = |what: &str| Error::runtime(format!("Weights only load failed: bad storage persistent id ({what})"));
        let dtype = match pid.get(1) {
            Some(Value::Global(Global::StorageType(d))) => *d,
            Some(Value::Global(Global::UntypedStorage)) => DType::UInt8,
            _ => return Err(bad("no storage type")),
        };
        let Some(Value::Str(key)) = pid.get(2) else { return Err(bad("no key")) };
        let Some(Value::Int(numel)) = pid.get(4) else { return Err(bad("no element count")) };
        if let Some(s) = storages.get(key.as_ref()) {
            return Ok(Value::Storage(s.clone()));
        }
        let entry = by_name
            .get(format!("{prefix}data/{key}").as_str())
            .ok_or_else(|| Error::runtime(format!("PytorchStreamReader failed locating file data/{key}: file not found")))?;
        let nbytes = usize::try_from(*numel).ok().and_then(|n| n.checked_mul(dtype.itemsize())).ok_or_else(|| bad("element count"))?;
        if nbytes > entry.len() {
            return Err(Error::runtime(format!("storage data/{key} holds {} bytes, fewer than its {numel} elements need", entry.len())));
        }
        let s = StorageRef { storage: storage_at(entry.start..entry.start + nbytes, dtype.itemsize())?, dtype };
        storages.insert(key.to_string(), s.clone());
        Ok(Value::Storage(s))
    };
    let root = pickle::load(&bytes[pkl_range], &mut persistent_load)?;
    let Value::Dict(dict) = &root else {
        return Err(Error::runtime(format!("the checkpoint holds a {}, not a state dict", root.type_name())));
    };
    let dict = dict.borrow();
    dict.items
        .iter()
        .map(|(k, v)| match (k, v) {
            (Value::Str(k), Value::Tensor(t)) => Ok((k.to_string(), t.clone())),
            (Value::Str(k), other) => Err(Error::runtime(format!(
                "the checkpoint's entry {k:?} is a {}, not a tensor: only state dicts of tensors are read",
                other.type_name()
            ))),
            (other, _) => Err(Error::runtime(format!("the checkpoint's dict has a key of type {}, not str", other.type_name()))),
        })
        .collect()
}
