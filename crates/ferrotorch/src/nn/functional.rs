//! The stateless forms of the layers (`torch.nn.functional`), composed from
//! the op layer.
//!
//! ```
//! use ferrotorch::{nn::functional as F, Tensor};
//! let x = Tensor::from_vec(vec![-1.0f32, 0.0, 2.0], &[3]).unwrap();
//! assert_eq!(F::relu(&x).unwrap().to_vec::<f32>().unwrap(), vec![0.0, 0.0, 2.0]);
//! let p = F::softmax(&x, 0).unwrap().to_vec::<f32>().unwrap();
//! assert!((p.iter().sum::<f32>() - 1.0).abs() < 1e-6);
//! ```

use ferrotorch_core::{DType, Error, Result, Scalar};

use crate::ops::arith::{binary, unary, BinaryOp, Operand, UnaryOp};
use crate::Tensor;

/// `t * s`.
pub(crate) fn scale(t: &Tensor, s: f64) -> Result<Tensor> {
    binary(Operand::T(t), Operand::S(Scalar::Float(s)), BinaryOp::Mul)
}

/// `t + s`.
pub(crate) fn shift(t: &Tensor, s: f64) -> Result<Tensor> {
    binary(Operand::T(t), Operand::S(Scalar::Float(s)), BinaryOp::Add)
}

/// `linear(input, weight, bias)`: `input @ weight.T + bias` over the last
/// dim of `input` (`weight` is `(out_features, in_features)`).
///
/// ```
/// use ferrotorch::{nn::functional::linear, Tensor};
/// let x = Tensor::from_vec(vec![1.0f32, 2.0], &[1, 2]).unwrap();
/// let w = Tensor::from_vec(vec![1.0f32, 1.0, 0.0, 1.0], &[2, 2]).unwrap();
/// let b = Tensor::from_vec(vec![0.5f32, 0.0], &[2]).unwrap();
/// assert_eq!(linear(&x, &w, Some(&b)).unwrap().to_vec::<f32>().unwrap(), vec![3.5, 2.0]);
/// ```
pub fn linear(input: &Tensor, weight: &Tensor, bias: Option<&Tensor>) -> Result<Tensor> {
    if weight.ndim() != 2 {
        return Err(Error::runtime(format!("linear: weight must be 2-D, got {}-D", weight.ndim())));
    }
    match (input.ndim(), bias) {
        (2, Some(b)) => b.addmm(input, &weight.t()?),
        (n, Some(b)) if n > 2 => {
            // As PyTorch's `_flatten_nd_linear`: the leading dims fold into
            // the rows of one addmm, so the bias rides in the GEMM's
            // accumulator instead of a second pass over the output.
            let shape = input.shape();
            let rows: usize = shape[..n - 1].iter().product();
            let y = b.addmm(&input.reshape(&[rows as i64, shape[n - 1] as i64])?, &weight.t()?)?;
            let mut out: Vec<i64> = shape[..n - 1].iter().map(|&d| d as i64).collect();
            out.push(weight.shape()[0] as i64);
            y.view(&out)
        }
        (_, Some(b)) => input.matmul(&weight.t()?)?.add(b),
        (_, None) => input.matmul(&weight.t()?),
    }
}

/// `relu(input)`.
pub fn relu(input: &Tensor) -> Result<Tensor> {
    unary(input, UnaryOp::Relu)
}

/// `gelu(input, approximate)`: `approximate` is `"none"` (the exact erf
/// form) or `"tanh"`.
pub fn gelu(input: &Tensor, approximate: &str) -> Result<Tensor> {
    let tanh = match approximate {
        "none" => false,
        "tanh" => true,
        other => return Err(Error::runtime(format!("approximate argument must be either none or tanh., got {other}"))),
    };
    unary(input, UnaryOp::Gelu(tanh))
}

/// `silu(input)`.
pub fn silu(input: &Tensor) -> Result<Tensor> {
    unary(input, UnaryOp::Silu)
}

/// `sigmoid(input)`.
pub fn sigmoid(input: &Tensor) -> Result<Tensor> {
    unary(input, UnaryOp::Sigmoid)
}

/// `tanh(input)`.
pub fn tanh(input: &Tensor) -> Result<Tensor> {
    unary(input, UnaryOp::Tanh)
}

/// `softmax(input, dim)`.
pub fn softmax(input: &Tensor, dim: i64) -> Result<Tensor> {
    input.softmax(dim, None, false)
}

/// `dropout(input, p, training)`: zeroes each element with probability `p`
/// and scales the rest by `1/(1-p)` in training; the identity otherwise.
pub fn dropout(input: &Tensor, p: f64, training: bool) -> Result<Tensor> {
    if !(0.0..=1.0).contains(&p) {
        return Err(Error::value(format!("dropout probability has to be between 0 and 1, but got {p}")));
    }
    if !training || p == 0.0 {
        return Ok(input.clone());
    }
    if p == 1.0 {
        return scale(input, 0.0);
    }
    let draw = Tensor::rand(input.shape(), input.dtype(), None)?;
    let keep = binary(Operand::T(&draw), Operand::S(Scalar::Float(1.0 - p)), BinaryOp::Lt)?.to_dtype(input.dtype())?;
    scale(&input.mul(&keep)?, 1.0 / (1.0 - p))
}

