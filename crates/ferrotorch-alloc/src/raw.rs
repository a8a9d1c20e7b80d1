//! Sources of raw memory segments.

use std::alloc::Layout;
use std::ptr::NonNull;

/// Alignment of every segment [`HostAllocator`] hands out, in bytes.
///
/// 64 bytes is a cache line and the width of an AVX-512 register, so SIMD
/// loads of any dtype are aligned. Since every block offset inside a segment
/// is a multiple of 512, every block the pool hands out inherits it.
pub const HOST_ALIGNMENT: usize = 64;

/// Source of raw memory segments (host malloc, cudaMalloc, ...).
///
/// The caching allocator calls it rarely and for big sizes (at least 2 MiB),
/// and carves the segments into blocks itself.
pub trait RawAllocator: Send {
    /// Allocates `size` bytes. Returns `None` when the system is out of memory.
    fn alloc(&mut self, size: usize) -> Option<NonNull<u8>>;

    /// Gives a segment back.
    ///
    /// # Safety
    /// `ptr`/`size` come from a previous [`alloc`](RawAllocator::alloc) of this
    /// allocator and have not been freed since.
    unsafe fn free(&mut self, ptr: NonNull<u8>, size: usize);
}

/// Host memory via [`std::alloc`], aligned to [`HOST_ALIGNMENT`] (64) bytes.
#[derive(Debug, Default, Clone, Copy)]
pub struct HostAllocator;

/// A well-aligned, never-dereferenced pointer for zero-sized allocations.
#[repr(align(64))]
struct Align64;

/// A dangling pointer aligned to [`HOST_ALIGNMENT`], for zero-byte requests
/// (which `std::alloc::alloc` does not accept).
pub(crate) fn dangling_aligned() -> NonNull<u8> {
    NonNull::<Align64>::dangling().cast()
}

impl RawAllocator for HostAllocator {
    fn alloc(&mut self, size: usize) -> Option<NonNull<u8>> {
        if size == 0 {
            // `std::alloc::alloc` forbids zero-sized layouts; nothing is needed.
            return Some(dangling_aligned());
        }
        // Fails for sizes that overflow isize when rounded to the alignment.
        let layout = Layout::from_size_align(size, HOST_ALIGNMENT).ok()?;
        // SAFETY: `layout` has a non-zero size (checked above) and a valid
        // power-of-two alignment, which is all `alloc` requires.
        NonNull::new(unsafe { std::alloc::alloc(layout) })
    }

    unsafe fn free(&mut self, ptr: NonNull<u8>, size: usize) {
        if size == 0 {
            return; // The dangling pointer from `alloc(0)` owns nothing.
        }
        // SAFETY: the caller guarantees `ptr`/`size` came from `alloc` above,
        // which built the layout from the same size and alignment and succeeded,
        // so the layout is valid and `ptr` is a live allocation with it.
        unsafe {
            let layout = Layout::from_size_align_unchecked(size, HOST_ALIGNMENT);
            std::alloc::dealloc(ptr.as_ptr(), layout);
        }
    }
}
