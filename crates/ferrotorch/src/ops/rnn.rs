//! Fused recurrent cells: one LSTM or GRU time step's gate nonlinearities and
//! state update as one op, forward and backward (`nn.LSTM`/`nn.GRU` call it
//! once per step after the two gate matmuls).
//!
//! The backward runs the fused kernel; when a graph of the backward itself is
//! requested (`create_graph=True`) it is written with differentiable tensor
//! ops instead, so higher derivatives exist as they do for PyTorch's CPU
//! cells (which are composed of ordinary ops).

use super::arith::UnaryOp;
use super::arith_grad::{add, mul, rsubs, un};
use super::common_device;
use crate::autograd::{is_grad_enabled, record, rule, GradModeGuard, SavedTensor};
use crate::Tensor;
use ferrotorch_core::{DType, Error, Result};

/// Checks a cell's operands: `igates`/`hgates` `(batch, gates*hidden)`, the
/// state `(batch, hidden)`, one float32/float64 dtype, one device. Returns (batch, hidden).
fn check_cell(op: &str, gates: usize, ig: &Tensor, hg: &Tensor, state: &Tensor) -> Result<(usize, usize)> {
    common_device(&[ig, hg, state])?;
    let shape_err = || {
        Error::runtime(format!(
            "{op}: expected input gates and hidden gates of shape (batch, {gates} * hidden) and a state of shape \
             (batch, hidden), got {:?}, {:?} and {:?}",
            ig.shape(),
            hg.shape(),
            state.shape()
        ))
    };
    if ig.ndim() != 2 || hg.shape() != ig.shape() || ig.shape()[1] % gates != 0 {
        return Err(shape_err());
    }
    let (batch, hidden) = (ig.shape()[0], ig.shape()[1] / gates);
    if state.shape() != [batch, hidden] {
        return Err(shape_err());
    }
    let dt = ig.dtype();
    if !matches!(dt, DType::Float32 | DType::Float64) || hg.dtype() != dt || state.dtype() != dt {
        return Err(Error::runtime(format!(
            "{op}: expected float32 or float64 operands of one dtype, got {:?}, {:?} and {:?}",
            ig.dtype(),
            hg.dtype(),
            state.dtype()
        )));
    }
    Ok((batch, hidden))
}

/// An incoming gradient as a contiguous tensor of the cell's dtype.
fn dense_grad(g: Tensor, like: &Tensor) -> Result<Tensor> {
    let g = if g.dtype() != like.dtype() { g.to_dtype(like.dtype())? } else { g };
    g.contiguous()
}

/// `[a, b, c, ...]` joined along dim 1.
fn cat1(parts: &[Tensor]) -> Result<Tensor> {
    Tensor::cat(parts, 1)
}

/// Gate `k` of `(batch, gates*hidden)` as a view.
fn gate(t: &Tensor, k: usize, hidden: usize) -> Result<Tensor> {
    t.narrow(1, (k * hidden) as i64, hidden as i64)
}

