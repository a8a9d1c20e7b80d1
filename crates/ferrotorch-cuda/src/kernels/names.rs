//! The op vocabulary mapped onto kernel entry points: which entry of which
//! family runs an op in a dtype, and with which parameters. `None` means
//! there is no CUDA kernel for it yet; the backend turns that into an error
//! naming the op and the device.

use ferrotorch_core::op::ReduceKind;
use ferrotorch_core::{BinaryOp, DType, UnaryOp};

fn dtype_kind(dtype: DType) -> (bool, bool, bool) {
    let float = matches!(dtype, DType::Float16 | DType::BFloat16 | DType::Float32 | DType::Float64);
    let boolean = dtype == DType::Bool;
    (float, !float && !boolean, boolean)
}

/// The `unary.cu` entry point running `op` on `dtype`.
pub fn unary_entry(op: UnaryOp, dtype: DType) -> Option<&'static str> {
    use UnaryOp::*;
    let (float, _, boolean) = dtype_kind(dtype);
    let name = match op {
        LogicalNot => "unary_logical_not",
        IsNan => "unary_isnan",
        IsInf => "unary_isinf",
        IsPosInf => "unary_isposinf",
        IsNegInf => "unary_isneginf",
        IsFinite => "unary_isfinite",
        Signbit => "unary_signbit",
        BitwiseNot if !float => "unary_bitwise_not",
        Abs => "unary_abs",
        Neg if !boolean => "unary_neg",
        Relu if !boolean => "unary_relu",
        Sign if !boolean => "unary_sign",
        Sgn if !boolean => "unary_sgn",
        Floor if !boolean => "unary_floor",
        Ceil if !boolean => "unary_ceil",
        Round if !boolean => "unary_round",
        Trunc if !boolean => "unary_trunc",
        Hardtanh(..) if !boolean => "unary_hardtanh",
        NanToNum(..) if !boolean => "unary_nan_to_num",
        _ if !float => return None,
        Exp => "unary_exp",
        Log => "unary_log",
        Sqrt => "unary_sqrt",
        Tanh => "unary_tanh",
        Sigmoid => "unary_sigmoid",
        Rsqrt => "unary_rsqrt",
        Exp2 => "unary_exp2",
        Expm1 => "unary_expm1",
        Log2 => "unary_log2",
        Log10 => "unary_log10",
        Log1p => "unary_log1p",
        Sin => "unary_sin",
        Cos => "unary_cos",
        Tan => "unary_tan",
        Asin => "unary_asin",
        Acos => "unary_acos",
        Atan => "unary_atan",
        Sinh => "unary_sinh",
        Cosh => "unary_cosh",
        Asinh => "unary_asinh",
        Acosh => "unary_acosh",
        Atanh => "unary_atanh",
        Erf => "unary_erf",
        Erfc => "unary_erfc",
        Erfinv => "unary_erfinv",
        Frac => "unary_frac",
        Reciprocal => "unary_reciprocal",
        Silu => "unary_silu",
        Mish => "unary_mish",
        Hardsigmoid => "unary_hardsigmoid",
        Hardswish => "unary_hardswish",
        LogSigmoid => "unary_log_sigmoid",
        Lgamma => "unary_lgamma",
        I0 => "unary_i0",
        I1 => "unary_special_i1",
        Sinc => "unary_sinc",
        Deg2rad => "unary_deg2rad",
        Rad2deg => "unary_rad2deg",
        Angle => "unary_angle",
        Erfcx => "unary_special_erfcx",
        Ndtri => "unary_special_ndtri",
        BesselJ0 => "unary_special_bessel_j0",
        BesselJ1 => "unary_special_bessel_j1",
        BesselY0 => "unary_special_bessel_y0",
        BesselY1 => "unary_special_bessel_y1",
        LeakyRelu(_) => "unary_leaky_relu",
        Elu(..) => "unary_elu",
        Celu(_) => "unary_celu",
        Gelu(_) => "unary_gelu",
        Softplus(..) => "unary_softplus",
        Shrink(_, true) => "unary_softshrink",
        Shrink(_, false) => "unary_hardshrink",
        _ => return None,
    };
    Some(name)
}

