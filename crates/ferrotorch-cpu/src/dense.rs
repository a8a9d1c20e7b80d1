//! Contiguous operands as slices: the structured kernels (convolution,
//! pooling, normalisation, ...) work on dense rows, and the op layer hands
//! them contiguous operands.

use crate::{Dst, Src};
use ferrotorch_core::{Error, Result};

fn check_contiguous(what: &str, contiguous: bool) -> Result<()> {
    if contiguous {
        Ok(())
    } else {
        Err(Error::runtime(format!("{what}: the CPU kernel expects contiguous operands")))
    }
}

/// The elements of a contiguous read operand.
///
/// # Safety
/// `x` addresses a live storage holding its layout's elements of type `T`,
/// and nothing writes them while the slice lives.
pub unsafe fn elems<'a, T>(what: &str, x: Src<'a>) -> Result<&'a [T]> {
    check_contiguous(what, x.layout.is_contiguous())?;
    let n = x.layout.numel();
    if n == 0 {
        return Ok(&[]);
    }
    // SAFETY: contiguous, so the `n` elements start at the offset and are
    // adjacent; the caller vouches for the storage.
    Ok(unsafe { std::slice::from_raw_parts((x.base as *const T).add(x.layout.offset), n) })
}

/// The elements of a contiguous written operand.
///
/// # Safety
/// As for [`elems`], and nothing else reads or writes them while the slice
/// lives.
pub unsafe fn elems_mut<'a, T>(what: &str, x: Dst<'a>) -> Result<&'a mut [T]> {
    check_contiguous(what, x.layout.is_contiguous())?;
    let n = x.layout.numel();
    if n == 0 {
        return Ok(&mut []);
    }
    // SAFETY: as in `elems`.
    Ok(unsafe { std::slice::from_raw_parts_mut((x.base as *mut T).add(x.layout.offset), n) })
}
