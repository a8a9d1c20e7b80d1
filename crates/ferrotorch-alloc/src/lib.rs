//! A caching memory-pool allocator for ferrotorch.
//!
//! Asking the operating system (or the CUDA driver) for memory is slow, and
//! tensors are created and dropped at a high rate, so — like PyTorch's
//! `CUDACachingAllocator` — freed memory is kept in pools and handed out again
//! instead of being returned. The algorithm is generic over a [`RawAllocator`]
//! (the source of big *segments*), so the same code serves host memory now and
//! device memory later.
//!
//! The rules, all taken from PyTorch:
//!
//! * requests are rounded up to a multiple of [`MIN_BLOCK_SIZE`] (512 bytes);
//! * rounded sizes up to [`SMALL_SIZE`] (1 MiB) use the *small* pool, whose
//!   segments are [`SMALL_BUFFER`] (2 MiB); bigger ones use the *large* pool,
//!   whose segments are [`LARGE_BUFFER`] (20 MiB) for requests under
//!   [`MIN_LARGE_ALLOC`] (10 MiB) and the request rounded up to
//!   [`ROUND_LARGE`] (2 MiB) otherwise;
//! * a request takes the best-fitting cached block (smallest adequate size,
//!   lowest address on ties), splitting off the rest when it is big enough to
//!   be useful;
//! * freed blocks merge with free neighbours in their segment;
//! * every segment belongs to one stream ([`StreamId`]): a request made
//!   with [`CachingAllocator::allocate_on`] reuses only blocks of its own
//!   stream, as PyTorch's per-stream pools (host memory uses
//!   [`DEFAULT_STREAM`] only);
//! * when the raw allocator fails, wholly free segments are released and the
//!   request is retried once before reporting [`OutOfMemory`].
//!
//! [`host_pool`] / [`with_host_pool`] give the process-wide pool used by CPU
//! storage.
//!
//! ```
//! use ferrotorch_alloc::{CachingAllocator, HostAllocator};
//!
//! let mut pool = CachingAllocator::new(HostAllocator);
//! let block = pool.allocate(1000)?;
//! assert_eq!(block.size, 1024); // rounded up to a multiple of 512
//! assert_eq!(pool.stats().reserved_bytes, 2 << 20); // one small-pool segment
//! pool.free(block);
//! let again = pool.allocate(1000)?; // served from the cache
//! assert_eq!(again.ptr, block.ptr);
//! pool.free(again);
//! pool.empty_cache();
//! assert_eq!(pool.stats().reserved_bytes, 0);
//! # Ok::<(), ferrotorch_alloc::OutOfMemory>(())
//! ```

#![warn(missing_docs)]

mod pool;
mod raw;
mod stats;

#[cfg(test)]
mod tests;

pub use pool::{
    Block, CachingAllocator, StreamId, DEFAULT_STREAM, FRONT_CLASSES, FRONT_DEPTH, FRONT_MAX, LARGE_BUFFER, MIN_BLOCK_SIZE,
    MIN_LARGE_ALLOC, ROUND_LARGE,
    SMALL_BUFFER, SMALL_SIZE,
};
pub use raw::{HostAllocator, RawAllocator, HOST_ALIGNMENT, HOST_MAP_MIN};
pub use stats::{format_size, MemoryStats, OutOfMemory};

use std::sync::{Mutex, OnceLock, PoisonError};

/// The process-wide host pool used by CPU storage.
///
/// Created lazily on first use. Prefer [`with_host_pool`], which also copes
/// with a poisoned lock.
pub fn host_pool() -> &'static Mutex<CachingAllocator<HostAllocator>> {
    static POOL: OnceLock<Mutex<CachingAllocator<HostAllocator>>> = OnceLock::new();
    POOL.get_or_init(|| Mutex::new(CachingAllocator::new(HostAllocator)))
}

/// Runs `f` with the host pool locked.
///
/// A panic while the lock was held poisons it; the pool's bookkeeping is only
/// mutated by non-panicking code paths (a panic can at worst come from a debug
/// assertion on a bogus pointer, which happens before any mutation), so the
/// state is still consistent and the poison flag is simply ignored: freeing a
/// tensor must never turn into a second panic.
pub fn with_host_pool<T>(f: impl FnOnce(&mut CachingAllocator<HostAllocator>) -> T) -> T {
    let mut guard = host_pool().lock().unwrap_or_else(PoisonError::into_inner);
    f(&mut guard)
}
