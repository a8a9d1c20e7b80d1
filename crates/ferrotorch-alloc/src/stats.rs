//! Memory statistics and the out-of-memory error.

use std::fmt;

/// A snapshot of the caching allocator's counters, as in
/// `torch.cuda.memory_stats()` (the `all` pool, current and peak values).
///
/// All sizes are in bytes. "Current" values describe the state right now;
/// `peak_*` values are the highest the matching current value has been since
/// the allocator was created or since
/// [`reset_peak_stats`](crate::CachingAllocator::reset_peak_stats);
/// counters (`allocation_count`, `free_count`, `num_alloc_retries`,
/// `num_ooms`) accumulate until
/// [`reset_accumulated_stats`](crate::CachingAllocator::reset_accumulated_stats).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MemoryStats {
    /// Bytes in blocks handed out to callers (rounded / whole-block sizes).
    pub allocated_bytes: u64,
    /// Highest `allocated_bytes` seen.
    pub peak_allocated_bytes: u64,
    /// Bytes in segments held from the raw allocator (handed out or cached).
    pub reserved_bytes: u64,
    /// Highest `reserved_bytes` seen.
    pub peak_reserved_bytes: u64,
    /// Bytes in blocks that are in use. Without asynchronous streams a block is
    /// active exactly while it is allocated, so this equals `allocated_bytes`.
    pub active_bytes: u64,
    /// Highest `active_bytes` seen.
    pub peak_active_bytes: u64,
    /// Bytes callers asked for in the live allocations, before rounding.
    pub requested_bytes: u64,
    /// Highest `requested_bytes` seen.
    pub peak_requested_bytes: u64,
    /// Number of successful non-empty allocations (accumulated).
    pub allocation_count: u64,
    /// Number of frees of non-empty blocks (accumulated).
    pub free_count: u64,
    /// Number of segments currently held from the raw allocator.
    pub segment_count: u64,
    /// Number of times a failed raw allocation made the allocator release its
    /// cache and retry (accumulated).
    pub num_alloc_retries: u64,
    /// Number of requests that failed with [`OutOfMemory`] (accumulated).
    pub num_ooms: u64,
    /// Cached bytes in free blocks that are only part of their segment; such
    /// memory cannot be released by `empty_cache`, so it measures fragmentation.
    pub inactive_split_bytes: u64,
}

/// The raw allocator could not provide memory even after the cache was released.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutOfMemory {
    /// The size the caller asked for, in bytes.
    pub requested: usize,
    /// Bytes handed out to callers at the time of the failure.
    pub allocated: u64,
    /// Bytes held from the raw allocator at the time of the failure.
    pub reserved: u64,
}

impl fmt::Display for OutOfMemory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "out of memory: tried to allocate {} bytes ({}); {} bytes ({}) already allocated; \
             {} bytes ({}) reserved in total by the caching allocator",
            self.requested,
            HumanSize(self.requested as u64),
            self.allocated,
            HumanSize(self.allocated),
            self.reserved,
            HumanSize(self.reserved),
        )
    }
}

impl std::error::Error for OutOfMemory {}

/// Formats a byte count the way PyTorch's `format_size` does
/// ("512 bytes", "1.50 KiB", "20.00 MiB", "1.00 GiB").
pub(crate) struct HumanSize(pub(crate) u64);

impl fmt::Display for HumanSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const KIB: u64 = 1024;
        const MIB: u64 = 1024 * KIB;
        const GIB: u64 = 1024 * MIB;
        let n = self.0;
        // Same thresholds as PyTorch: a unit is used up to and including 1024 of it.
        if n <= KIB {
            write!(f, "{n} bytes")
        } else if n <= MIB {
            write!(f, "{:.2} KiB", n as f64 / KIB as f64)
        } else if n <= GIB {
            write!(f, "{:.2} MiB", n as f64 / MIB as f64)
        } else {
            write!(f, "{:.2} GiB", n as f64 / GIB as f64)
        }
    }
}

/// A byte count as PyTorch's `format_size` prints it in its messages
/// ("512 bytes", "1.50 KiB", "20.00 MiB", "1.00 GiB").
pub fn format_size(bytes: u64) -> String {
    HumanSize(bytes).to_string()
}
