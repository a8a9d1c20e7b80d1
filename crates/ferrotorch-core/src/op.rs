//! The op vocabulary: the closed set of elementwise, reduction,
//! arg-reduction and cumulative ops every backend implements. It belongs to
//! no backend: the op layer validates, promotes and records autograd for an
//! op named here, and a device's
//! [`Backend`](crate::backend::Backend) runs it by matching on the variant.

/// Binary elementwise ops (broadcasting two operands of one compute dtype).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinaryOp {
    /// `a + b`
    Add,
    /// `a - b`
    Sub,
    /// `a * b`
    Mul,
    /// true division `a / b`
    Div,
    /// `a == b`
    Eq,
    /// `a != b`
    Ne,
    /// `a < b`
    Lt,
    /// `a <= b`
    Le,
    /// `a > b`
    Gt,
    /// `a >= b`
    Ge,
    /// `maximum(a, b)` (NaN-propagating)
    Maximum,
    /// `minimum(a, b)` (NaN-propagating)
    Minimum,
    /// `a ** b`
    Pow,
    /// `div(a, b, rounding_mode='trunc')`
    DivTrunc,
    /// `div(a, b, rounding_mode='floor')`, `floor_divide`, `//`
    DivFloor,
    /// `remainder(a, b)`: the result takes the sign of `b` (Python's `%`)
    Remainder,
    /// `fmod(a, b)`: the result takes the sign of `a` (C's `fmod`)
    Fmod,
    /// `atan2(a, b)`
    Atan2,
    /// `fmax(a, b)` (NaN-ignoring)
    Fmax,
    /// `fmin(a, b)` (NaN-ignoring)
    Fmin,
    /// `hypot(a, b)`
    Hypot,
    /// `logaddexp(a, b)`
    LogAddExp,
    /// `copysign(a, b)`
    CopySign,
    /// `a & b`
    BitAnd,
    /// `a | b`
    BitOr,
    /// `a ^ b`
    BitXor,
    /// `a << b`
    Shl,
    /// `a >> b`
    Shr,
    /// `logical_and(a, b)`
    LogicalAnd,
    /// `logical_or(a, b)`
    LogicalOr,
    /// `logical_xor(a, b)`
    LogicalXor,
}

impl BinaryOp {
    /// The aten-style name used in messages.
    pub fn name(self) -> &'static str {
        match self {
            BinaryOp::Add => "add",
            BinaryOp::Sub => "sub",
            BinaryOp::Mul => "mul",
            BinaryOp::Div => "div",
            BinaryOp::Eq => "eq",
            BinaryOp::Ne => "ne",
            BinaryOp::Lt => "lt",
            BinaryOp::Le => "le",
            BinaryOp::Gt => "gt",
            BinaryOp::Ge => "ge",
            BinaryOp::Maximum => "maximum",
            BinaryOp::Minimum => "minimum",
            BinaryOp::Pow => "pow",
            BinaryOp::DivTrunc => "div_trunc",
            BinaryOp::DivFloor => "div_floor",
            BinaryOp::Remainder => "remainder",
            BinaryOp::Fmod => "fmod",
            BinaryOp::Atan2 => "atan2",
            BinaryOp::Fmax => "fmax",
            BinaryOp::Fmin => "fmin",
            BinaryOp::Hypot => "hypot",
            BinaryOp::LogAddExp => "logaddexp",
            BinaryOp::CopySign => "copysign",
            BinaryOp::BitAnd => "bitwise_and",
            BinaryOp::BitOr => "bitwise_or",
            BinaryOp::BitXor => "bitwise_xor",
            BinaryOp::Shl => "lshift",
            BinaryOp::Shr => "rshift",
            BinaryOp::LogicalAnd => "logical_and",
            BinaryOp::LogicalOr => "logical_or",
            BinaryOp::LogicalXor => "logical_xor",
        }
    }
    /// Does the op return bool (and so never carry gradients)?
    pub fn is_comparison(self) -> bool {
        matches!(
            self,
            BinaryOp::Eq
                | BinaryOp::Ne
                | BinaryOp::Lt
                | BinaryOp::Le
                | BinaryOp::Gt
                | BinaryOp::Ge
                | BinaryOp::LogicalAnd
                | BinaryOp::LogicalOr
                | BinaryOp::LogicalXor
        )
    }
    /// Ops whose integer inputs compute in the default float dtype.
    pub fn int_to_float(self) -> bool {
        matches!(self, BinaryOp::Div | BinaryOp::Atan2 | BinaryOp::CopySign)
    }
}

