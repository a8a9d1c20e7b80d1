//! A pure-Rust program using the ferrotorch crate: tensors, views, a matmul.
//!
//! Run with `cargo run -p ferrotorch --example views` (the file lives in the top-level examples/ folder).

use ferrotorch::{DType, Result, Tensor};

fn main() -> Result<()> {
    let x = Tensor::arange_f64(0.0, 6.0, 1.0, DType::Float32)?.view(&[2, 3])?;
    println!("x          = {:?}", x);
    let t = x.t()?;
    println!("x.t()      = {:?} strides {:?} contiguous {}", t, t.strides(), t.is_contiguous());
    let row = x.select(0, 1)?;
    println!("x[1]       = {:?} offset {}", row, row.storage_offset());
    row.fill_(ferrotorch::Scalar::Float(7.0))?;
    println!("after x[1].fill_(7): x = {:?} (version {})", x, x.version());
    let y = x.matmul(&t)?;
    println!("x @ x.T    = {:?}", y);
    println!("sum        = {:?}", y.sum()?.item()?);
    Ok(())
}
