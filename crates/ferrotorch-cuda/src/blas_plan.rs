//! How a batched matrix product of strided operands maps onto cuBLAS's
//! column-major `gemmStridedBatched` calls: pure arithmetic on layouts, so
//! it is tested on machines without a GPU (against an emulation of the
//! cuBLAS call on host memory).
//!
//! cuBLAS reads a matrix stored column-major (`op = N`, unit row stride,
//! leading dim = column stride) or the transpose of one (`op = T`: a
//! row-major matrix, leading dim = row stride). The result must be
//! column-major; a row-major result is computed as its transpose,
//! `Cᵀ = Bᵀ Aᵀ`, which swaps the operands. Batch dims that step uniformly
//! in all three operands become one strided-batched call; the other batch
//! dims are looped over. An operand whose matrix has neither unit stride
//! cannot be passed as it is: [`plan`] says which, and the caller copies it
//! to a contiguous buffer first.

use ferrotorch_core::Layout;

/// One matrix as stored: sizes and element strides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct MatView {
    rows: usize,
    cols: usize,
    rs: isize,
    cs: isize,
}

impl MatView {
    fn transposed(self) -> MatView {
        MatView { rows: self.cols, cols: self.rows, rs: self.cs, cs: self.rs }
    }

    /// The cuBLAS view of this matrix: (transposed?, leading dim), if it
    /// has one. A size-1 dim's stride is irrelevant, so it is replaced by
    /// the smallest leading dim cuBLAS accepts.
    fn blas(self) -> Option<(bool, i64)> {
        let col_major = (self.rs == 1 || self.rows <= 1) && (self.cols <= 1 || self.cs >= self.rows.max(1) as isize);
        if col_major {
            let ld = if self.cols <= 1 { self.rows.max(1) as isize } else { self.cs };
            return Some((false, ld as i64));
        }
        let row_major = (self.cs == 1 || self.cols <= 1) && (self.rows <= 1 || self.rs >= self.cols.max(1) as isize);
        if row_major {
            let ld = if self.rows <= 1 { self.cols.max(1) as isize } else { self.rs };
            return Some((true, ld as i64));
        }
        None
    }
}

/// One operand of a cuBLAS call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlasOperand {
    /// Which of the caller's operands this is: 0 for `a`, 1 for `b`.
    pub which: usize,
    /// `op = T` (the stored matrix is the transpose of the one multiplied).
    pub trans: bool,
    /// Leading dimension, in elements.
    pub ld: i64,
    /// Element step between consecutive batch entries.
    pub stride: i64,
}

/// One `gemmStridedBatched` call: `C = op(A) op(B)` (`+ C` when
/// accumulating), `C` being `m × n` column-major with leading dim `ldc`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlasCall {
    /// Rows of `C` and of `op(A)`.
    pub m: i64,
    /// Columns of `C` and of `op(B)`.
    pub n: i64,
    /// The shared dim.
    pub k: i64,
    /// The first cuBLAS operand.
    pub a: BlasOperand,
    /// The second cuBLAS operand.
    pub b: BlasOperand,
    /// Leading dim of `C`.
    pub ldc: i64,
    /// Element step of `C` between batch entries.
    pub stride_c: i64,
    /// Batch entries in this call.
    pub batch: i64,
}

/// The calls of one product, each with the element offsets (into `a`, `b`
/// and `out`, layout offsets included) where its batch starts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlasPlan {
    /// Offsets `(a, b, out)` of each call's first batch entry.
    pub starts: Vec<(i64, i64, i64)>,
    /// What every call does (they differ only in where they start).
    pub call: BlasCall,
}

/// Why a product cannot go to cuBLAS as its operands are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unplannable {
    /// Operand `a` (0) or `b` (1) has no unit stride in its matrix dims
    /// (or its leading dim is too small): copy it to a contiguous buffer.
    Operand(usize),
    /// The result has no unit stride in its matrix dims.
    Output,
    /// A size or stride does not fit cuBLAS's 32-bit integers.
    TooLarge,
}

fn mat(l: &Layout) -> MatView {
    let n = l.ndim();
    MatView { rows: l.shape[n - 2], cols: l.shape[n - 1], rs: l.strides[n - 2], cs: l.strides[n - 1] }
}