impl Tensor {
    /// One LSTM step from its gate pre-activations: `self` (input gates,
    /// `x @ W_ih^T + b_ih`) and `hgates` (`h @ W_hh^T + b_hh`), both
    /// `(batch, 4*hidden)` in PyTorch's order (input, forget, cell, output),
    /// and the cell state `cx` `(batch, hidden)`. Returns `(hy, cy)`; records
    /// `ThnnFusedLstmCellBackward0`.
    ///
    /// ```
    /// use ferrotorch::Tensor;
    /// let zeros = Tensor::from_vec(vec![0.0f32; 4], &[1, 4]).unwrap();
    /// let cx = Tensor::from_vec(vec![1.0f32], &[1, 1]).unwrap();
    /// let (hy, cy) = zeros.fused_lstm_cell(&zeros, &cx).unwrap();
    /// // All gates at 0: i = f = o = 1/2, g = 0, so cy = cx/2 and hy = tanh(cy)/2.
    /// assert_eq!(cy.to_vec::<f32>().unwrap(), vec![0.5]);
    /// assert!((hy.to_vec::<f32>().unwrap()[0] - 0.5f32.tanh() / 2.0).abs() < 1e-7);
    /// ```
    pub fn fused_lstm_cell(&self, hgates: &Tensor, cx: &Tensor) -> Result<(Tensor, Tensor)> {
        let (batch, hidden) = check_cell("_thnn_fused_lstm_cell", 4, self, hgates, cx)?;
        let (dt, dev) = (self.dtype(), self.device());
        let (hy, cy, ws) = {
            let _no_grad = GradModeGuard::new(false);
            let (ig, hg, c) = (self.contiguous()?, hgates.contiguous()?, cx.contiguous()?);
            let hy = Tensor::empty(&[batch, hidden], dt, dev)?;
            let cy = Tensor::empty(&[batch, hidden], dt, dev)?;
            let ws = Tensor::empty(&[batch, 4 * hidden], dt, dev)?;
            self.backend()?.lstm_cell(dt, ig.operand()?.src(), hg.operand()?.src(), c.operand()?.src(), hy.operand_mut()?.dst(), cy.operand_mut()?.dst(), ws.operand_mut()?.dst())?;
            (hy, cy, ws)
        };
        let (s_ig, s_hg, s_cx, s_cy) =
            (SavedTensor::input(self), SavedTensor::input(hgates), SavedTensor::input(cx), SavedTensor::output(&cy, 1));
        record("ThnnFusedLstmCellBackward0", &[Some(self), Some(hgates), Some(cx)], &[&hy, &cy], move || {
            rule(move |node, g| {
                let mut g = g.into_iter();
                let (dhy, dcy) = (g.next().flatten(), g.next().flatten());
                if dhy.is_none() && dcy.is_none() {
                    return Ok(vec![None, None, None]);
                }
                let (cx, cy) = (s_cx.unpack(node)?, s_cy.unpack(node)?);
                if is_grad_enabled() {
                    // create_graph: the same formulas as differentiable ops.
                    let gates = add(&s_ig.unpack(node)?, &s_hg.unpack(node)?)?;
                    let act = |k, op| un(&gate(&gates, k, hidden)?, op);
                    let (i, f, gg, o) =
                        (act(0, UnaryOp::Sigmoid)?, act(1, UnaryOp::Sigmoid)?, act(2, UnaryOp::Tanh)?, act(3, UnaryOp::Sigmoid)?);
                    let c = add(&mul(&f, &cx)?, &mul(&i, &gg)?)?;
                    let tc = un(&c, UnaryOp::Tanh)?;
                    let zero = || super::arith_grad::zeros_like(&c);
                    let dhy = match dhy {
                        Some(d) => d,
                        None => zero()?,
                    };
                    let mut gc = mul(&mul(&dhy, &o)?, &rsubs(1.0, &mul(&tc, &tc)?)?)?;
                    if let Some(d) = dcy {
                        gc = add(&gc, &d)?;
                    }
                    let dsig = |a: &Tensor| rsubs(1.0, a).and_then(|m| mul(a, &m));
                    let dgates = cat1(&[
                        mul(&mul(&gc, &gg)?, &dsig(&i)?)?,
                        mul(&mul(&gc, &cx)?, &dsig(&f)?)?,
                        mul(&mul(&gc, &i)?, &rsubs(1.0, &mul(&gg, &gg)?)?)?,
                        mul(&mul(&dhy, &tc)?, &dsig(&o)?)?,
                    ])?;
                    let dcx = mul(&gc, &f)?;
                    return Ok(vec![Some(dgates.clone()), Some(dgates), Some(dcx)]);
                }
                let dhy = dhy.map(|g| dense_grad(g, &cy)).transpose()?;
                let dcy = dcy.map(|g| dense_grad(g, &cy)).transpose()?;
                let cx = cx.contiguous()?;
                let dgates = Tensor::empty(&[batch, 4 * hidden], dt, dev)?;
                let dcx = Tensor::empty(&[batch, hidden], dt, dev)?;
                dgates.backend()?.lstm_cell_backward(
                    dt,
                    ws.operand()?.src(),
                    cx.operand()?.src(),
                    cy.operand()?.src(),
                    super::conj_bit::read_opt(dhy.as_ref())?.as_ref().map(|r| r.src()),
                    super::conj_bit::read_opt(dcy.as_ref())?.as_ref().map(|r| r.src()),
                    dgates.operand_mut()?.dst(),
                    dcx.operand_mut()?.dst(),
                )?;
                // Each edge gets its own buffer: the engine may accumulate into it in place.
                Ok(vec![Some(dgates.clone_data()?), Some(dgates), Some(dcx)])
            })
        });
        Ok((hy, cy))
    }