/// Unary ops. Parameters ride along in the variant (`LeakyRelu(slope)`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum UnaryOp {
    /// `-x`
    Neg,
    /// `|x|`
    Abs,
    /// `e^x`
    Exp,
    /// `ln x`
    Log,
    /// `sqrt x`
    Sqrt,
    /// `tanh x`
    Tanh,
    /// `1 / (1 + e^-x)`
    Sigmoid,
    /// `max(x, 0)`
    Relu,
    /// `sign(x)` (0 for NaN)
    Sign,
    /// `1 / sqrt(x)`
    Rsqrt,
    /// `2^x`
    Exp2,
    /// `e^x - 1`
    Expm1,
    /// `log2 x`
    Log2,
    /// `log10 x`
    Log10,
    /// `ln(1 + x)`
    Log1p,
    /// `sin x`
    Sin,
    /// `cos x`
    Cos,
    /// `tan x`
    Tan,
    /// `asin x`
    Asin,
    /// `acos x`
    Acos,
    /// `atan x`
    Atan,
    /// `sinh x`
    Sinh,
    /// `cosh x`
    Cosh,
    /// `asinh x`
    Asinh,
    /// `acosh x`
    Acosh,
    /// `atanh x`
    Atanh,
    /// `logit(x, eps)`; a negative eps means none
    Logit(f64),
    /// `erf x`
    Erf,
    /// `erfc x`
    Erfc,
    /// `erfinv x`
    Erfinv,
    /// `floor x`
    Floor,
    /// `ceil x`
    Ceil,
    /// `round x` (half to even)
    Round,
    /// `round(x, decimals)`
    RoundDecimals(i64),
    /// `trunc x`
    Trunc,
    /// `x - trunc x`
    Frac,
    /// `1 / x`
    Reciprocal,
    /// `hardtanh(x, min, max)` (`relu6` is `hardtanh(x, 0, 6)`)
    Hardtanh(f64, f64),
    /// `softshrink(x, lambd)` (true) or `hardshrink(x, lambd)` (false)
    Shrink(f64, bool),
    /// `leaky_relu(x, negative_slope)`
    LeakyRelu(f64),
    /// `elu` family: (alpha, scale, input_scale); selu and celu are instances
    Elu(f64, f64, f64),
    /// `celu(x, alpha)` (the elu kernel with input scale 1/alpha)
    Celu(f64),
    /// `gelu(x)`; true for the tanh approximation
    Gelu(bool),
    /// `x * sigmoid(x)`
    Silu,
    /// `x * tanh(softplus(x))`
    Mish,
    /// `softplus(x, beta, threshold)`
    Softplus(f64, f64),
    /// `hardsigmoid x`
    Hardsigmoid,
    /// `hardswish x`
    Hardswish,
    /// `log(sigmoid(x))`
    LogSigmoid,
    /// `~x` (logical not on bool)
    BitwiseNot,
    /// `logical_not x` (bool result)
    LogicalNot,
    /// `isnan x`
    IsNan,
    /// `isinf x`
    IsInf,
    /// `isposinf x`
    IsPosInf,
    /// `isneginf x`
    IsNegInf,
    /// `isfinite x`
    IsFinite,
    /// `nan_to_num(x, nan, posinf, neginf)`; None = the dtype's extremes
    NanToNum(f64, Option<f64>, Option<f64>),
}

