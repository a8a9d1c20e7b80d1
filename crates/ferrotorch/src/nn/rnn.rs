//! `LSTM` and `GRU` (inference), over the op layer's fused cells.

use ferrotorch_core::{Error, Result};

use super::functional::linear;
use super::init;
use super::module::{Entry, Module};
use crate::Tensor;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Cell {
    Lstm,
    Gru,
}

/// The weights of one layer in one direction.
struct Weights {
    names: [String; 4],
    w_ih: Tensor,
    w_hh: Tensor,
    b_ih: Option<Tensor>,
    b_hh: Option<Tensor>,
}

/// A multi-layer LSTM or GRU with PyTorch's parameter names
/// (`weight_ih_l0`, `weight_hh_l0`, `bias_ih_l0`, `bias_hh_l0`, and
/// `..._reverse` for the backward direction) and gate order.
pub struct Recurrent {
    cell: Cell,
    layers: Vec<Weights>,
    /// Features of the hidden state.
    pub hidden_size: usize,
    /// Stacked layers.
    pub num_layers: usize,
    /// Inputs are `(batch, seq, feature)` rather than `(seq, batch, feature)`.
    pub batch_first: bool,
    /// Whether each layer also runs backwards in time.
    pub bidirectional: bool,
}

/// `nn.LSTM`.
pub type LSTM = Recurrent;
/// `nn.GRU`.
pub type GRU = Recurrent;

impl Recurrent {
    fn build(cell: Cell, input_size: usize, hidden_size: usize, num_layers: usize, bias: bool, batch_first: bool, bidirectional: bool) -> Result<Recurrent> {
        let gates = if cell == Cell::Lstm { 4 } else { 3 };
        let dirs = if bidirectional { 2 } else { 1 };
        let bound = init::fan_in_bound(hidden_size);
        let mut layers = Vec::new();
        for layer in 0..num_layers {
            for dir in 0..dirs {
                let sfx = format!("l{layer}{}", if dir == 1 { "_reverse" } else { "" });
                let in_size = if layer == 0 { input_size } else { hidden_size * dirs };
                layers.push(Weights {
                    names: [format!("weight_ih_{sfx}"), format!("weight_hh_{sfx}"), format!("bias_ih_{sfx}"), format!("bias_hh_{sfx}")],
                    w_ih: init::uniform(&[gates * hidden_size, in_size], bound)?,
                    w_hh: init::uniform(&[gates * hidden_size, hidden_size], bound)?,
                    b_ih: if bias { Some(init::uniform(&[gates * hidden_size], bound)?) } else { None },
                    b_hh: if bias { Some(init::uniform(&[gates * hidden_size], bound)?) } else { None },
                });
            }
        }
        Ok(Recurrent { cell, layers, hidden_size, num_layers, batch_first, bidirectional })
    }

    /// `nn.LSTM(input_size, hidden_size, num_layers, bias, batch_first, dropout=0, bidirectional)`.
    pub fn lstm(input_size: usize, hidden_size: usize, num_layers: usize, bias: bool, batch_first: bool, bidirectional: bool) -> Result<Recurrent> {
        Self::build(Cell::Lstm, input_size, hidden_size, num_layers, bias, batch_first, bidirectional)
    }

    /// `nn.GRU(input_size, hidden_size, num_layers, bias, batch_first, dropout=0, bidirectional)`.
    pub fn gru(input_size: usize, hidden_size: usize, num_layers: usize, bias: bool, batch_first: bool, bidirectional: bool) -> Result<Recurrent> {
        Self::build(Cell::Gru, input_size, hidden_size, num_layers, bias, batch_first, bidirectional)
    }

