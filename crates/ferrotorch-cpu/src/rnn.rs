//! Fused pointwise recurrent cells: the gate nonlinearities and state update
//! of one LSTM or GRU time step in one pass, forward and backward (PyTorch's
//! `_thnn_fused_lstm_cell` / `_thnn_fused_gru_cell`).
//!
//! Gate buffers are row-major `(batch, gates * hidden)` with the gates in
//! PyTorch's order (LSTM: input, forget, cell, output; GRU: reset, update,
//! new); states are row-major `(batch, hidden)`.

use crate::elementwise::Float;
use crate::simd::isa;
use crate::unary::FastFloat;
use ferrotorch_core::UnaryOp;
use ferrotorch_core::Element;

/// Rows per parallel task are chosen so a task holds at least this many
/// elements (one LSTM step of a small batch stays on the calling thread).
const GRAIN: usize = 1 << 15;

/// Runs `f(row)` for every row in `0..rows`, in parallel when the work is large.
fn rows<F: Fn(usize) + Sync + Send>(rows: usize, per_row: usize, f: F) {
    let min_rows = (GRAIN / per_row.max(1)).max(1);
    if rows <= min_rows || crate::parallel::threads() <= 1 {
        (0..rows).for_each(f);
    } else {
        let tasks = rows.div_ceil(min_rows);
        crate::parallel::parallel_for(tasks, |t| (t * min_rows..((t + 1) * min_rows).min(rows)).for_each(&f));
    }
}

/// A raw pointer that may cross threads: each task writes disjoint rows.
#[derive(Clone, Copy)]
struct Out<T>(*mut T);
unsafe impl<T> Send for Out<T> {}
unsafe impl<T> Sync for Out<T> {}
impl<T> Out<T> {
    /// # Safety
    /// `i` is inside the buffer and no other task writes element `i`.
    #[inline(always)]
    unsafe fn set(self, i: usize, v: T) {
        *self.0.add(i) = v;
    }
}

/// `x[..n] = op(x[..n])` in place with the vectorised unary kernels.
///
/// # Safety
/// `x` must be valid for `n` elements that no other task touches.
#[inline(always)]
unsafe fn activate<T: FastFloat>(op: UnaryOp, x: *mut T, n: usize) {
    T::contiguous_unary(isa(), op, x, x, n)
}

/// LSTM step: `gates = igates + hgates`; `cy = f*cx + i*g`; `hy = o*tanh(cy)`.
/// `ws` (`(batch, 4*hidden)`) receives the activated gates for the backward.
/// The sigmoids and tanhs run as vectorised passes over each gate's run.
#[allow(private_bounds)]
pub fn lstm_forward<T: Float + FastFloat>(igates: &[T], hgates: &[T], cx: &[T], hy: &mut [T], cy: &mut [T], ws: &mut [T], batch: usize, hidden: usize) {
    let (hy_p, cy_p, ws_p) = (Out(hy.as_mut_ptr()), Out(cy.as_mut_ptr()), Out(ws.as_mut_ptr()));
    rows(batch, 4 * hidden, |b| {
        let (g0, s0) = (b * 4 * hidden, b * hidden);
        // SAFETY: row b of ws/hy/cy is written by this task only; every buffer
        // has `batch` rows of the stated widths, so the indices are in bounds.
        unsafe {
            for k in 0..4 * hidden {
                ws_p.set(g0 + k, igates[g0 + k].add(hgates[g0 + k]));
            }
            let w = ws_p.0.add(g0);
            activate(UnaryOp::Sigmoid, w, 2 * hidden);
            activate(UnaryOp::Tanh, w.add(2 * hidden), hidden);
            activate(UnaryOp::Sigmoid, w.add(3 * hidden), hidden);
            for j in 0..hidden {
                let (i, f, g) = (*w.add(j), *w.add(hidden + j), *w.add(2 * hidden + j));
                let c = f.mul(cx[s0 + j]).add(i.mul(g));
                cy_p.set(s0 + j, c);
                hy_p.set(s0 + j, c);
            }
            activate(UnaryOp::Tanh, hy_p.0.add(s0), hidden);
            for j in 0..hidden {
                let o = *w.add(3 * hidden + j);
                hy_p.set(s0 + j, o.mul(*hy_p.0.add(s0 + j)));
            }
        }
    });
}