/// The parameters `p0, p1, p2` a unary entry point takes for `op` in
/// `dtype` (`nan_to_num`'s defaults are the dtype's extremes).
pub fn unary_params(op: UnaryOp, dtype: DType) -> [f64; 3] {
    use UnaryOp::*;
    match op {
        Hardtanh(lo, hi) => [lo, hi, 0.0],
        LeakyRelu(slope) => [slope, 0.0, 0.0],
        Elu(alpha, scale, input_scale) => [alpha, scale, input_scale],
        Celu(alpha) => [alpha, 0.0, 0.0],
        Gelu(tanh) => [tanh as u8 as f64, 0.0, 0.0],
        Softplus(beta, threshold) => [beta, threshold, 0.0],
        Shrink(lambda, _) => [lambda, 0.0, 0.0],
        NanToNum(nan, pos, neg) => {
            let max = match dtype {
                DType::Float16 => 65504.0,
                DType::BFloat16 => f64::from(half::bf16::MAX),
                DType::Float32 => f64::from(f32::MAX),
                _ => f64::MAX,
            };
            [nan, pos.unwrap_or(max), neg.unwrap_or(-max)]
        }
        _ => [0.0; 3],
    }
}

/// The `binary.cu` entry point running `op` with compute dtype `dtype`.
pub fn binary_entry(op: BinaryOp, dtype: DType) -> Option<&'static str> {
    use BinaryOp::*;
    let (float, int, boolean) = dtype_kind(dtype);
    let name = match op {
        Eq => "binary_eq",
        Ne => "binary_ne",
        Lt => "binary_lt",
        Le => "binary_le",
        Gt => "binary_gt",
        Ge => "binary_ge",
        LogicalAnd => "binary_logical_and",
        LogicalOr => "binary_logical_or",
        LogicalXor => "binary_logical_xor",
        Add => "binary_add",
        Mul => "binary_mul",
        Maximum => "binary_maximum",
        Minimum => "binary_minimum",
        BitAnd if !float => "binary_bitwise_and",
        BitOr if !float => "binary_bitwise_or",
        BitXor if !float => "binary_bitwise_xor",
        _ if boolean => return None,
        Sub => "binary_sub",
        Pow => "binary_pow",
        DivTrunc => "binary_div_trunc",
        DivFloor => "binary_div_floor",
        Remainder => "binary_remainder",
        Fmod => "binary_fmod",
        Fmax => "binary_fmax",
        Fmin => "binary_fmin",
        Shl if int => "binary_bitwise_left_shift",
        Shr if int => "binary_bitwise_right_shift",
        Gcd if int => "binary_gcd",
        Lcm if int => "binary_lcm",
        _ if !float => return None,
        Div => "binary_div",
        Atan2 => "binary_atan2",
        Hypot => "binary_hypot",
        LogAddExp => "binary_logaddexp",
        LogAddExp2 => "binary_logaddexp2",
        CopySign => "binary_copysign",
        Xlogy => "binary_xlogy",
        Xlog1py => "binary_special_xlog1py",
        NextAfter => "binary_nextafter",
        Heaviside => "binary_heaviside",
        _ => return None,
    };
    Some(name)
}

/// How `reduce.cu` runs a reduction kind: the entry point and its `p`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ReduceEntry {
    /// Entry point name.
    pub name: &'static str,
    /// Its parameter: the mean's divisor, or the norm's order.
    pub p: f64,
}

/// The `reduce.cu` entry point for `kind` on `dtype`, reducing `n_in`
/// elements per output.
pub fn reduce_entry(kind: ReduceKind, dtype: DType, n_in: usize) -> Option<ReduceEntry> {
    let (float, _, _) = dtype_kind(dtype);
    let e = |name, p| Some(ReduceEntry { name, p });
    match kind {
        ReduceKind::Sum => e("reduce_sum", 1.0),
        ReduceKind::Mean if float => e("reduce_sum", n_in as f64),
        ReduceKind::Prod | ReduceKind::ProdAll => e("reduce_prod", 1.0),
        ReduceKind::Max => e("reduce_max", 0.0),
        ReduceKind::Min => e("reduce_min", 0.0),
        ReduceKind::All => e("reduce_all", 0.0),
        ReduceKind::Any => e("reduce_any", 0.0),
        ReduceKind::CountNonzero => e("reduce_count_nonzero", 0.0),
        ReduceKind::Norm(p) | ReduceKind::NormShortF32(p) if float => e("reduce_norm", p),
        ReduceKind::Norm2FusedF32 if float => e("reduce_norm", 2.0),
        ReduceKind::LogSumExp if float => e("reduce_logsumexp", 0.0),
        _ => None,
    }
}