    /// `forward(input, hx)`: the output of the last layer at every step and
    /// the final hidden state `h_n` (and cell state `c_n` for an LSTM), each
    /// `(num_layers * directions, batch, hidden)`. `hx` is `h_0` (and `c_0`),
    /// zeros when `None`. Unbatched inputs `(seq, feature)` give unbatched
    /// states.
    pub fn forward_with(&self, input: &Tensor, hx: Option<(&Tensor, Option<&Tensor>)>) -> Result<(Tensor, Tensor, Option<Tensor>)> {
        let unbatched = input.ndim() == 2;
        if !unbatched && input.ndim() != 3 {
            return Err(Error::value(format!("{}: Expected input to be 2D or 3D, got {}D instead", self.name(), input.ndim())));
        }
        // Work time-major: (T, N, F).
        let mut x = if unbatched {
            input.unsqueeze(1)?
        } else if self.batch_first {
            input.transpose(0, 1)?
        } else {
            input.clone()
        };
        let (n, hsz) = (x.shape()[1], self.hidden_size);
        let dirs = if self.bidirectional { 2 } else { 1 };
        let states = self.num_layers * dirs;
        let initial = |t: Option<&Tensor>, what: &str| -> Result<Tensor> {
            match t {
                Some(t) => {
                    let t = if unbatched { t.unsqueeze(1)? } else { t.clone() };
                    if t.shape() != [states, n, hsz] {
                        return Err(Error::runtime(format!("Expected {what} size ({states}, {n}, {hsz}), got {:?}", t.shape())));
                    }
                    Ok(t)
                }
                None => Tensor::zeros(&[states, n, hsz], x.dtype(), x.device()),
            }
        };
        let h0 = initial(hx.map(|h| h.0), "hidden")?;
        let c0 = if self.cell == Cell::Lstm { Some(initial(hx.and_then(|h| h.1), "cell")?) } else { None };
        let (mut hn, mut cn) = (Vec::new(), Vec::new());
        for layer in 0..self.num_layers {
            let mut outs = Vec::new();
            for dir in 0..dirs {
                let idx = layer * dirs + dir;
                let (y, h, c) = self.run_direction(&self.layers[idx], &x, h0.select(0, idx as i64)?, c0.as_ref().map(|c| c.select(0, idx as i64)).transpose()?, dir == 1)?;
                outs.push(y);
                hn.push(h);
                cn.extend(c);
            }
            x = if dirs == 1 { outs.pop().unwrap_or(x) } else { Tensor::cat(&outs, 2)? };
        }
        let out = if unbatched {
            x.squeeze(Some(&[1]))?
        } else if self.batch_first {
            x.transpose(0, 1)?
        } else {
            x
        };
        let fix = |t: Tensor| if unbatched { t.squeeze(Some(&[1])) } else { Ok(t) };
        let h = fix(Tensor::stack(&hn, 0)?)?;
        let c = if cn.is_empty() { None } else { Some(fix(Tensor::stack(&cn, 0)?)?) };
        Ok((out, h, c))
    }

    fn run_direction(&self, w: &Weights, x: &Tensor, mut h: Tensor, mut c: Option<Tensor>, reverse: bool) -> Result<(Tensor, Tensor, Option<Tensor>)> {
        let t_len = x.shape()[0];
        // The input projections of every step in one matrix product.
        let igates = linear(x, &w.w_ih, w.b_ih.as_ref())?;
        let mut ys = vec![None; t_len];
        for step in 0..t_len {
            let t = if reverse { t_len - 1 - step } else { step };
            let hg = linear(&h, &w.w_hh, w.b_hh.as_ref())?;
            let ig = igates.select(0, t as i64)?;
            match (&self.cell, c.as_ref()) {
                (Cell::Lstm, Some(cx)) => {
                    let (hy, cy) = ig.fused_lstm_cell(&hg, cx)?;
                    h = hy;
                    c = Some(cy);
                }
                _ => h = ig.fused_gru_cell(&hg, &h)?,
            }
            ys[t] = Some(h.clone());
        }
        let ys: Vec<Tensor> = ys.into_iter().flatten().collect();
        let y = if ys.is_empty() { Tensor::zeros(&[0, x.shape()[1], self.hidden_size], x.dtype(), x.device())? } else { Tensor::stack(&ys, 0)? };
        Ok((y, h, c))
    }

    fn name(&self) -> &'static str {
        match self.cell {
            Cell::Lstm => "LSTM",
            Cell::Gru => "GRU",
        }
    }
}

impl Module for Recurrent {
    /// The output sequence (the states are dropped; see [`Recurrent::forward_with`]).
    fn forward(&self, input: &Tensor) -> Result<Tensor> {
        Ok(self.forward_with(input, None)?.0)
    }
    fn visit<'a>(&'a self, f: &mut dyn FnMut(Entry<'a>)) {
        for w in &self.layers {
            f(Entry::Parameter(&w.names[0], &w.w_ih));
            f(Entry::Parameter(&w.names[1], &w.w_hh));
            if let Some(b) = &w.b_ih {
                f(Entry::Parameter(&w.names[2], b));
            }
            if let Some(b) = &w.b_hh {
                f(Entry::Parameter(&w.names[3], b));
            }
        }
    }
    fn type_name(&self) -> &'static str {
        self.name()
    }
}
