//! A file mapped into memory copy-on-write, whose byte ranges become tensor
//! storages without copying: the tensors of a loaded checkpoint share the one
//! mapping, which lives as long as the last of them.
//!
//! The mapping is private (`MAP_PRIVATE`): writing into a loaded tensor
//! copies the touched page and never changes the file, so loaded tensors are
//! as writable as any other.

use std::fs::File;
use std::ops::Range;
use std::path::Path;
use std::ptr::NonNull;
use std::sync::Arc;

use ferrotorch_core::{Device, Error, Result, Storage};
use memmap2::MmapMut;

use crate::Tensor;

/// The mapping and its base address, shared by every storage cut from it.
struct Region {
    // Taken once from `as_mut_ptr` so that storages write through a pointer
    // that was never derived from a shared borrow of the map.
    base: NonNull<u8>,
    _map: MmapMut,
}

// SAFETY: the region is plain memory owned by the map; storages cut from it
// follow the same rules as any other storage shared between threads.
unsafe impl Send for Region {}
unsafe impl Sync for Region {}

/// A whole file, mapped copy-on-write.
#[derive(Clone)]
pub struct MappedFile {
    region: Arc<Region>,
    len: usize,
}

impl MappedFile {
    /// Maps the file at `path`; `what` names the format in error messages.
    pub fn open(path: &Path, what: &str) -> Result<MappedFile> {
        let file = File::open(path).map_err(|e| Error::runtime(format!("{what}: cannot open {}: {e}", path.display())))?;
        // SAFETY: the mapping is private, so writes never reach the file; a
        // file truncated by another process meanwhile could fault, as with
        // every reader of memory-mapped files (PyTorch's `mmap=True` too).
        let mut map = unsafe { memmap2::MmapOptions::new().map_copy(&file) }
            .map_err(|e| Error::runtime(format!("{what}: cannot map {}: {e}", path.display())))?;
        let len = map.len();
        let base = NonNull::new(map.as_mut_ptr()).unwrap_or(NonNull::dangling());
        Ok(MappedFile { region: Arc::new(Region { base, _map: map }), len })
    }

    /// The file's bytes.
    pub fn bytes(&self) -> &[u8] {
        // SAFETY: `len` bytes from `base` are mapped while `region` lives.
        unsafe { std::slice::from_raw_parts(self.region.base.as_ptr(), self.len) }
    }

    /// A storage over `range` of the file, sharing the mapping when its start
    /// is aligned to `align` bytes and copied otherwise (a tensor's elements
    /// must be aligned to their size).
    pub fn storage(&self, range: Range<usize>, align: usize) -> Result<Arc<Storage>> {
        if range.start > range.end || range.end > self.len {
            return Err(Error::runtime(format!("byte range {range:?} lies outside the {}-byte file", self.len)));
        }
        let nbytes = range.len();
        // SAFETY: checked above that the range lies inside the mapping.
        let ptr = unsafe { self.region.base.as_ptr().add(range.start) };
        if (ptr as usize) % align.max(1) != 0 || nbytes == 0 {
            return copied_storage(&self.bytes()[range]);
        }
        // SAFETY: the range is inside the mapping, which the owner keeps alive.
        let ptr = unsafe { NonNull::new_unchecked(ptr) };
        Ok(Arc::new(unsafe { Storage::from_foreign(ptr, nbytes, Device::CPU, Box::new(self.region.clone())) }))
    }
}

/// A fresh CPU storage holding a copy of `bytes`.
pub(crate) fn copied_storage(bytes: &[u8]) -> Result<Arc<Storage>> {
    let t = Tensor::empty(&[bytes.len()], ferrotorch_core::DType::UInt8, Device::CPU)?;
    // SAFETY: `t` is a fresh contiguous buffer of exactly `bytes.len()` bytes.
    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), t.data_ptr_mut(), bytes.len()) };
    Ok(t.storage().clone())
}
