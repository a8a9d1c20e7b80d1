//! `einsum` and the products built like it (`tensordot`, `outer`, `vdot`,
//! `addmv`, `addbmm`, `baddbmm`). Everything is composed of differentiable
//! primitives (diagonal, permute, reshape, sum, mul, bmm), so gradients and
//! double backward come from their rules.
//!
//! einsum follows PyTorch's algorithm: every operand is aligned to one global
//! dim order (output dims first, then contracted ones; size 1 where absent),
//! then operands are combined left to right, each pair contracted with one
//! `bmm` over the dims no later operand needs.

use crate::ops::arith::{binary, BinaryOp, Operand};
use crate::Tensor;
use ferrotorch_core::error::wrap_dim;
use ferrotorch_core::{Error, Result, Scalar};

/// A dim's identity in the global order: a letter or one dim of the ellipsis.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Slot {
    Letter(u8),
    Ell(usize),
}

/// A parsed term: its letters in order, with the ellipsis position if any.
struct Term {
    labels: Vec<Option<u8>>, // None marks the ellipsis
}

impl Term {
    fn has_ell(&self) -> bool {
        self.labels.iter().any(Option::is_none)
    }
    fn letters(&self) -> impl Iterator<Item = u8> + '_ {
        self.labels.iter().flatten().copied()
    }
}

fn label_id(c: char) -> Option<u8> {
    match c {
        'A'..='Z' => Some(c as u8 - b'A'),
        'a'..='z' => Some(c as u8 - b'a' + 26),
        _ => None,
    }
}

fn label_char(id: u8) -> char {
    if id < 26 { (b'A' + id) as char } else { (b'a' + id - 26) as char }
}

/// Parses one term; `start` is its index in the equation, for messages.
fn parse_term(s: &str, start: usize, who: &str) -> Result<Term> {
    let chars: Vec<char> = s.chars().collect();
    let mut labels = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '.' {
            if chars.get(i + 1) != Some(&'.') || chars.get(i + 2) != Some(&'.') {
                return Err(Error::runtime(format!("einsum(): found '.' for {who} that is not part of any ellipsis (...)")));
            }
            if labels.iter().any(Option::is_none) {
                return Err(Error::runtime(format!("einsum(): found '.' for {who} for which an ellipsis was already found")));
            }
            labels.push(None);
            i += 3;
            continue;
        }
        match label_id(c) {
            Some(id) => labels.push(Some(id)),
            None => {
                return Err(Error::runtime(format!(
                    "einsum(): invalid subscript given at index {} in the equation string, subscripts must be in [a-zA-Z]",
                    start + i
                )))
            }
        }
        i += 1;
    }
    Ok(Term { labels })
}

fn i64s(s: &[usize]) -> Vec<i64> {
    s.iter().map(|&v| v as i64).collect()
}

