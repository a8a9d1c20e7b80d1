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

    /// Allocates `size` bytes that read as zero.
    ///
    /// The default writes the zeros; host memory overrides it with
    /// `alloc_zeroed`, whose big requests are fresh pages the kernel zeroes
    /// lazily, so a large `zeros` costs nothing until it is touched.
    fn alloc_zeroed(&mut self, size: usize) -> Option<NonNull<u8>> {
        let ptr = self.alloc(size)?;
        // SAFETY: `alloc` just returned `ptr` valid for writes of `size` bytes
        // (for size 0 the write is empty).
        unsafe { ptr.as_ptr().write_bytes(0, size) };
        Some(ptr)
    }

    /// Gives a segment back.
    ///
    /// # Safety
    /// `ptr`/`size` come from a previous [`alloc`](RawAllocator::alloc) of this
    /// allocator and have not been freed since.
    unsafe fn free(&mut self, ptr: NonNull<u8>, size: usize);
}

/// Host memory, aligned to [`HOST_ALIGNMENT`] (64) bytes.
///
/// Segments of [`HOST_MAP_MIN`] bytes and more are anonymous memory maps on
/// Unix: their pages are zero until first touched, so
/// [`alloc_zeroed`](RawAllocator::alloc_zeroed) is free and a large `zeros`
/// commits no memory until it is written (as `calloc` gives PyTorch). Smaller
/// segments, and every segment elsewhere, come from [`std::alloc`]. The pool
/// frees a segment with the size it was allocated with, so the size alone
/// says which of the two released it.
#[derive(Debug, Default, Clone, Copy)]
pub struct HostAllocator;

/// The segment size from which [`HostAllocator`] maps pages itself.
pub const HOST_MAP_MIN: usize = 4 << 20;

/// A well-aligned, never-dereferenced pointer for zero-sized allocations.
#[repr(align(64))]
struct Align64;

/// A dangling pointer aligned to [`HOST_ALIGNMENT`], for zero-byte requests
/// (which `std::alloc::alloc` does not accept).
pub(crate) fn dangling_aligned() -> NonNull<u8> {
    NonNull::<Align64>::dangling().cast()
}

/// Whether a segment of `size` bytes is a memory map (see [`HostAllocator`]).
fn is_mapped(size: usize) -> bool {
    cfg!(unix) && size >= HOST_MAP_MIN
}

#[cfg(unix)]
fn map_pages(size: usize) -> Option<NonNull<u8>> {
    // SAFETY: an anonymous private mapping at an address of the kernel's
    // choice touches no existing memory; failure is reported as MAP_FAILED.
    let ptr = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            size,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if ptr == libc::MAP_FAILED {
        return None;
    }
    // Page-aligned, hence HOST_ALIGNMENT-aligned.
    NonNull::new(ptr.cast())
}

#[cfg(not(unix))]
fn map_pages(_size: usize) -> Option<NonNull<u8>> {
    unreachable!("is_mapped is false without unix")
}

impl HostAllocator {
    fn alloc_with(size: usize, zeroed: bool) -> Option<NonNull<u8>> {
        if size == 0 {
            // `std::alloc::alloc` forbids zero-sized layouts; nothing is needed.
            return Some(dangling_aligned());
        }
        if is_mapped(size) {
            return map_pages(size);
        }
        // Fails for sizes that overflow isize when rounded to the alignment.
        let layout = Layout::from_size_align(size, HOST_ALIGNMENT).ok()?;
        // SAFETY: `layout` has a non-zero size (checked above) and a valid
        // power-of-two alignment, which is all `alloc`/`alloc_zeroed` require.
        NonNull::new(unsafe {
            if zeroed {
                std::alloc::alloc_zeroed(layout)
            } else {
                std::alloc::alloc(layout)
            }
        })
    }
}

impl RawAllocator for HostAllocator {
    fn alloc(&mut self, size: usize) -> Option<NonNull<u8>> {
        Self::alloc_with(size, false)
    }

    fn alloc_zeroed(&mut self, size: usize) -> Option<NonNull<u8>> {
        Self::alloc_with(size, true)
    }

    unsafe fn free(&mut self, ptr: NonNull<u8>, size: usize) {
        if size == 0 {
            return; // The dangling pointer from `alloc(0)` owns nothing.
        }
        #[cfg(unix)]
        if is_mapped(size) {
            // SAFETY: the caller guarantees `ptr`/`size` came from `alloc`,
            // which mapped exactly `size` bytes at `ptr` for this size.
            unsafe { libc::munmap(ptr.as_ptr().cast(), size) };
            return;
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
