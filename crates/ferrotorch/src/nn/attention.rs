//! `MultiheadAttention`.

use ferrotorch_core::{Error, Result};

use super::functional::{add_mask, linear, scale};
use super::init;
use super::linear::Linear;
use super::module::{Entry, Module};
use crate::Tensor;

/// `nn.MultiheadAttention(embed_dim, num_heads, bias=True, batch_first)`
/// (inference: attention dropout is not applied). Parameters as PyTorch's:
/// `in_proj_weight` `(3E, E)`, `in_proj_bias` `(3E,)` and the child
/// `out_proj`. Separate key/value sizes (`kdim`/`vdim`), `add_bias_kv` and
/// `add_zero_attn` are not supported.
pub struct MultiheadAttention {
    /// The stacked query, key and value projections.
    pub in_proj_weight: Tensor,
    /// Their biases, when the layer has them.
    pub in_proj_bias: Option<Tensor>,
    /// The output projection.
    pub out_proj: Linear,
    /// Heads the embedding is split into.
    pub num_heads: usize,
    /// Inputs are `(batch, seq, embed)` rather than `(seq, batch, embed)`.
    pub batch_first: bool,
}

impl MultiheadAttention {
    /// Xavier-uniform projections and zero biases, as PyTorch initialises them.
    pub fn new(embed_dim: usize, num_heads: usize, bias: bool, batch_first: bool) -> Result<MultiheadAttention> {
        if num_heads == 0 || embed_dim % num_heads != 0 {
            return Err(Error::runtime("embed_dim must be divisible by num_heads"));
        }
        let bound = (6.0 / (embed_dim + 3 * embed_dim) as f64).sqrt();
        let out_proj = Linear::new(embed_dim, embed_dim, bias)?;
        if let Some(b) = &out_proj.bias {
            let _no_grad = crate::autograd::GradModeGuard::new(false);
            b.fill_(ferrotorch_core::Scalar::Float(0.0))?;
        }
        Ok(MultiheadAttention {
            in_proj_weight: init::uniform(&[3 * embed_dim, embed_dim], bound)?,
            in_proj_bias: if bias { Some(init::constant(&[3 * embed_dim], 0.0)?) } else { None },
            out_proj,
            num_heads,
            batch_first,
        })
    }

    /// `forward(query, key, value, key_padding_mask, need_weights, attn_mask,
    /// average_attn_weights)`: the attention output, and the attention
    /// weights when `need_weights` (averaged over heads when
    /// `average_attn_weights`). Batched inputs are `(L, N, E)` (or
    /// `(N, L, E)` with `batch_first`); unbatched ones `(L, E)`.
    /// `key_padding_mask` is `(N, S)`, `attn_mask` `(L, S)` or `(N*H, L, S)`;
    /// a boolean mask marks the positions to leave out, a float one is added.
    #[allow(clippy::too_many_arguments)]
    pub fn attend(
        &self,
        query: &Tensor,
        key: &Tensor,
        value: &Tensor,
        key_padding_mask: Option<&Tensor>,
        need_weights: bool,
        attn_mask: Option<&Tensor>,
        average_attn_weights: bool,
    ) -> Result<(Tensor, Option<Tensor>)> {
        let unbatched = query.ndim() == 2;
        if !unbatched && query.ndim() != 3 {
            return Err(Error::runtime(format!("query should be unbatched 2D or batched 3D tensor but received {}-D query tensor", query.ndim())));
        }
        // Work batch-first: (N, L, E).
        let to_nle = |t: &Tensor| -> Result<Tensor> {
            if unbatched {
                t.unsqueeze(0)
            } else if self.batch_first {
                Ok(t.clone())
            } else {
                t.transpose(0, 1)
            }
        };
        let (q, k, v) = (to_nle(query)?, to_nle(key)?, to_nle(value)?);
        let (n, l, e) = (q.shape()[0], q.shape()[1], q.shape()[2]);
        let s = k.shape()[1];
        let h = self.num_heads;
        let d = e / h;
        let (qh, kh, vh) = if query.same(key) && key.same(value) {
            // Self-attention (PyTorch's packed in-projection): one product by
            // the stacked weight, then one copy that lays the heads out
            // contiguously as (3, N, H, L, D), so that the batched products
            // below need no copies of their own.
            let qkv = linear(&q, &self.in_proj_weight, self.in_proj_bias.as_ref())?
                .reshape(&[n as i64, l as i64, 3, h as i64, d as i64])?
                .permute(&[2, 0, 3, 1, 4])?
                .contiguous()?;
            (qkv.select(0, 0)?, qkv.select(0, 1)?, qkv.select(0, 2)?)
        } else {
            let w = self.in_proj_weight.chunk(3, 0)?;
            let b: Vec<Option<Tensor>> = match &self.in_proj_bias {
                Some(b) => b.chunk(3, 0)?.into_iter().map(Some).collect(),
                None => vec![None, None, None],
            };
            let heads = |x: &Tensor, len: usize| -> Result<Tensor> { x.reshape(&[n as i64, len as i64, h as i64, d as i64])?.permute(&[0, 2, 1, 3]) };
            (heads(&linear(&q, &w[0], b[0].as_ref())?, l)?, heads(&linear(&k, &w[1], b[1].as_ref())?, s)?, heads(&linear(&v, &w[2], b[2].as_ref())?, s)?)
        };
        let mut scores = scale(&qh.matmul(&kh.transpose(-2, -1)?)?, 1.0 / (d as f64).sqrt())?;
        if let Some(m) = attn_mask {
            let m = if m.ndim() == 3 { m.reshape(&[n as i64, h as i64, l as i64, s as i64])? } else { m.clone() };
            scores = add_mask(&scores, &m, false)?;
        }
        if let Some(m) = key_padding_mask {
            let m = if unbatched { m.unsqueeze(0)? } else { m.clone() };
            scores = add_mask(&scores, &m.reshape(&[n as i64, 1, 1, s as i64])?, false)?;
        }
        let attn = scores.softmax(-1, None, false)?;
        let out = attn.matmul(&vh)?.permute(&[0, 2, 1, 3])?.reshape(&[n as i64, l as i64, e as i64])?;
        let out = self.out_proj.forward(&out)?;
        let out = if unbatched {
            out.squeeze(Some(&[0]))?
        } else if self.batch_first {
            out
        } else {
            out.transpose(0, 1)?
        };
        let weights = if need_weights {
            let w = if average_attn_weights { attn.mean_dims(Some(&[1]), false, None)? } else { attn };
            Some(if unbatched { w.squeeze(Some(&[0]))? } else { w })
        } else {
            None
        };
        Ok((out, weights))
    }
}

impl Module for MultiheadAttention {
    /// Self-attention of `input` with no masks.
    fn forward(&self, input: &Tensor) -> Result<Tensor> {
        Ok(self.attend(input, input, input, None, false, None, true)?.0)
    }
    fn visit<'a>(&'a self, f: &mut dyn FnMut(Entry<'a>)) {
        f(Entry::Parameter("in_proj_weight", &self.in_proj_weight));
        if let Some(b) = &self.in_proj_bias {
            f(Entry::Parameter("in_proj_bias", b));
        }
        f(Entry::Child("out_proj", &self.out_proj));
    }
}