impl Tensor {
    /// `torch.einsum(equation, *operands)`.
    pub fn einsum(equation: &str, operands: &[Tensor]) -> Result<Tensor> {
        if operands.is_empty() {
            return Err(Error::runtime("einsum(): must provide at least one operand"));
        }
        let eq: String = equation.chars().filter(|c| !c.is_whitespace()).collect();
        let (lhs, rhs) = match eq.find("->") {
            Some(p) => (&eq[..p], Some((&eq[p + 2..], p + 2))),
            None => (&eq[..], None),
        };
        let mut terms = Vec::new();
        let mut pos = 0;
        for (i, t) in lhs.split(',').enumerate() {
            if i < operands.len() {
                terms.push(parse_term(t, pos, &format!("operand {i}"))?);
            }
            pos += t.len() + 1;
        }
        let n_terms = lhs.split(',').count();
        if n_terms > operands.len() {
            return Err(Error::runtime("einsum(): fewer operands were provided than specified in the equation"));
        }
        if n_terms < operands.len() {
            return Err(Error::runtime("einsum(): more operands were provided than specified in the equation"));
        }
        // Ellipsis widths, right-aligned across operands.
        let mut ell_max = 0;
        let mut ell_n = Vec::with_capacity(terms.len());
        for (i, (t, op)) in terms.iter().zip(operands).enumerate() {
            let nl = t.letters().count();
            if t.has_ell() {
                if nl > op.ndim() {
                    return Err(Error::runtime(format!(
                        "einsum(): the number of subscripts in the equation ({nl}) is more than the number of dimensions ({}) for operand {i}",
                        op.ndim()
                    )));
                }
                ell_n.push(op.ndim() - nl);
                ell_max = ell_max.max(op.ndim() - nl);
            } else {
                if nl != op.ndim() {
                    return Err(Error::runtime(format!(
                        "einsum(): the number of subscripts in the equation ({nl}) does not match the number of dimensions ({}) for operand {i} and no ellipsis was given",
                        op.ndim()
                    )));
                }
                ell_n.push(0);
            }
        }
        let mut counts = [0usize; 52];
        for t in &terms {
            for l in t.letters() {
                counts[l as usize] += 1;
            }
        }
        let any_ell = terms.iter().any(Term::has_ell);
        // Output slots.
        let out_slots: Vec<Slot> = match rhs {
            Some((r, start)) => {
                let t = parse_term(r, start, "output")?;
                let mut slots = Vec::new();
                let mut seen = [false; 52];
                for l in &t.labels {
                    match l {
                        None => slots.extend((0..ell_max).map(Slot::Ell)),
                        Some(id) => {
                            if counts[*id as usize] == 0 {
                                return Err(Error::runtime(format!(
                                    "einsum(): output subscript {} does not appear in the equation for any input operand",
                                    label_char(*id)
                                )));
                            }
                            if seen[*id as usize] {
                                return Err(Error::runtime(format!(
                                    "einsum(): output subscript {} appears more than once in the output",
                                    label_char(*id)
                                )));
                            }
                            seen[*id as usize] = true;
                            slots.push(Slot::Letter(*id));
                        }
                    }
                }
                slots
            }
            None => {
                let mut slots: Vec<Slot> = if any_ell { (0..ell_max).map(Slot::Ell).collect() } else { Vec::new() };
                slots.extend((0..52u8).filter(|&l| counts[l as usize] == 1).map(Slot::Letter));
                slots
            }
        };
        let out_len = out_slots.len();
        let mut global = out_slots.clone();
        global.extend((0..ell_max).map(Slot::Ell).filter(|s| !out_slots.contains(s)));
        global.extend((0..52u8).filter(|&l| counts[l as usize] > 0).map(Slot::Letter).filter(|s| !out_slots.contains(s)));
        let ng = global.len();

        // Align every operand to the global order.
        let mut sizes: Vec<Option<(usize, usize)>> = vec![None; ng]; // (size, operand) seen so far
        let mut last_op = vec![0usize; ng];
        let mut aligned = Vec::with_capacity(operands.len());
        for (i, (t, op)) in terms.iter().zip(operands).enumerate() {
            let mut slots: Vec<Slot> = Vec::with_capacity(op.ndim());
            for l in &t.labels {
                match l {
                    Some(id) => slots.push(Slot::Letter(*id)),
                    None => slots.extend((ell_max - ell_n[i]..ell_max).map(Slot::Ell)),
                }
            }
            let mut x = op.clone();
            // Repeated letters take the diagonal (moved to the end by `diagonal`).
            loop {
                let dup = (0..slots.len()).find_map(|a| (a + 1..slots.len()).find(|&b| slots[b] == slots[a]).map(|b| (a, b)));
                let Some((a, b)) = dup else { break };
                if x.shape()[a] != x.shape()[b] {
                    let Slot::Letter(id) = slots[a] else { unreachable!("ellipsis dims are distinct") };
                    return Err(Error::runtime(format!(
                        "einsum(): subscript {} is repeated for operand {i} but the sizes don't match, {} != {}",
                        label_char(id),
                        x.shape()[b],
                        x.shape()[a]
                    )));
                }
                x = x.diagonal(0, a as i64, b as i64)?;
                let s = slots[a];
                slots.remove(b);
                slots.remove(a);
                slots.push(s);
            }
            let order: Vec<usize> = global.iter().filter_map(|g| slots.iter().position(|s| s == g)).collect();
            x = x.permute(&order.iter().map(|&o| o as i64).collect::<Vec<_>>())?;
            for (gi, g) in global.iter().enumerate() {
                if !slots.contains(g) {
                    x = x.unsqueeze(gi as i64)?;
                }
            }
            for (gi, g) in global.iter().enumerate() {
                let s = x.shape()[gi];
                if !slots.contains(g) {
                    continue;
                }
                last_op[gi] = i;
                match sizes[gi] {
                    Some((prev, _)) if prev != s && prev != 1 && s != 1 => {
                        let name = match g {
                            Slot::Letter(id) => label_char(*id).to_string(),
                            Slot::Ell(_) => "...".into(),
                        };
                        return Err(Error::runtime(format!(
                            "einsum(): subscript {name} has size {s} for operand {i} which does not broadcast with previously seen size {prev}"
                        )));
                    }
                    Some((prev, _)) if prev != 1 => {}
                    _ => sizes[gi] = Some((s, i)),
                }
            }
            aligned.push(x);
        }

        // Combine left to right, contracting each dim after its last operand.
        let mut result = aligned[0].clone();
        for (i, b) in aligned.iter().enumerate().skip(1) {
            let sum_dims: Vec<usize> = (out_len..ng).filter(|&d| last_op[d] <= i).collect();
            result = sumproduct_pair(&result, b, &sum_dims)?;
        }
        let contracted: Vec<i64> = (out_len..ng).map(|d| d as i64).collect();
        if contracted.is_empty() {
            return Ok(result);
        }
        // PyTorch sums a lone operand's contracted dims with `sum` even when
        // they have size 1 (so integer/bool inputs promote to int64, as `sum`
        // does); with several operands, size-1 leftovers are only squeezed.
        if operands.len() > 1 && contracted.iter().all(|&d| result.shape()[d as usize] == 1) {
            return result.reshape(&i64s(&result.shape()[..out_len]));
        }
        result.sum_dims(Some(&contracted), false, None)
    }

