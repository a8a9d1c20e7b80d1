//! When a kernel writes its output with streaming (non-temporal) stores.
//!
//! An ordinary store to a line that is not in cache first reads the line
//! from memory (read-for-ownership), so a bandwidth-bound kernel writing a
//! fresh output of many megabytes moves the output twice; under memory
//! pressure from other cores those reads also wait the longest. Streaming
//! stores write whole lines without reading them and leave the cache to the
//! inputs. An output this large would not stay in L2 for its consumer
//! anyway, which is the price: the next op reads it from memory, not from L3.

/// Outputs of at least this many bytes are streamed: past the L2 of any
/// current core and a large share of an L3.
pub const STREAM_BYTES: usize = 4 << 20;

/// Whether a kernel writing `bytes` of fresh output streams it.
#[inline]
pub fn streams(bytes: usize) -> bool {
    bytes >= STREAM_BYTES && super::isa() >= super::Isa::Avx2
}

/// Orders a task's streaming stores before whatever follows it (they are
/// weakly ordered): called at the end of each task that streamed, before
/// the thread pool hands its output to another thread.
#[inline]
pub fn fence() {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: SSE is part of x86-64.
    unsafe {
        std::arch::x86_64::_mm_sfence()
    }
}
