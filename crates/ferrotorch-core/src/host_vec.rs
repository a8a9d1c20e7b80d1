//! Host vectors whose length a user controls (per-row statistics, per-channel
//! sums): allocated fallibly, so a size beyond the machine's memory is
//! PyTorch's out-of-memory `RuntimeError` instead of an abort.

use crate::error::{Error, Result};

/// `vec![v; n]`, or an out-of-memory error when the allocation fails.
pub fn filled<T: Clone>(n: usize, v: T) -> Result<Vec<T>> {
    let mut out = Vec::new();
    if out.try_reserve_exact(n).is_err() {
        let bytes = n.saturating_mul(std::mem::size_of::<T>());
        return Err(Error::out_of_memory(format!(
            "out of memory: tried to allocate {bytes} bytes of host memory for {n} elements"
        )));
    }
    out.resize(n, v);
    Ok(out)
}

#[cfg(test)]
mod tests {
    #[test]
    fn filled_is_vec_macro_or_error() {
        assert_eq!(super::filled(3, 1.5f32).unwrap(), vec![1.5f32; 3]);
        assert!(super::filled(usize::MAX / 2, 0u64).is_err());
    }
}
