//! ferrotorch embedded in a plain `cargo new` binary: build a model, train
//! it a few steps, save its state dict, load it into a fresh model and
//! predict, with no Python anywhere.
//!
//! ```text
//! cd examples/embed && cargo run
//! ```

use ferrotorch::nn::optim::Adam;
use ferrotorch::nn::{self, Linear, Module, ReLU, Sequential};
use ferrotorch::{autograd, io, DType, Result, Tensor};

fn model() -> Result<Sequential> {
    Ok(Sequential::new().push(Linear::new(2, 16, true)?).push(ReLU).push(Linear::new(16, 1, true)?))
}

fn main() -> Result<()> {
    ferrotorch::defaults::manual_seed(0);
    // Learn y = x0 - 2 x1 on random points.
    let x = Tensor::randn(&[64, 2], DType::Float32, None)?;
    let coef = Tensor::from_vec(vec![1.0f32, -2.0], &[2, 1])?;
    let y = x.matmul(&coef)?;
    let net = model()?;
    let mut opt = Adam::adam(net.parameters(), 0.05)?;
    for step in 0..200 {
        net.zero_grad();
        let d = net.forward(&x)?.sub(&y)?;
        let loss = d.mul(&d)?.mean_dims(None, false, None)?;
        if step % 50 == 0 {
            println!("step {step:3}: loss {:.5}", loss.item()?.to_f64());
        }
        autograd::backward(&[loss], vec![None], None, false, None)?;
        opt.step()?;
    }

    let path = std::env::temp_dir().join("embed-model.safetensors");
    io::safetensors::save_file(&net.state_dict(), None, &path)?;
    let served = model()?;
    served.load_state_dict(&io::load(&path)?, true)?;
    served.eval();
    let _no_grad = nn::no_grad();
    let probe = Tensor::from_vec(vec![1.0f32, 1.0], &[1, 2])?;
    let pred = served.forward(&probe)?.item()?.to_f64();
    println!("f(1, 1) = {pred:.3} (exact: -1)");
    Ok(())
}