    /// `torch.tensordot(a, b, dims=(dims_a, dims_b))`.
    pub fn tensordot(&self, other: &Tensor, dims_a: &[i64], dims_b: &[i64]) -> Result<Tensor> {
        if dims_a.len() != dims_b.len() {
            return Err(Error::runtime("both dimension lists should have same length"));
        }
        let real_dim = |d: i64, n: usize| {
            // wrap_dim lets 0-d tensors name dim 0; tensordot needs an actual dim.
            let w = wrap_dim(d, n)?;
            if w >= n {
                return Err(Error::index(format!("Dimension out of range (expected to be in range of [-1, 0], but got {d})")));
            }
            Ok(w)
        };
        let da: Vec<usize> = dims_a.iter().map(|&d| real_dim(d, self.ndim())).collect::<Result<_>>()?;
        let db: Vec<usize> = dims_b.iter().map(|&d| real_dim(d, other.ndim())).collect::<Result<_>>()?;
        // A contracted dim of size 1 on one side broadcasts against the other:
        // PyTorch sums the other side's dim first (keeping it as size 1, and
        // the dtype: an int32 tensordot stays int32).
        let (mut a, mut b) = (self.clone(), other.clone());
        let mut k = 1usize;
        for ((&x, &y), (&ox, &oy)) in da.iter().zip(&db).zip(dims_a.iter().zip(dims_b)) {
            let (sx, sy) = (self.shape()[x], other.shape()[y]);
            if sy == 1 {
                a = a.sum_dims(Some(&[x as i64]), true, Some(a.dtype()))?;
            } else if sx == 1 {
                b = b.sum_dims(Some(&[y as i64]), true, Some(b.dtype()))?;
            } else if sx != sy {
                return Err(Error::runtime(format!(
                    "contracted dimensions need to match, but first has size {sx} in dim {ox} and second has size {sy} in dim {oy}"
                )));
            } else {
                k *= sx;
            }
        }
        let fa: Vec<usize> = (0..self.ndim()).filter(|d| !da.contains(d)).collect();
        let fb: Vec<usize> = (0..other.ndim()).filter(|d| !db.contains(d)).collect();
        let pa: Vec<i64> = fa.iter().chain(&da).map(|&d| d as i64).collect();
        let pb: Vec<i64> = db.iter().chain(&fb).map(|&d| d as i64).collect();
        let (m, n): (usize, usize) = (fa.iter().map(|&d| self.shape()[d]).product(), fb.iter().map(|&d| other.shape()[d]).product());
        let a2 = a.permute(&pa)?.reshape(&[m as i64, k as i64])?;
        let b2 = b.permute(&pb)?.reshape(&[k as i64, n as i64])?;
        let mut shape: Vec<i64> = fa.iter().map(|&d| self.shape()[d] as i64).collect();
        shape.extend(fb.iter().map(|&d| other.shape()[d] as i64));
        a2.mm(&b2)?.reshape(&shape)
    }