impl UnaryOp {
    /// The aten-style name used in messages.
    pub fn name(self) -> &'static str {
        use UnaryOp::*;
        match self {
            Neg => "neg",
            Abs => "abs",
            Exp => "exp",
            Log => "log",
            Sqrt => "sqrt",
            Tanh => "tanh",
            Sigmoid => "sigmoid",
            Relu => "relu",
            Sign => "sign",
            Rsqrt => "rsqrt",
            Exp2 => "exp2",
            Expm1 => "expm1",
            Log2 => "log2",
            Log10 => "log10",
            Log1p => "log1p",
            Sin => "sin",
            Cos => "cos",
            Tan => "tan",
            Asin => "asin",
            Acos => "acos",
            Atan => "atan",
            Sinh => "sinh",
            Cosh => "cosh",
            Asinh => "asinh",
            Acosh => "acosh",
            Atanh => "atanh",
            Logit(_) => "logit",
            Erf => "erf",
            Erfc => "erfc",
            Erfinv => "erfinv",
            Floor => "floor",
            Ceil => "ceil",
            Round | RoundDecimals(_) => "round",
            Trunc => "trunc",
            Frac => "frac",
            Reciprocal => "reciprocal",
            Hardtanh(..) => "hardtanh",
            Shrink(_, true) => "softshrink",
            Shrink(_, false) => "hardshrink",
            LeakyRelu(_) => "leaky_relu",
            Elu(..) | Celu(_) => "elu",
            Gelu(_) => "GeluKernelImpl",
            Silu => "silu",
            Mish => "mish",
            Softplus(..) => "softplus",
            Hardsigmoid => "hardsigmoid",
            Hardswish => "hardswish",
            LogSigmoid => "log_sigmoid",
            BitwiseNot => "bitwise_not",
            LogicalNot => "logical_not",
            IsNan => "isnan",
            IsInf => "isinf",
            IsPosInf => "isposinf",
            IsNegInf => "isneginf",
            IsFinite => "isfinite",
            NanToNum(..) => "nan_to_num",
        }
    }

    /// Ops with a bool result.
    pub fn is_predicate(self) -> bool {
        use UnaryOp::*;
        matches!(self, LogicalNot | IsNan | IsInf | IsPosInf | IsNegInf | IsFinite)
    }

    /// Ops that keep integer dtypes (the others compute integers in the default
    /// float dtype or refuse them).
    pub fn keeps_int(self) -> bool {
        use UnaryOp::*;
        matches!(self, Neg | Abs | Relu | Sign | Floor | Ceil | Round | RoundDecimals(_) | Trunc | Hardtanh(..) | BitwiseNot | NanToNum(..))
    }


    /// Ops PyTorch refuses for integer inputs.
    pub fn float_only(self) -> bool {
        use UnaryOp::*;
        matches!(self, Frac | Shrink(..) | LeakyRelu(_) | Elu(..) | Celu(_) | Gelu(_) | Silu | Mish | Softplus(..) | Hardsigmoid | Hardswish | LogSigmoid)
    }
}

/// A reduction producing one value per output element.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ReduceKind {
    /// Sum (f64 accumulator for floats, wrapping i64 for integers and bool).
    Sum,
    /// Sum divided by the number of reduced elements.
    Mean,
    /// Product: floats in their own dtype, rounded after every multiplication
    /// in the order of PyTorch's CPU kernel; integers in wrapping i64.
    Prod,
    /// Maximum (NaN propagates).
    Max,
    /// Minimum (NaN propagates).
    Min,
    /// Variance with `correction` (1 = unbiased); `m2 / max(0, N - correction)`,
    /// `m2` by PyTorch's Welford recurrence in f64, in index order.
    Var {
        /// Bessel-style correction subtracted from the count.
        correction: f64,
    },
    /// Square root of [`ReduceKind::Var`].
    Std {
        /// Bessel-style correction subtracted from the count.
        correction: f64,
    },
    /// `log(sum(exp(x)))`, computed stably.
    LogSumExp,
    /// Vector `p`-norm (`inf`/`-inf` = max/min of `|x|`, `0` = count of nonzeros).
    /// Float32/float16/bfloat16 inputs accumulate as PyTorch's float opmath:
    /// for `p` finite and not 0 or 1, a sum of powers past float32's range is inf.
    Norm(f64),
    /// Vector `p`-norm (`p` finite and nonzero) of rows short enough that
    /// PyTorch's kernels fold each into one float32 accumulator: every term
    /// `|x|^p` rounded to f32 and added in order, the sum rounded to f32, the
    /// root taken with `1/p` rounded to f32.
    NormShortF32(f64),
    /// 2-norm of float32/bfloat16 rows of fewer than 4 elements lying
    /// contiguously in memory, as PyTorch's reduce-last-dim kernel forms it:
    /// each square added with a fused multiply-add rounded to f32.
    Norm2FusedF32,
    /// Every element nonzero (bool result).
    All,
    /// Some element nonzero (bool result).
    Any,
    /// Number of nonzero elements (int64 result).
    CountNonzero,
}

/// Which extreme an arg-reduction (`argmax`/`argmin`, `max(dim)`) looks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArgKind {
    /// Largest value (first index on ties; the first NaN wins).
    Max,
    /// Smallest value (first index on ties; the first NaN wins).
    Min,
}

/// Which running fold a cumulative op (`cumsum`, `cumprod`) computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CumKind {
    /// Running sum.
    Sum,
    /// Running product.
    Prod,
}