/// The entry points of `pool.cu` (float dtypes).
const POOL_ENTRIES: [&str; 8] = [
    "max_pool_fwd",
    "max_pool_bwd",
    "avg_pool_fwd",
    "avg_pool_bwd",
    "adaptive_avg_fwd",
    "adaptive_avg_bwd",
    "adaptive_max_fwd",
    "adaptive_max_bwd",
];

/// Every entry point name the mappings above can return for `dtype`, per
/// family (for the test that checks them against the compiled PTX).
pub fn all_entries(dtype: DType) -> Vec<(super::Family, &'static str)> {
    use super::Family;
    let mut out = Vec::new();
    for e in UnaryOp::REGISTRY {
        if let Some(n) = unary_entry(e.op, dtype) {
            out.push((Family::Unary, n));
        }
    }
    let with_args = [
        UnaryOp::Hardtanh(0.0, 1.0),
        UnaryOp::LeakyRelu(0.1),
        UnaryOp::Elu(1.0, 1.0, 1.0),
        UnaryOp::Celu(1.0),
        UnaryOp::Gelu(false),
        UnaryOp::Softplus(1.0, 20.0),
        UnaryOp::Shrink(0.5, true),
        UnaryOp::Shrink(0.5, false),
        UnaryOp::NanToNum(0.0, None, None),
    ];
    for op in with_args {
        if let Some(n) = unary_entry(op, dtype) {
            out.push((Family::Unary, n));
        }
    }
    for e in BinaryOp::REGISTRY {
        if let Some(n) = binary_entry(e.op, dtype) {
            out.push((Family::Binary, n));
        }
    }
    let kinds = [
        ReduceKind::Sum,
        ReduceKind::Mean,
        ReduceKind::Prod,
        ReduceKind::Max,
        ReduceKind::Min,
        ReduceKind::All,
        ReduceKind::Any,
        ReduceKind::CountNonzero,
        ReduceKind::Norm(3.0),
        ReduceKind::LogSumExp,
    ];
    for k in kinds {
        if let Some(r) = reduce_entry(k, dtype, 4) {
            out.push((Family::Reduce, r.name));
        }
    }
    if dtype_kind(dtype).0 {
        out.push((Family::Binary, "add_scaled"));
        out.push((Family::Ternary, "ternary_mul_add"));
        out.push((Family::Softmax, "softmax"));
        out.push((Family::Reduce, "reduce_var_mean"));
        for name in [
            "layer_norm_fwd",
            "layer_norm_bwd_input",
            "layer_norm_bwd_params",
            "batch_norm_stats",
            "batch_norm_eval_stats",
            "batch_norm_apply",
            "batch_norm_bwd",
            "group_norm_fwd",
            "group_norm_bwd_input",
            "group_norm_bwd_params",
            "row_moments",
        ] {
            out.push((Family::Norm, name));
        }
    }
    for name in ["reduce_argmax", "reduce_argmin"] {
        out.push((Family::Reduce, name));
    }
    for name in ["scan_cumsum", "scan_cumprod", "scan_cummax", "scan_cummin"] {
        out.push((Family::Scan, name));
    }
    for name in ["index_offsets_init", "index_offsets_term", "index_gather", "index_scatter"] {
        out.push((Family::Index, name));
    }
    if dtype_kind(dtype).0 {
        for name in POOL_ENTRIES {
            out.push((Family::Pool, name));
        }
    }
    if matches!(dtype, DType::Float32 | DType::Float64) {
        out.push((Family::Optim, "optim_adam"));
        out.push((Family::Optim, "optim_sgd"));
        out.push((Family::Optim, "optim_other"));
        for name in ["conv_vol2col", "conv_col2vol", "conv_bias_fill"] {
            out.push((Family::Conv, name));
        }
    }
    if dtype_kind(dtype).0 {
        out.push((Family::Random, "random_uniform"));
        out.push((Family::Random, "random_normal"));
    }
    out.push((Family::Random, "random_integers"));
    for name in ["sort_load", "sort_step", "sort_pick", "sort_mode"] {
        out.push((Family::Sort, name));
    }
    for name in ["compact_tile_counts", "compact_scan_tiles", "compact_nonzero", "compact_masked_scatter", "compact_mask_counts"] {
        out.push((Family::Compact, name));
    }
    out.push((Family::Ternary, "where_select"));
    out.push((Family::Fill, "fill"));
    for name in ["seq_affine", "seq_affine_int", "seq_linspace"] {
        out.push((Family::Fill, name));
    }
    for src in super::REAL_DTYPES {
        out.push((Family::Copy, super::copy_entry(src)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_and_bool_modules_get_no_float_math() {
        assert_eq!(unary_entry(UnaryOp::Exp, DType::Int64), None);
        assert_eq!(unary_entry(UnaryOp::Exp, DType::Float16), Some("unary_exp"));
        assert_eq!(unary_entry(UnaryOp::BitwiseNot, DType::Float32), None);
        assert_eq!(unary_entry(UnaryOp::Neg, DType::Bool), None);
        assert_eq!(binary_entry(BinaryOp::Sub, DType::Bool), None);
        assert_eq!(binary_entry(BinaryOp::Shl, DType::Int8), Some("binary_bitwise_left_shift"));
        assert_eq!(binary_entry(BinaryOp::Div, DType::Int32), None);
        assert_eq!(reduce_entry(ReduceKind::Mean, DType::Int32, 3), None);
        assert_eq!(reduce_entry(ReduceKind::Mean, DType::Float32, 3), Some(ReduceEntry { name: "reduce_sum", p: 3.0 }));
    }

    /// The registry walk: which float ops of the vocabulary have no CUDA
    /// kernel yet. A new op in the registry fails this until it gets a
    /// kernel here or is listed as missing (README, "Differences").
    #[test]
    fn registry_ops_without_a_cuda_kernel_are_the_known_ones() {
        let missing_unary: Vec<&str> =
            UnaryOp::REGISTRY.iter().filter(|e| unary_entry(e.op, DType::Float32).is_none()).map(|e| e.name).collect();
        // bitwise_not takes integers and bool only (as in PyTorch).
        assert!(unary_entry(UnaryOp::BitwiseNot, DType::Int32).is_some() && unary_entry(UnaryOp::BitwiseNot, DType::Bool).is_some());
        assert_eq!(
            missing_unary,
            [
                "bitwise_not",
                "digamma",
                "special_log_ndtr",
                "special_i0e",
                "special_i1e",
                "special_entr",
                "special_modified_bessel_i0",
                "special_modified_bessel_i1",
                "special_modified_bessel_k0",
                "special_modified_bessel_k1",
                "special_scaled_modified_bessel_k0",
                "special_scaled_modified_bessel_k1",
                "special_spherical_bessel_j0",
                "special_airy_ai",
            ]
        );
        let missing_binary: Vec<&str> = BinaryOp::REGISTRY
            .iter()
            .filter(|e| binary_entry(e.op, DType::Float32).is_none() && !e.op.is_polynomial())
            .map(|e| e.name)
            .collect();
        // Bitwise ops, shifts, gcd and lcm take integers only (as in PyTorch).
        assert_eq!(
            missing_binary,
            [
                "bitwise_and",
                "bitwise_or",
                "bitwise_xor",
                "bitwise_left_shift",
                "bitwise_right_shift",
                "special_zeta",
                "igamma",
                "igammac",
                "gcd",
                "lcm"
            ]
        );
        for e in BinaryOp::REGISTRY {
            if matches!(e.op, BinaryOp::BitAnd | BinaryOp::BitOr | BinaryOp::BitXor | BinaryOp::Shl | BinaryOp::Shr | BinaryOp::Gcd | BinaryOp::Lcm) {
                assert!(binary_entry(e.op, DType::Int32).is_some(), "{}", e.name);
            }
        }
    }

    #[test]
    fn nan_to_num_defaults_are_the_dtype_extremes() {
        // The same extremes torch.finfo reports.
        assert_eq!(unary_params(UnaryOp::NanToNum(0.0, None, None), DType::Float16), [0.0, 65504.0, -65504.0]);
        assert_eq!(unary_params(UnaryOp::NanToNum(1.0, Some(2.0), None), DType::Float64), [1.0, 2.0, -f64::MAX]);
        assert_eq!(unary_params(UnaryOp::NanToNum(0.0, None, None), DType::BFloat16)[1], 3.3895313892515355e38);
    }
}