    /// One GRU step from its gate pre-activations: `self` (input gates,
    /// `x @ W_ih^T + b_ih`) and `hgates` (`h @ W_hh^T + b_hh`), both
    /// `(batch, 3*hidden)` in PyTorch's order (reset, update, new), and the
    /// hidden state `hx` `(batch, hidden)`. Returns `hy`; records
    /// `ThnnFusedGruCellBackward0`.
    pub fn fused_gru_cell(&self, hgates: &Tensor, hx: &Tensor) -> Result<Tensor> {
        let (batch, hidden) = check_cell("_thnn_fused_gru_cell", 3, self, hgates, hx)?;
        let (dt, dev) = (self.dtype(), self.device());
        let (hy, ws) = {
            let _no_grad = GradModeGuard::new(false);
            let (ig, hg, h) = (self.contiguous()?, hgates.contiguous()?, hx.contiguous()?);
            let hy = Tensor::empty(&[batch, hidden], dt, dev)?;
            let ws = Tensor::empty(&[batch, 4 * hidden], dt, dev)?;
            self.backend()?.gru_cell(dt, ig.operand()?.src(), hg.operand()?.src(), h.operand()?.src(), hy.operand_mut()?.dst(), ws.operand_mut()?.dst())?;
            (hy, ws)
        };
        let (s_ig, s_hg, s_hx) = (SavedTensor::input(self), SavedTensor::input(hgates), SavedTensor::input(hx));
        record("ThnnFusedGruCellBackward0", &[Some(self), Some(hgates), Some(hx)], &[&hy], move || {
            rule(move |node, g| {
                let Some(dhy) = g.into_iter().next().flatten() else { return Ok(vec![None, None, None]) };
                let hx = s_hx.unpack(node)?;
                if is_grad_enabled() {
                    let (ig, hg) = (s_ig.unpack(node)?, s_hg.unpack(node)?);
                    let pre = |k| add(&gate(&ig, k, hidden)?, &gate(&hg, k, hidden)?);
                    let (r, z) = (un(&pre(0)?, UnaryOp::Sigmoid)?, un(&pre(1)?, UnaryOp::Sigmoid)?);
                    let hn = gate(&hg, 2, hidden)?;
                    let n = un(&add(&gate(&ig, 2, hidden)?, &mul(&r, &hn)?)?, UnaryOp::Tanh)?;
                    let dsig = |a: &Tensor| rsubs(1.0, a).and_then(|m| mul(a, &m));
                    let dn = mul(&mul(&dhy, &rsubs(1.0, &z)?)?, &rsubs(1.0, &mul(&n, &n)?)?)?;
                    let dz = mul(&mul(&dhy, &super::arith_grad::sub(&hx, &n)?)?, &dsig(&z)?)?;
                    let dr = mul(&mul(&dn, &hn)?, &dsig(&r)?)?;
                    let dig = cat1(&[dr.clone(), dz.clone(), dn.clone()])?;
                    let dhg = cat1(&[dr, dz, mul(&dn, &r)?])?;
                    return Ok(vec![Some(dig), Some(dhg), Some(mul(&dhy, &z)?)]);
                }
                let dhy = dense_grad(dhy, &hx)?;
                let hx = hx.contiguous()?;
                let dig = Tensor::empty(&[batch, 3 * hidden], dt, dev)?;
                let dhg = Tensor::empty(&[batch, 3 * hidden], dt, dev)?;
                let dhx = Tensor::empty(&[batch, hidden], dt, dev)?;
                dhx.backend()?.gru_cell_backward(dt, ws.operand()?.src(), hx.operand()?.src(), dhy.operand()?.src(), dig.operand_mut()?.dst(), dhg.operand_mut()?.dst(), dhx.operand_mut()?.dst())?;
                Ok(vec![Some(dig), Some(dhg), Some(dhx)])
            })
        });
        Ok(hy)
    }
}
