//! conv2d from Rust: the forward against direct loops, and the gradients of
//! `ConvolutionBackward0` against central finite differences in float64.

use ferrotorch::autograd;
use ferrotorch::ops::conv::ConvParams;
use ferrotorch::Tensor;

fn data(n: usize, seed: usize) -> Vec<f64> {
    (0..n).map(|i| (((i * 7919 + seed * 104_729) % 2003) as f64) / 1000.0 - 1.0).collect()
}

/// Stride, padding and dilation as (height, width) pairs.
struct P {
    stride: (usize, usize),
    padding: (usize, usize),
    dilation: (usize, usize),
}

/// Direct-loop convolution (groups = 1), the independent reference.
fn naive(x: &[f64], xs: [usize; 4], w: &[f64], ws: [usize; 4], p: &P) -> (Vec<f64>, [usize; 4]) {
    let [n, c, h, wd] = xs;
    let [o, _, kh, kw] = ws;
    let oh = (h + 2 * p.padding.0 - p.dilation.0 * (kh - 1) - 1) / p.stride.0 + 1;
    let ow = (wd + 2 * p.padding.1 - p.dilation.1 * (kw - 1) - 1) / p.stride.1 + 1;
    let mut out = vec![0.0; n * o * oh * ow];
    for b in 0..n {
        for oc in 0..o {
            for y in 0..oh {
                for xo in 0..ow {
                    let mut s = 0.0;
                    for ic in 0..c {
                        for i in 0..kh {
                            for j in 0..kw {
                                let iy = (y * p.stride.0 + i * p.dilation.0) as isize - p.padding.0 as isize;
                                let ix = (xo * p.stride.1 + j * p.dilation.1) as isize - p.padding.1 as isize;
                                if iy >= 0 && ix >= 0 && (iy as usize) < h && (ix as usize) < wd {
                                    s += x[((b * c + ic) * h + iy as usize) * wd + ix as usize] * w[((oc * c + ic) * kh + i) * kw + j];
                                }
                            }
                        }
                    }
                    out[((b * o + oc) * oh + y) * ow + xo] = s;
                }
            }
        }
    }
    (out, [n, o, oh, ow])
}

#[test]
fn forward_and_gradients_match_references() {
    let p = P { stride: (2, 1), padding: (1, 2), dilation: (1, 2) };
    let cp = ConvParams::default().stride(&[2, 1]).padding(&[1, 2]).dilation(&[1, 2]);
    let (xs, ws) = ([2usize, 3, 6, 5], [4usize, 3, 3, 2]);
    let (xv, wv) = (data(xs.iter().product(), 1), data(ws.iter().product(), 2));
    let x = Tensor::from_vec(xv.clone(), &xs).unwrap();
    let w = Tensor::from_vec(wv.clone(), &ws).unwrap();
    x.set_requires_grad(true).unwrap();
    w.set_requires_grad(true).unwrap();
    let y = x.conv2d(&w, None, &cp).unwrap();
    let (want, os) = naive(&xv, xs, &wv, ws, &p);
    assert_eq!(y.shape(), &os);
    for (a, b) in y.to_vec::<f64>().unwrap().iter().zip(&want) {
        assert!((a - b).abs() < 1e-12, "{a} vs {b}");
    }
    assert_eq!(y.grad_fn().unwrap().name(), "ConvolutionBackward0");

    // loss = sum(y * c) with fixed weights c, so dloss/dy = c.
    let cv = data(want.len(), 3);
    let c = Tensor::from_vec(cv.clone(), &os).unwrap();
    let loss = y.mul(&c).unwrap().sum().unwrap();
    autograd::backward(&[loss], vec![None], None, false, None).unwrap();
    let loss_of = |xv: &[f64], wv: &[f64]| -> f64 { naive(xv, xs, wv, ws, &p).0.iter().zip(&cv).map(|(a, b)| a * b).sum() };
    let eps = 1e-6;
    for (grad, which) in [(x.grad().unwrap(), 0), (w.grad().unwrap(), 1)] {
        let g = grad.to_vec::<f64>().unwrap();
        let base = if which == 0 { &xv } else { &wv };
        for i in (0..base.len()).step_by(7) {
            let (mut up, mut dn) = (base.clone(), base.clone());
            up[i] += eps;
            dn[i] -= eps;
            let fd = if which == 0 { (loss_of(&up, &wv) - loss_of(&dn, &wv)) / (2.0 * eps) } else { (loss_of(&xv, &up) - loss_of(&xv, &dn)) / (2.0 * eps) };
            assert!((g[i] - fd).abs() < 1e-6, "input {which} element {i}: {} vs {fd}", g[i]);
        }
    }
}
