use gemm::{gemm, Parallelism};
use std::time::Instant;
fn med(mut f: impl FnMut()) -> f64 {
    let mut ts = vec![];
    for _ in 0..60 { let t = Instant::now(); f(); ts.push(t.elapsed().as_secs_f64() * 1e6); }
    ts.sort_by(|a, b| a.partial_cmp(b).unwrap());
    ts[ts.len() / 2]
}
fn st(rows: usize, cols: usize, rm: bool) -> (isize, isize) { if rm { (1, cols as isize) } else { (rows as isize, 1) } } // (cs, rs)
fn main() {
    let p = Parallelism::None;
    for (m, k, n) in [(32, 1024, 256), (256, 1024, 32), (32, 256, 1024), (1024, 256, 32), (128, 512, 512), (128,784,512), (512,784,128), (1024, 1024, 1024)] {
        let a = vec![1.0f32; m * k]; let b = vec![1.0f32; k * n]; let mut c = vec![0.0f32; m * n];
        let mut line = format!("{m}x{k}x{n}:");
        for d in [true, false] { for l in [true, false] { for r in [true, false] {
            let (dcs, drs) = st(m, n, d); let (lcs, lrs) = st(m, k, l); let (rcs, rrs) = st(k, n, r);
            let t = med(|| unsafe { gemm(m, n, k, c.as_mut_ptr(), dcs, drs, false, a.as_ptr(), lcs, lrs, b.as_ptr(), rcs, rrs, 0.0, 1.0, false, false, false, p) });
            line += &format!(" d{}l{}r{} {:.0}", if d {"R"} else {"C"}, if l {"R"} else {"C"}, if r {"R"} else {"C"}, t);
        }}}
        println!("{line}");
    }
}
