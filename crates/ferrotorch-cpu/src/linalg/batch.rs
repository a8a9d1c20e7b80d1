//! Output chunks for kernels that run one matrix of a batch per parallel task.

use crate::parallel::SendPtr;

/// Output chunks of a batched kernel: matrix `b` owns `[b * len, (b + 1) * len)`.
pub(super) struct Chunks<T> {
    ptr: SendPtr<T>,
    len: usize,
}

impl<T> Chunks<T> {
    /// `out`, cut into consecutive chunks of `len` elements.
    pub(super) fn new(out: &mut [T], len: usize) -> Self {
        Chunks { ptr: SendPtr(out.as_mut_ptr()), len }
    }

    /// The chunk of matrix `b`.
    ///
    /// # Safety
    /// `b` is below the batch size `out` was cut for, and only one task
    /// takes chunk `b`, once.
    #[allow(clippy::mut_from_ref)]
    pub(super) unsafe fn get(&self, b: usize) -> &mut [T] {
        // SAFETY: the caller guarantees chunk `b` lies inside `out` and is
        // not referenced elsewhere.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.get().add(b * self.len), self.len) }
    }
}