    /// `torch.outer(a, b)`: `a[:, None] * b` (records `MulBackward0`, as PyTorch).
    pub fn outer(&self, other: &Tensor) -> Result<Tensor> {
        for (name, t) in [("self", self), ("vec2", other)] {
            if t.ndim() != 1 {
                return Err(Error::runtime(format!("outer: Expected 1-D argument {name}, but got {}-D", t.ndim())));
            }
        }
        self.reshape(&[-1, 1])?.mul(other)
    }

    /// `torch.vdot(a, b)`: the dot product of two 1-d tensors of one dtype,
    /// the first conjugated (`sum(conj(a) * b)`).
    pub fn vdot(&self, other: &Tensor) -> Result<Tensor> {
        if self.dtype() != other.dtype() {
            return Err(Error::runtime(format!(
                "vdot: expected both vectors to have same dtype, but found {} and {}",
                crate::ops::creation::pretty(self.dtype()),
                crate::ops::creation::pretty(other.dtype())
            )));
        }
        // The first vector conjugated (a lazy view: the product reads it).
        self.conj()?.dot(other)
    }

    /// `torch.addmv(input, mat, vec, beta, alpha)`: `beta * input + alpha * (mat @ vec)`.
    pub fn addmv(&self, mat: &Tensor, vec: &Tensor, beta: Scalar, alpha: Scalar) -> Result<Tensor> {
        scaled_sum(self, mat, vec, beta, alpha, |a, b| a.mv(b))
    }

    /// `torch.addbmm(input, b1, b2, beta, alpha)`: `beta * input + alpha * Σ_b b1[b] @ b2[b]`.
    pub fn addbmm(&self, b1: &Tensor, b2: &Tensor, beta: Scalar, alpha: Scalar) -> Result<Tensor> {
        scaled_sum(self, b1, b2, beta, alpha, |a, b| a.bmm(b)?.sum_dims(Some(&[0]), false, None))
    }
}

/// `beta * input + alpha * prod(a, b)`; `beta == 0` ignores `input` (NaN
/// included), as PyTorch. Like PyTorch's gemm kernels, float16/bfloat16
/// operands compute in float32 (beta and alpha included) and round once.
fn scaled_sum(input: &Tensor, a: &Tensor, b: &Tensor, beta: Scalar, alpha: Scalar, prod: impl FnOnce(&Tensor, &Tensor) -> Result<Tensor>) -> Result<Tensor> {
    use crate::ops::arith::{opmath, scalar_arg};
    let (dt, work) = (a.dtype(), opmath(a.dtype()));
    // The kernels take beta and alpha in their dtype (truncated for integers).
    let (beta, alpha) = (scalar_arg(beta, work)?, scalar_arg(alpha, work)?);
    let p = prod(&a.to_dtype(work)?, &b.to_dtype(work)?)?;
    let ap = if alpha.to_f64() == 1.0 { p.clone() } else { binary(Operand::T(&p), Operand::S(alpha), BinaryOp::Mul)? };
    let r = if beta.to_f64() == 0.0 {
        // Only `input`'s shape and dtype matter then (its NaNs do not propagate).
        // `where(False, input, 0)`: zeros that still give `input` its (zero) gradient.
        let z = crate::ops::indexing::where_(&Tensor::scalar(false)?, Operand::T(input), Operand::S(Scalar::Int(0)))?;
        binary(Operand::T(&ap), Operand::T(&z), BinaryOp::Add)?
    } else {
        let inp = if input.dtype() == dt { input.to_dtype(work)? } else { input.clone() };
        let bi = if beta.to_f64() == 1.0 { inp } else { binary(Operand::T(&inp), Operand::S(beta), BinaryOp::Mul)? };
        binary(Operand::T(&bi), Operand::T(&ap), BinaryOp::Add)?
    };
    if work != dt && r.dtype() == work {
        return r.to_dtype(dt);
    }
    Ok(r)
}