/// `rms_norm(input, normalized_shape, weight, eps)`: `input / sqrt(mean(input²) + eps) * weight`
/// over the last `normalized_shape.len()` dims; `eps` defaults to the
/// machine epsilon of the input's dtype, as in PyTorch.
pub fn rms_norm(input: &Tensor, normalized_shape: &[usize], weight: Option<&Tensor>, eps: Option<f64>) -> Result<Tensor> {
    let k = normalized_shape.len();
    let n = input.ndim();
    if k == 0 || k > n || input.shape()[n - k..] != *normalized_shape {
        return Err(Error::runtime(format!(
            "Given normalized_shape={:?}, expected input with shape [*, {}], but got input of size{:?}",
            normalized_shape,
            normalized_shape.iter().map(|d| d.to_string()).collect::<Vec<_>>().join(", "),
            input.shape()
        )));
    }
    let eps = eps.unwrap_or(match input.dtype() {
        DType::Float64 => f64::EPSILON,
        DType::Float16 => 0.0009765625,
        DType::BFloat16 => 0.0078125,
        _ => f32::EPSILON as f64,
    });
    let dims: Vec<i64> = (n - k..n).map(|d| d as i64).collect();
    let ms = input.mul(input)?.mean_dims(Some(&dims), true, None)?;
    let y = input.mul(&unary(&shift(&ms, eps)?, UnaryOp::Rsqrt)?)?;
    match weight {
        Some(w) => y.mul(w),
        None => Ok(y),
    }
}

/// `scaled_dot_product_attention(query, key, value, attn_mask, dropout_p,
/// is_causal, scale)`: `softmax(q @ kᵀ * scale + mask) @ v` over inputs of
/// shape `(..., L, E)`, `(..., S, E)`, `(..., S, Ev)`. A boolean mask marks
/// the positions that take part (`true`); a float mask is added to the
/// scores. `scale` defaults to `1/sqrt(E)`.
///
/// ```
/// use ferrotorch::{nn::functional::scaled_dot_product_attention, Tensor};
/// let q = Tensor::from_vec(vec![1.0f32, 0.0], &[1, 2]).unwrap();
/// let kv = Tensor::from_vec(vec![1.0f32, 0.0, 0.0, 1.0], &[2, 2]).unwrap();
/// let out = scaled_dot_product_attention(&q, &kv, &kv, None, 0.0, false, None).unwrap();
/// assert_eq!(out.shape(), &[1, 2]);
/// ```
pub fn scaled_dot_product_attention(
    query: &Tensor,
    key: &Tensor,
    value: &Tensor,
    attn_mask: Option<&Tensor>,
    dropout_p: f64,
    is_causal: bool,
    scale_factor: Option<f64>,
) -> Result<Tensor> {
    if query.ndim() < 2 || key.ndim() < 2 || value.ndim() < 2 {
        return Err(Error::runtime("scaled_dot_product_attention: query, key and value must have at least 2 dims"));
    }
    let (l, e) = (query.shape()[query.ndim() - 2], query.shape()[query.ndim() - 1]);
    let s = key.shape()[key.ndim() - 2];
    let factor = scale_factor.unwrap_or(1.0 / (e as f64).sqrt());
    let mut scores = scale(&query.matmul(&key.transpose(-2, -1)?)?, factor)?;
    if is_causal {
        if attn_mask.is_some() {
            return Err(Error::runtime("_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True"));
        }
        let keep = Tensor::ones(&[l, s], DType::Bool, query.device())?.tril(0)?;
        scores = scores.masked_fill(&logical_not(&keep)?, Operand::S(Scalar::Float(f64::NEG_INFINITY)))?;
    }
    if let Some(m) = attn_mask {
        scores = add_mask(&scores, m, true)?;
    }
    let attn = scores.softmax(-1, None, false)?;
    let attn = dropout(&attn, dropout_p, dropout_p > 0.0)?;
    attn.matmul(value)
}

fn logical_not(m: &Tensor) -> Result<Tensor> {
    unary(m, UnaryOp::LogicalNot)
}

/// `scores` with `mask` applied: a float mask is added; a boolean one sets
/// the scores it marks to -inf, where "marks" means `false` for SDPA's
/// keep-masks (`keep_true`) and `true` for MultiheadAttention's masks.
pub(crate) fn add_mask(scores: &Tensor, mask: &Tensor, keep_true: bool) -> Result<Tensor> {
    if mask.dtype() == DType::Bool {
        let drop = if keep_true { logical_not(mask)? } else { mask.clone() };
        scores.masked_fill(&drop, Operand::S(Scalar::Float(f64::NEG_INFINITY)))
    } else {
        scores.add(mask)
    }
}
