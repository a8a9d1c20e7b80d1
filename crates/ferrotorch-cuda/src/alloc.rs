//! Device memory: the raw CUDA allocator under the one caching-allocator
//! algorithm of `ferrotorch-alloc`, the storage owner that gives blocks
//! back, and PyTorch's out-of-memory message.

use cudarc::driver::{result, CudaContext};
use ferrotorch_alloc::{format_size, Block, CachingAllocator, OutOfMemory, RawAllocator, StreamId};
use ferrotorch_core::Error;
use std::ptr::NonNull;
use std::sync::{Arc, Mutex, PoisonError};

/// Segments from `cuMemAlloc` on one device's context: the source the
/// caching allocator carves blocks from (PyTorch's `cudaMalloc` under its
/// `CUDACachingAllocator`).
pub struct CudaRaw {
    ctx: Arc<CudaContext>,
}

impl CudaRaw {
    /// The raw allocator of the device `ctx` belongs to.
    pub fn new(ctx: Arc<CudaContext>) -> CudaRaw {
        CudaRaw { ctx }
    }
}

impl RawAllocator for CudaRaw {
    fn alloc(&mut self, size: usize) -> Option<NonNull<u8>> {
        self.ctx.bind_to_thread().ok()?;
        // SAFETY: the context is current on this thread (bound above);
        // cuMemAlloc has no other precondition. Failure is reported, not UB.
        let ptr = unsafe { result::malloc_sync(size) }.ok()?;
        NonNull::new(ptr as *mut u8)
    }

    fn alloc_zeroed(&mut self, size: usize) -> Option<NonNull<u8>> {
        // The default would write zeros through a host pointer; device
        // memory is cleared by the driver.
        let ptr = self.alloc(size)?;
        // SAFETY: `ptr` is a fresh device allocation of `size` bytes on the
        // bound context.
        if unsafe { result::memset_d8_sync(ptr.as_ptr() as u64, 0, size) }.is_err() {
            // SAFETY: `ptr`/`size` were just allocated above and not freed.
            unsafe { self.free(ptr, size) };
            return None;
        }
        Some(ptr)
    }

    unsafe fn free(&mut self, ptr: NonNull<u8>, _size: usize) {
        if self.ctx.bind_to_thread().is_ok() {
            // SAFETY: the caller guarantees `ptr` came from `alloc` on this
            // context and is freed once. A failure (a context already torn
            // down at exit) leaves nothing to undo.
            let _ = unsafe { result::free_sync(ptr.as_ptr() as u64) };
        }
    }
}

/// One device's caching allocator.
pub type DevicePool = Mutex<CachingAllocator<CudaRaw>>;

/// Locks a device pool; a poisoned lock is taken over, as the host pool does
/// (the allocator's bookkeeping is consistent between calls).
pub fn lock(pool: &DevicePool) -> std::sync::MutexGuard<'_, CachingAllocator<CudaRaw>> {
    pool.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The owner of a CUDA storage's bytes: a block of its device's pool,
/// returned to that pool (and its stream) when the last view is dropped.
pub struct DeviceBlock {
    /// The pool the block came from.
    pub pool: &'static DevicePool,
    /// The block.
    pub block: Block,
    /// The stream it was allocated for.
    pub stream: StreamId,
}

impl Drop for DeviceBlock {
    fn drop(&mut self) {
        lock(self.pool).free(self.block);
    }
}

/// PyTorch's `torch.OutOfMemoryError` message for a failed request on
/// device `index`, given the device's total and free bytes when known.
pub fn oom_error(index: usize, e: &OutOfMemory, total_free: Option<(u64, u64)>) -> Error {
    let capacity = match total_free {
        Some((total, free)) => format!(
            " GPU {index} has a total capacity of {} of which {} is free.",
            format_size(total),
            format_size(free)
        ),
        None => String::new(),
    };
    Error::out_of_memory(format!(
        "CUDA out of memory. Tried to allocate {}.{capacity} Of the allocated memory {} is allocated by PyTorch, \
         and {} is reserved by PyTorch but unallocated.",
        format_size(e.requested as u64),
        format_size(e.allocated),
        format_size(e.reserved.saturating_sub(e.allocated)),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferrotorch_core::ErrorKind;

    #[test]
    fn oom_message_states_allocated_and_reserved_as_pytorch() {
        let e = OutOfMemory { requested: 20 << 20, allocated: 3 << 30, reserved: (3 << 30) + (512 << 20) };
        let err = oom_error(0, &e, Some((80 << 30, 1 << 20)));
        assert_eq!(err.kind, ErrorKind::OutOfMemory);
        assert_eq!(
            err.msg,
            "CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 80.00 GiB of which \
             1024.00 KiB is free. Of the allocated memory 3.00 GiB is allocated by PyTorch, and 512.00 MiB is \
             reserved by PyTorch but unallocated."
        );
        let bare = oom_error(1, &OutOfMemory { requested: 512, allocated: 0, reserved: 0 }, None);
        assert!(bare.msg.starts_with("CUDA out of memory. Tried to allocate 512 bytes. Of the allocated memory 0 bytes"));
    }
}