/// Plans `out[..] = a[..] @ b[..]` over the batch dims the three layouts
/// share: `a` is (.., m, k), `b` (.., k, p), `out` (.., m, p), with
/// broadcast batch dims allowed in `a` and `b` (stride 0).
pub fn plan(out: &Layout, a: &Layout, b: &Layout) -> Result<BlasPlan, Unplannable> {
    let nd = out.ndim();
    let (mut o, mut x, mut y) = (mat(out), mat(a), mat(b));
    let (mut which_x, mut which_y) = (0, 1);
    // cuBLAS writes column-major results: a row-major C is Cᵀ = Bᵀ Aᵀ.
    if o.blas().is_some_and(|(t, _)| t) {
        (o, x, y) = (o.transposed(), y.transposed(), x.transposed());
        (which_x, which_y) = (1, 0);
    }
    let Some((false, ldc)) = o.blas() else { return Err(Unplannable::Output) };
    let (xt, lda) = x.blas().ok_or(Unplannable::Operand(which_x))?;
    let (yt, ldb) = y.blas().ok_or(Unplannable::Operand(which_y))?;
    // Batch dims, innermost last, merged where all three step uniformly.
    let stride_of = |l: &Layout, d: usize| l.strides[d] as i64;
    let mut dims: Vec<(i64, [i64; 3])> = Vec::new();
    for d in 0..nd - 2 {
        let size = out.shape[d] as i64;
        if size == 1 {
            continue;
        }
        let st = [stride_of(a, d), stride_of(b, d), stride_of(out, d)];
        if let Some(last) = dims.last_mut() {
            if (0..3).all(|i| last.1[i] == st[i] * size) {
                last.0 *= size;
                last.1 = st;
                continue;
            }
        }
        dims.push((size, st));
    }
    let (batch, inner) = dims.pop().unwrap_or((1, [0, 0, 0]));
    let mut starts = vec![(a.offset as i64, b.offset as i64, out.offset as i64)];
    for &(size, st) in &dims {
        let mut next = Vec::with_capacity(starts.len() * size as usize);
        for &(sa, sb, so) in &starts {
            for i in 0..size {
                next.push((sa + i * st[0], sb + i * st[1], so + i * st[2]));
            }
        }
        starts = next;
    }
    let stride_in = [inner[0], inner[1]];
    let fits = |v: i64| (0..=i32::MAX as i64).contains(&v);
    let call = BlasCall {
        m: o.rows as i64,
        n: o.cols as i64,
        k: x.cols as i64,
        a: BlasOperand { which: which_x, trans: xt, ld: lda, stride: stride_in[which_x] },
        b: BlasOperand { which: which_y, trans: yt, ld: ldb, stride: stride_in[which_y] },
        ldc,
        stride_c: inner[2],
        batch,
    };
    if ![call.m, call.n, call.k, lda, ldb, ldc, batch].into_iter().all(fits) {
        return Err(Unplannable::TooLarge);
    }
    Ok(BlasPlan { starts, call })
}