/// LSTM step backward: from the activated gates `ws`, `cx`, `cy` and the
/// incoming `dhy`/`dcy` (absent: zero), the gradient of the gate
/// pre-activations (`(batch, 4*hidden)`, shared by igates and hgates) and of `cx`.
#[allow(clippy::too_many_arguments)]
#[allow(private_bounds)]
pub fn lstm_backward<T: Float + FastFloat>(ws: &[T], cx: &[T], cy: &[T], dhy: Option<&[T]>, dcy: Option<&[T]>, dgates: &mut [T], dcx: &mut [T], batch: usize, hidden: usize) {
    let (dg_p, dcx_p) = (Out(dgates.as_mut_ptr()), Out(dcx.as_mut_ptr()));
    let one = <T as Element>::from_f64(1.0);
    rows(batch, 4 * hidden, |b| {
        let (g0, s0) = (b * 4 * hidden, b * hidden);
        // SAFETY: as in `lstm_forward`. Row b of dcx holds tanh(cy) until its
        // element is overwritten with the gradient in the same iteration.
        unsafe {
            for j in 0..hidden {
                dcx_p.set(s0 + j, cy[s0 + j]);
            }
            activate(UnaryOp::Tanh, dcx_p.0.add(s0), hidden);
            for j in 0..hidden {
                let s = s0 + j;
                let (i, f, g, o) = (ws[g0 + j], ws[g0 + hidden + j], ws[g0 + 2 * hidden + j], ws[g0 + 3 * hidden + j]);
                let tc = *dcx_p.0.add(s);
                let gh = dhy.map_or(<T as Element>::from_f64(0.0), |d| d[s]);
                let gc = dcy.map_or(<T as Element>::from_f64(0.0), |d| d[s]).add(gh.mul(o).mul(one.sub(tc.mul(tc))));
                dg_p.set(g0 + j, gc.mul(g).mul(i).mul(one.sub(i)));
                dg_p.set(g0 + hidden + j, gc.mul(cx[s]).mul(f).mul(one.sub(f)));
                dg_p.set(g0 + 2 * hidden + j, gc.mul(i).mul(one.sub(g.mul(g))));
                dg_p.set(g0 + 3 * hidden + j, gh.mul(tc).mul(o).mul(one.sub(o)));
                dcx_p.set(s, gc.mul(f));
            }
        }
    });
}

/// GRU step: `r = σ(i_r + h_r)`, `z = σ(i_z + h_z)`, `n = tanh(i_n + r*h_n)`,
/// `hy = n + z*(hx - n)`. `ws` (`(batch, 4*hidden)`) receives r, z, n and h_n.
#[allow(private_bounds)]
pub fn gru_forward<T: Float + FastFloat>(igates: &[T], hgates: &[T], hx: &[T], hy: &mut [T], ws: &mut [T], batch: usize, hidden: usize) {
    let (hy_p, ws_p) = (Out(hy.as_mut_ptr()), Out(ws.as_mut_ptr()));
    rows(batch, 3 * hidden, |b| {
        let (g0, w0, s0) = (b * 3 * hidden, b * 4 * hidden, b * hidden);
        // SAFETY: as in `lstm_forward`.
        unsafe {
            let w = ws_p.0.add(w0);
            for k in 0..2 * hidden {
                ws_p.set(w0 + k, igates[g0 + k].add(hgates[g0 + k]));
            }
            activate(UnaryOp::Sigmoid, w, 2 * hidden);
            for j in 0..hidden {
                let hn = hgates[g0 + 2 * hidden + j];
                ws_p.set(w0 + 3 * hidden + j, hn);
                ws_p.set(w0 + 2 * hidden + j, igates[g0 + 2 * hidden + j].add((*w.add(j)).mul(hn)));
            }
            activate(UnaryOp::Tanh, w.add(2 * hidden), hidden);
            for j in 0..hidden {
                let (z, n) = (*w.add(hidden + j), *w.add(2 * hidden + j));
                hy_p.set(s0 + j, n.add(z.mul(hx[s0 + j].sub(n))));
            }
        }
    });
}

