//! Storage: one contiguous buffer of bytes shared by every view of a tensor.
//!
//! A storage knows who owns its memory: a block of the host caching pool (given
//! back to the pool on drop), or a foreign owner such as a NumPy array or a
//! DLPack producer (kept alive until the last view is gone).

use crate::device::Device;
use crate::error::Result;
use ferrotorch_alloc::{with_host_pool, Block};
use std::any::Any;
use std::ptr::NonNull;

/// Who frees the bytes of a [`Storage`].
pub enum Owner {
    /// A block of the process-wide host caching pool.
    HostPool(Block),
    /// Memory owned by something else (a NumPy array, a DLPack capsule, a device
    /// buffer); dropping the box releases it.
    Foreign(Box<dyn Any + Send + Sync>),
    /// No memory at all: the storage of a `meta` tensor.
    Nothing,
}

/// A flat buffer of bytes on one device.
pub struct Storage {
    ptr: NonNull<u8>,
    nbytes: usize,
    device: Device,
    owner: Owner,
}

// SAFETY: the buffer is plain bytes owned by `owner` for the storage's whole life.
// Concurrent access follows the engine's rule that a kernel writes only its
// output, and in-place ops are ordered by the caller (Python holds the GIL), so
// sharing the pointer across threads is no less safe than sharing `&[u8]` plus
// explicitly-ordered writes through `as_mut_ptr`.
unsafe impl Send for Storage {}
unsafe impl Sync for Storage {}

impl Storage {
    /// Allocates `nbytes` from the host caching pool (contents undefined).
    pub fn new_cpu(nbytes: usize) -> Result<Storage> {
        let block = with_host_pool(|pool| pool.allocate(nbytes))?;
        Ok(Storage { ptr: block.ptr, nbytes, device: Device::CPU, owner: Owner::HostPool(block) })
    }

    /// The storage of a `meta` tensor: it has a size but no memory. Its
    /// pointer is dangling; the meta backend's kernels never use it.
    pub fn new_meta(nbytes: usize) -> Storage {
        Storage { ptr: NonNull::dangling(), nbytes, device: Device::META, owner: Owner::Nothing }
    }

    /// Allocates `nbytes` from the host caching pool for a tensor of zeros.
    ///
    /// The flag says whether the bytes already read as zero (a fresh segment,
    /// whose big sizes are untouched pages); when it is `false` the caller
    /// writes the zeros, with its parallel fill.
    pub fn new_cpu_zeroed(nbytes: usize) -> Result<(Storage, bool)> {
        let (block, zeroed) = with_host_pool(|pool| pool.allocate_zeroed(nbytes))?;
        Ok((Storage { ptr: block.ptr, nbytes, device: Device::CPU, owner: Owner::HostPool(block) }, zeroed))
    }

    /// Wraps memory owned by someone else.
    ///
    /// # Safety
    /// `ptr` must be valid for reads and writes of `nbytes` bytes for as long as
    /// `owner` is alive, and suitably aligned for the dtype it will be viewed as.
    pub unsafe fn from_foreign(
        ptr: NonNull<u8>,
        nbytes: usize,
        device: Device,
        owner: Box<dyn Any + Send + Sync>,
    ) -> Storage {
        Storage { ptr, nbytes, device, owner: Owner::Foreign(owner) }
    }

    /// Size in bytes.
    pub fn nbytes(&self) -> usize {
        self.nbytes
    }

    /// The device the bytes live on.
    pub fn device(&self) -> Device {
        self.device
    }

    /// Address of the first byte, for code that reads the bytes on the host.
    ///
    /// # Panics
    /// On a `meta` storage, which has no bytes, and on a CUDA storage, whose
    /// bytes the host cannot read: an op that reads memory directly instead
    /// of through its device's backend was given such a tensor (an engine
    /// bug, shown to Python as an internal error).
    pub fn as_ptr(&self) -> *const u8 {
        self.check_has_memory();
        self.ptr.as_ptr()
    }

    /// Address of the first byte, for writing on the host. Callers uphold the
    /// rule that a kernel writes only its output region.
    ///
    /// # Panics
    /// As [`as_ptr`](Self::as_ptr).
    pub fn as_mut_ptr(&self) -> *mut u8 {
        self.check_has_memory();
        self.ptr.as_ptr()
    }

    /// The address a [`Backend`](crate::backend::Backend) kernel takes: the
    /// device pointer, or a dangling placeholder for `meta`, whose kernels
    /// never dereference it.
    pub fn raw_ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    fn check_has_memory(&self) {
        if matches!(self.owner, Owner::Nothing) {
            panic!("a meta tensor reached code that reads tensor memory on the host; this op has no meta kernel");
        }
        // A device pointer read on the host would be undefined behaviour,
        // not merely a wrong value: stop at the engine bug instead.
        if self.device.kind == crate::device::DeviceType::Cuda {
            panic!("a CUDA tensor reached code that reads tensor memory on the host; this op must go through its backend");
        }
    }

    /// Is the memory owned by the caching pool (as opposed to a foreign owner)?
    pub fn is_pooled(&self) -> bool {
        matches!(self.owner, Owner::HostPool(_))
    }

    /// The foreign owner, if any (used to hand NumPy back its own array).
    pub fn foreign_owner(&self) -> Option<&(dyn Any + Send + Sync)> {
        match &self.owner {
            Owner::Foreign(b) => Some(b.as_ref()),
            Owner::HostPool(_) | Owner::Nothing => None,
        }
    }
}

impl Drop for Storage {
    fn drop(&mut self) {
        if let Owner::HostPool(block) = self.owner {
            with_host_pool(|pool| pool.free(block));
        }
    }
}

impl std::fmt::Debug for Storage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Storage({:p}, {} bytes, {})", self.ptr, self.nbytes, self.device)
    }
}