/// What the planned calls compute, on host memory, with cuBLAS's meaning of
/// every parameter: the reference the plan is tested against, and a
/// description of the contract with cuBLAS. `a`, `b` and `out` are the
/// caller's operands' storages, indexed by element.
pub fn emulate(plan: &BlasPlan, a: &[f64], b: &[f64], out: &mut [f64], accumulate: bool) {
    let c = &plan.call;
    let get = |op: &BlasOperand, base: i64, i: i64, j: i64| -> f64 {
        // Element (i, j) of op(X), X column-major with leading dim ld.
        let idx = if op.trans { base + j + i * op.ld } else { base + i + j * op.ld };
        if op.which == 0 { a[idx as usize] } else { b[idx as usize] }
    };
    for &(sa, sb, so) in &plan.starts {
        let start = [sa, sb];
        for e in 0..c.batch {
            let base_a = start[c.a.which] + e * c.a.stride;
            let base_b = start[c.b.which] + e * c.b.stride;
            let base_c = so + e * c.stride_c;
            for i in 0..c.m {
                for j in 0..c.n {
                    let mut acc = 0.0;
                    for p in 0..c.k {
                        acc += get(&c.a, base_a, i, p) * get(&c.b, base_b, p, j);
                    }
                    let at = (base_c + i + j * c.ldc) as usize;
                    out[at] = if accumulate { out[at] + acc } else { acc };
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Distinct, irregular values in [-1, 1) (no two neighbours alike, so a
    /// misplaced element changes the product).
    fn values(n: usize, seed: u64) -> Vec<f64> {
        (0..n as u64).map(|i| ((i * 7919 + seed * 104_729) % 1009) as f64 / 504.5 - 1.0).collect()
    }

    fn at(l: &Layout, idx: &[usize]) -> usize {
        (l.offset as isize + idx.iter().zip(&l.strides).map(|(&i, &s)| i as isize * s).sum::<isize>()) as usize
    }

    /// The product by its definition, over the layouts' index spaces.
    fn naive(out: &Layout, a: &Layout, b: &Layout, am: &[f64], bm: &[f64], om: &mut [f64]) {
        let nd = out.ndim();
        let k = a.shape[nd - 1];
        let total: usize = out.shape.iter().product();
        for flat in 0..total {
            let mut idx = vec![0; nd];
            let mut r = flat;
            for d in (0..nd).rev() {
                idx[d] = r % out.shape[d];
                r /= out.shape[d];
            }
            let mut acc = 0.0;
            for p in 0..k {
                let mut ia = idx.clone();
                ia[nd - 1] = p;
                let mut ib = idx.clone();
                ib[nd - 2] = p;
                acc += am[at(a, &ia)] * bm[at(b, &ib)];
            }
            om[at(out, &idx)] = acc;
        }
    }

    fn span(l: &Layout) -> usize {
        l.offset + l.shape.iter().zip(&l.strides).map(|(&n, &s)| n.saturating_sub(1) * s.unsigned_abs()).sum::<usize>() + 1
    }

    fn check(out: &Layout, a: &Layout, b: &Layout) {
        let p = plan(out, a, b).unwrap_or_else(|e| panic!("{e:?} for {out:?} {a:?} {b:?}"));
        let (am, bm) = (values(span(a), 1), values(span(b), 2));
        let mut want = vec![0.0; span(out)];
        naive(out, a, b, &am, &bm, &mut want);
        let mut got = vec![0.0; span(out)];
        emulate(&p, &am, &bm, &mut got, false);
        for (g, w) in got.iter().zip(&want) {
            assert!((g - w).abs() < 1e-12, "{g} vs {w}: plan {p:?}");
        }
    }

    fn c(shape: &[usize]) -> Layout {
        Layout::contiguous(shape)
    }

    #[test]
    fn contiguous_products_are_one_call() {
        let p = plan(&c(&[4, 5]), &c(&[4, 3]), &c(&[3, 5])).unwrap();
        assert_eq!(p.starts.len(), 1);
        // Row-major C: computed as Cᵀ = Bᵀ Aᵀ, so cuBLAS's first operand is b.
        assert_eq!((p.call.m, p.call.n, p.call.k, p.call.a.which), (5, 4, 3, 1));
        check(&c(&[4, 5]), &c(&[4, 3]), &c(&[3, 5]));
        let p = plan(&c(&[6, 4, 5]), &c(&[6, 4, 3]), &c(&[6, 3, 5])).unwrap();
        assert_eq!((p.starts.len(), p.call.batch), (1, 6));
        check(&c(&[6, 4, 5]), &c(&[6, 4, 3]), &c(&[6, 3, 5]));
        // Merged batch dims: (2, 3) steps uniformly, one call of 6.
        let p = plan(&c(&[2, 3, 4, 5]), &c(&[2, 3, 4, 3]), &c(&[2, 3, 3, 5])).unwrap();
        assert_eq!((p.starts.len(), p.call.batch), (1, 6));
        check(&c(&[2, 3, 4, 5]), &c(&[2, 3, 4, 3]), &c(&[2, 3, 3, 5]));
    }

    #[test]
    fn transposed_sliced_and_broadcast_operands() {
        // x @ W.T (a linear layer): b is a transposed view.
        let w = c(&[7, 3]).transpose(0, 1).unwrap();
        check(&c(&[4, 7]), &c(&[4, 3]), &w);
        // Both transposed, a column-major result.
        let at_ = c(&[3, 4]).transpose(0, 1).unwrap();
        let out_t = c(&[5, 4]).transpose(0, 1).unwrap();
        check(&out_t, &at_, &c(&[3, 5]));
        check(&out_t, &at_, &c(&[5, 3]).transpose(0, 1).unwrap());
        // A row slice with a leading dim larger than the columns.
        let sliced = c(&[4, 8]).narrow(1, 2, 3).unwrap();
        check(&c(&[4, 5]), &sliced, &c(&[3, 5]));
        // A weight broadcast over the batch (stride 0).
        let bw = c(&[3, 5]).expand(&[6, 3, 5]).unwrap();
        let p = plan(&c(&[6, 4, 5]), &c(&[6, 4, 3]), &bw).unwrap();
        assert_eq!(p.call.batch, 6);
        check(&c(&[6, 4, 5]), &c(&[6, 4, 3]), &bw);
        // Batch dims that do not merge: a permuted batch of a.
        let ap = c(&[3, 2, 4, 3]).permute(&[1, 0, 2, 3]).unwrap();
        let p = plan(&c(&[2, 3, 4, 5]), &ap, &c(&[2, 3, 3, 5])).unwrap();
        assert_eq!((p.starts.len(), p.call.batch), (2, 3));
        check(&c(&[2, 3, 4, 5]), &ap, &c(&[2, 3, 3, 5]));
        // Vectors: single rows and columns, with odd strides.
        let col = c(&[4, 6]).narrow(1, 1, 1).unwrap();
        check(&c(&[3, 1]), &c(&[3, 4]), &col);
        check(&c(&[1, 5]), &c(&[1, 4]), &c(&[4, 5]));
    }

    #[test]
    fn operands_without_a_unit_stride_are_named() {
        // Every other column: no unit stride in either matrix dim.
        let strided = c(&[4, 6]).slice(1, 0, 6, 2).unwrap();
        assert_eq!(plan(&c(&[4, 5]), &strided, &c(&[3, 5])), Err(Unplannable::Operand(0)));
        assert_eq!(plan(&c(&[4, 5]), &c(&[4, 3]), &c(&[3, 10]).slice(1, 0, 10, 2).unwrap()), Err(Unplannable::Operand(1)));
        // A matrix broadcast along its rows has leading dim 0.
        let rows = c(&[1, 3]).expand(&[4, 3]).unwrap();
        assert_eq!(plan(&c(&[4, 5]), &rows, &c(&[3, 5])), Err(Unplannable::Operand(0)));
    }
}