/// GRU step backward: gradients of igates and hgates (`(batch, 3*hidden)`
/// each) and of `hx`, from `ws`, `hx` and `dhy`.
#[allow(clippy::too_many_arguments)]
pub fn gru_backward<T: Float>(ws: &[T], hx: &[T], dhy: &[T], dig: &mut [T], dhg: &mut [T], dhx: &mut [T], batch: usize, hidden: usize) {
    let (di_p, dh_p, dhx_p) = (Out(dig.as_mut_ptr()), Out(dhg.as_mut_ptr()), Out(dhx.as_mut_ptr()));
    let one = <T as Element>::from_f64(1.0);
    rows(batch, 3 * hidden, |b| {
        let (g0, w0) = (b * 3 * hidden, b * 4 * hidden);
        for j in 0..hidden {
            let s = b * hidden + j;
            let (r, z, n, hn) = (ws[w0 + j], ws[w0 + hidden + j], ws[w0 + 2 * hidden + j], ws[w0 + 3 * hidden + j]);
            let gh = dhy[s];
            let dn = gh.mul(one.sub(z)).mul(one.sub(n.mul(n)));
            let dz = gh.mul(hx[s].sub(n)).mul(z).mul(one.sub(z));
            let dr = dn.mul(hn).mul(r).mul(one.sub(r));
            // SAFETY: as in `lstm_forward`.
            unsafe {
                di_p.set(g0 + j, dr);
                di_p.set(g0 + hidden + j, dz);
                di_p.set(g0 + 2 * hidden + j, dn);
                dh_p.set(g0 + j, dr);
                dh_p.set(g0 + hidden + j, dz);
                dh_p.set(g0 + 2 * hidden + j, dn.mul(r));
                dhx_p.set(s, gh.mul(z));
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Central differences of a scalar function of one input element.
    fn fd(f: &dyn Fn(&[f64]) -> f64, x: &[f64], k: usize) -> f64 {
        let (mut a, mut b) = (x.to_vec(), x.to_vec());
        a[k] += 1e-6;
        b[k] -= 1e-6;
        (f(&a) - f(&b)) / 2e-6
    }

    #[test]
    fn lstm_backward_matches_finite_differences() {
        let (batch, hidden) = (2, 3);
        let gates: Vec<f64> = (0..batch * 4 * hidden).map(|i| ((i * 7 % 11) as f64 - 5.0) / 4.0).collect();
        let zeros = vec![0.0; gates.len()];
        let cx: Vec<f64> = (0..batch * hidden).map(|i| (i as f64 - 2.5) / 3.0).collect();
        let (wh, wc): (Vec<f64>, Vec<f64>) = ((0..6).map(|i| 0.3 + i as f64).collect(), (0..6).map(|i| 1.0 - i as f64 / 5.0).collect());
        // loss = sum(wh * hy) + sum(wc * cy)
        let loss = |g: &[f64], c: &[f64]| {
            let (mut hy, mut cy, mut ws) = (vec![0.0; 6], vec![0.0; 6], vec![0.0; 24]);
            lstm_forward(g, &zeros, c, &mut hy, &mut cy, &mut ws, batch, hidden);
            (0..6).map(|s| wh[s] * hy[s] + wc[s] * cy[s]).sum::<f64>()
        };
        let (mut hy, mut cy, mut ws) = (vec![0.0; 6], vec![0.0; 6], vec![0.0; 24]);
        lstm_forward(&gates, &zeros, &cx, &mut hy, &mut cy, &mut ws, batch, hidden);
        let (mut dg, mut dcx) = (vec![0.0; 24], vec![0.0; 6]);
        lstm_backward(&ws, &cx, &cy, Some(&wh), Some(&wc), &mut dg, &mut dcx, batch, hidden);
        for k in 0..24 {
            let want = fd(&|g| loss(g, &cx), &gates, k);
            assert!((dg[k] - want).abs() < 1e-7, "dgates[{k}] {} vs {want}", dg[k]);
        }
        for k in 0..6 {
            let want = fd(&|c| loss(&gates, c), &cx, k);
            assert!((dcx[k] - want).abs() < 1e-7, "dcx[{k}] {} vs {want}", dcx[k]);
        }
    }

    #[test]
    fn gru_backward_matches_finite_differences() {
        let (batch, hidden) = (2, 2);
        let ig: Vec<f64> = (0..12).map(|i| ((i * 5 % 7) as f64 - 3.0) / 3.0).collect();
        let hg: Vec<f64> = (0..12).map(|i| ((i * 3 % 5) as f64 - 2.0) / 2.0).collect();
        let hx: Vec<f64> = vec![0.5, -1.0, 0.25, 2.0];
        let w: Vec<f64> = vec![1.0, -0.5, 0.75, 2.0];
        let loss = |ig: &[f64], hg: &[f64], hx: &[f64]| {
            let (mut hy, mut ws) = (vec![0.0; 4], vec![0.0; 16]);
            gru_forward(ig, hg, hx, &mut hy, &mut ws, batch, hidden);
            (0..4).map(|s| w[s] * hy[s]).sum::<f64>()
        };
        let (mut hy, mut ws) = (vec![0.0; 4], vec![0.0; 16]);
        gru_forward(&ig, &hg, &hx, &mut hy, &mut ws, batch, hidden);
        let (mut di, mut dh, mut dhx) = (vec![0.0; 12], vec![0.0; 12], vec![0.0; 4]);
        gru_backward(&ws, &hx, &w, &mut di, &mut dh, &mut dhx, batch, hidden);
        for k in 0..12 {
            let (wi, wh) = (fd(&|x| loss(x, &hg, &hx), &ig, k), fd(&|x| loss(&ig, x, &hx), &hg, k));
            assert!((di[k] - wi).abs() < 1e-7 && (dh[k] - wh).abs() < 1e-7, "{k}: {} {wi} {} {wh}", di[k], dh[k]);
        }
        for k in 0..4 {
            let want = fd(&|x| loss(&ig, &hg, x), &hx, k);
            assert!((dhx[k] - want).abs() < 1e-7);
        }
    }
}