/// Multiplies two operands aligned to the global order and sums `sum_dims`
/// (keeping them as size 1), with one `bmm` over the contracted dims.
fn sumproduct_pair(a: &Tensor, b: &Tensor, sum_dims: &[usize]) -> Result<Tensor> {
    let nd = a.ndim();
    let (mut a, mut b) = (a.clone(), b.clone());
    let (mut lro, mut lo, mut ro, mut sum) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    // A dim is "present" in an operand unless it has size 1 (a broadcast
    // placeholder); size-0 dims are real dims and must keep their place, or
    // the reshapes below see the wrong element count.
    for d in 0..nd {
        let (sa, sb) = (a.shape()[d] != 1, b.shape()[d] != 1);
        if sum_dims.contains(&d) {
            if sa && sb {
                sum.push(d);
            } else if sa {
                a = a.sum_dims(Some(&[d as i64]), true, None)?;
            } else if sb {
                b = b.sum_dims(Some(&[d as i64]), true, None)?;
            }
        } else if sa && sb {
            lro.push(d);
        } else if sa {
            lo.push(d);
        } else if sb {
            ro.push(d);
        }
    }
    if sum.is_empty() {
        // No contraction: broadcasting multiply is the whole product.
        return a.mul(&b);
    }
    let size = |t: &Tensor, ds: &[usize]| ds.iter().map(|&d| t.shape()[d]).product::<usize>() as i64;
    let (bs, los, ros, ss) = (size(&a, &lro), size(&a, &lo), size(&b, &ro), size(&a, &sum));
    let rest_a: Vec<usize> = (0..nd).filter(|d| !lro.contains(d) && !lo.contains(d) && !sum.contains(d)).collect();
    let rest_b: Vec<usize> = (0..nd).filter(|d| !lro.contains(d) && !ro.contains(d) && !sum.contains(d)).collect();
    let pa: Vec<i64> = lro.iter().chain(&lo).chain(&sum).chain(&rest_a).map(|&d| d as i64).collect();
    let pb: Vec<i64> = lro.iter().chain(&sum).chain(&ro).chain(&rest_b).map(|&d| d as i64).collect();
    let a3 = a.permute(&pa)?.reshape(&[bs, los, ss])?;
    let b3 = b.permute(&pb)?.reshape(&[bs, ss, ros])?;
    let r = a3.bmm(&b3)?;
    // Back to the global order, with every dim not in lro/lo/ro as size 1.
    let order: Vec<usize> = lro.iter().chain(&lo).chain(&ro).copied().collect();
    let mut shape: Vec<i64> = order.iter().map(|&d| if lo.contains(&d) { a.shape()[d] } else if ro.contains(&d) { b.shape()[d] } else { a.shape()[d] } as i64).collect();
    let r = r.reshape(&shape)?;
    let mut sorted = order.clone();
    sorted.sort_unstable();
    let perm: Vec<i64> = sorted.iter().map(|d| order.iter().position(|o| o == d).unwrap_or(0) as i64).collect();
    let mut r = r.permute(&perm)?;
    shape.clear();
    for d in 0..nd {
        if !order.contains(&d) {
            r = r.unsqueeze(d as i64)?;
        }
    }
    Ok(r)
}
