//! Storages in shared memory: `Tensor::share_memory_` and rebuilding, in
//! another process, a tensor whose memory was shared with it.
//!
//! A shared storage is a file on a memory file system (`/dev/shm` where it
//! exists), mapped `MAP_SHARED` and unlinked as soon as it is created, so
//! nothing is left behind however the processes end. Other processes reach it
//! through its file descriptor (PyTorch's `file_descriptor` strategy): Python's
//! multiprocessing duplicates the descriptor into the receiver, which maps the
//! same pages with [`Tensor::from_shared_fd`].

use crate::Tensor;
use ferrotorch_core::{DType, Device, Error, Layout, Result, Storage};
use memmap2::MmapMut;
use std::fs::File;
use std::os::unix::io::{AsRawFd, FromRawFd, RawFd};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// The mapping and the descriptor that keep a shared storage alive.
pub struct SharedMemory {
    map: MmapMut,
    file: File,
}

fn io_err(what: &str, e: std::io::Error) -> Error {
    Error::runtime(format!("unable to {what} shared memory: {e}"))
}

impl SharedMemory {
    /// A new zero-filled shared region of `nbytes` bytes.
    pub fn create(nbytes: usize) -> Result<SharedMemory> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let dir = if std::path::Path::new("/dev/shm").is_dir() { "/dev/shm".into() } else { std::env::temp_dir() };
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let path = dir.join(format!("ferrotorch_shm_{}_{n}", std::process::id()));
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(|e| io_err("create", e))?;
        // Unlinked at once: the descriptor and the mappings keep the pages.
        let _ = std::fs::remove_file(&path);
        Self::map(file, nbytes)
    }

    /// Maps the region behind `fd`, taking ownership of the descriptor.
    ///
    /// # Safety
    /// `fd` is an open descriptor this process owns and no one else closes.
    pub unsafe fn from_fd(fd: RawFd, nbytes: usize) -> Result<SharedMemory> {
        let file = File::from_raw_fd(fd);
        let len = file.metadata().map_err(|e| io_err("inspect", e))?.len();
        if (len as u128) < nbytes.max(1) as u128 {
            return Err(Error::runtime(format!(
                "shared memory region of {len} bytes is smaller than the {nbytes} bytes the tensor needs"
            )));
        }
        Self::map(file, nbytes)
    }

    fn map(file: File, nbytes: usize) -> Result<SharedMemory> {
        // A zero-length mapping is refused by mmap: keep one byte for empty storages.
        let len = nbytes.max(1) as u64;
        if file.metadata().map_err(|e| io_err("inspect", e))?.len() < len {
            file.set_len(len).map_err(|e| io_err("allocate", e))?;
        }
        // SAFETY: the file is private to the processes sharing this tensor; concurrent
        // writes through other mappings are the sharing PyTorch offers (Hogwild).
        let map = unsafe { MmapMut::map_mut(&file) }.map_err(|e| io_err("map", e))?;
        Ok(SharedMemory { map, file })
    }

    /// The descriptor another process can duplicate to map the same pages.
    pub fn fd(&self) -> RawFd {
        self.file.as_raw_fd()
    }

    /// A storage of `nbytes` bytes over this region.
    pub fn into_storage(mut self, nbytes: usize) -> Storage {
        let ptr = NonNull::new(self.map.as_mut_ptr()).unwrap_or(NonNull::dangling());
        // SAFETY: the mapping is at least `nbytes` long, page-aligned, and lives in
        // `self`, which the storage owns.
        unsafe { Storage::from_foreign(ptr, nbytes, Device::CPU, Box::new(self)) }
    }
}

fn shared_of(storage: &Storage) -> Option<&SharedMemory> {
    storage.foreign_owner().and_then(|o| o.downcast_ref::<SharedMemory>())
}

impl Tensor {
    /// `is_shared()`: whether the storage lives in shared memory.
    pub fn is_shared(&self) -> bool {
        shared_of(self.storage()).is_some()
    }

    /// `share_memory_()`: moves the storage into shared memory (a no-op when it
    /// is there already). Views made before keep the old storage.
    pub fn share_memory_(&self) -> Result<()> {
        if self.is_shared() || !self.device().is_cpu() {
            return Ok(());
        }
        let old = self.storage().clone();
        let mut shm = SharedMemory::create(old.nbytes())?;
        // SAFETY: both regions hold `old.nbytes()` bytes and are distinct.
        unsafe { std::ptr::copy_nonoverlapping(old.as_ptr(), shm.map.as_mut_ptr(), old.nbytes()) };
        self.set_storage_(Arc::new(shm.into_storage(old.nbytes())), self.layout().clone())
    }

    /// The descriptor of a shared tensor's storage and the storage's size in bytes.
    pub fn shared_fd(&self) -> Option<(RawFd, usize)> {
        shared_of(self.storage()).map(|s| (s.fd(), self.storage().nbytes()))
    }

    /// A tensor over the shared storage behind `fd` (from [`Tensor::shared_fd`]
    /// in another process), taking ownership of the descriptor.
    ///
    /// # Safety
    /// `fd` is an open descriptor this process owns and no one else closes.
    pub unsafe fn from_shared_fd(fd: RawFd, nbytes: usize, dtype: DType, layout: Layout) -> Result<Tensor> {
        let storage = SharedMemory::from_fd(fd, nbytes)?.into_storage(nbytes);
        Tensor::from_parts(Arc::new(storage), layout, dtype)
    }
}

#[cfg(test)]
mod tests {
    use crate::Tensor;

    #[test]
    fn share_memory_keeps_values_and_a_second_mapping_sees_writes() {
        let t = Tensor::from_vec(vec![1.0f32, 2.0, 3.0], &[3]).unwrap();
        assert!(!t.is_shared());
        t.share_memory_().unwrap();
        assert!(t.is_shared());
        assert_eq!(t.to_vec::<f32>().unwrap(), vec![1.0, 2.0, 3.0]);
        let (fd, nbytes) = t.shared_fd().unwrap();
        // SAFETY: dup gives this test its own descriptor for the second mapping.
        let dup = unsafe { dup_fd(fd) };
        let u = unsafe { Tensor::from_shared_fd(dup, nbytes, t.dtype(), t.layout().clone()) }.unwrap();
        u.fill_raw_(ferrotorch_core::Scalar::Float(7.0)).unwrap();
        assert_eq!(t.to_vec::<f32>().unwrap(), vec![7.0; 3]);
    }

    /// `dup(2)` through std: a cloned `File` is a duplicated descriptor.
    unsafe fn dup_fd(fd: std::os::unix::io::RawFd) -> std::os::unix::io::RawFd {
        use std::os::unix::io::{FromRawFd, IntoRawFd};
        let f = std::mem::ManuallyDrop::new(std::fs::File::from_raw_fd(fd));
        f.try_clone().unwrap().into_raw_fd()
    }
}
