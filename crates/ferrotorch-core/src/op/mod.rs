//! The op vocabulary: the closed set of elementwise, reduction,
//! arg-reduction and cumulative ops every backend implements. It belongs to
//! no backend: the op layer validates, promotes and records autograd for an
//! op named here, and a device's
//! [`Backend`](crate::backend::Backend) runs it by matching on the variant.
//!
//! The elementwise, reduction, arg-reduction and cumulative kinds are here;
//! the structured ops' descriptions (a convolution's geometry, ...) have a
//! submodule each.

pub mod conv;
pub mod factory;
pub mod fft;
pub mod index;
pub mod linalg;
pub mod norm;
pub mod optim;
pub mod pool;
pub mod sort;

/// Declares [`BinaryOp`] and its registry: each binary op is one entry with
/// its aten name (what the bindings call it), the name its kernels give in
/// messages (`"lshift_cpu" not implemented for ...`), its Python surface
/// and whether `other` may be a Python number there.
macro_rules! binary_ops {
    ($( $(#[$m:meta])* $v:ident => $name:literal, $kernel:literal, $surface:ident, $other:ident; )*) => {
        /// Binary elementwise ops (broadcasting two operands of one compute dtype).
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum BinaryOp {
            $( $(#[$m])* $v, )*
        }

        /// One registry entry of a binary op.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub struct BinaryEntry {
            /// The op.
            pub op: BinaryOp,
            /// Its aten name (`torch.<name>`).
            pub name: &'static str,
            /// The Python entry points generated for it.
            pub surface: Surface,
            /// Whether PyTorch's signature takes only a tensor as `other`.
            pub tensor_only: bool,
        }

        impl BinaryOp {
            /// The registry of binary ops, in declaration order.
            pub const REGISTRY: &'static [BinaryEntry] = &[
                $( BinaryEntry {
                    op: BinaryOp::$v,
                    name: $name,
                    surface: Surface::$surface,
                    tensor_only: binary_ops!(@tensor_only $other),
                }, )*
            ];

            /// The op whose aten name is `name`.
            pub fn from_name(name: &str) -> Option<BinaryOp> {
                match name {
                    $( $name => Some(BinaryOp::$v), )*
                    _ => None,
                }
            }

            /// The name its kernels give in messages.
            pub fn name(self) -> &'static str {
                match self {
                    $( BinaryOp::$v => $kernel, )*
                }
            }
        }
    };
    (@tensor_only TENSOR) => { true };
    (@tensor_only NUMBER) => { false };
}

binary_ops! {
    /// `a + b` (bound by hand: `alpha`, operators)
    Add => "add", "add", CUSTOM, NUMBER;
    /// `a - b`
    Sub => "sub", "sub", CUSTOM, NUMBER;
    /// `a * b`
    Mul => "mul", "mul", CUSTOM, NUMBER;
    /// true division `a / b` (`rounding_mode` bound by hand)
    Div => "div", "div", CUSTOM, NUMBER;
    /// `a == b`
    Eq => "eq", "eq", NO_INPLACE_FUNCTION, NUMBER;
    /// `a != b`
    Ne => "ne", "ne", NO_INPLACE_FUNCTION, NUMBER;
    /// `a < b`
    Lt => "lt", "lt", NO_INPLACE_FUNCTION, NUMBER;
    /// `a <= b`
    Le => "le", "le", NO_INPLACE_FUNCTION, NUMBER;
    /// `a > b`
    Gt => "gt", "gt", NO_INPLACE_FUNCTION, NUMBER;
    /// `a >= b`
    Ge => "ge", "ge", NO_INPLACE_FUNCTION, NUMBER;
    /// `maximum(a, b)` (NaN-propagating)
    Maximum => "maximum", "maximum", OUT_OF_PLACE, TENSOR;
    /// `minimum(a, b)` (NaN-propagating)
    Minimum => "minimum", "minimum", OUT_OF_PLACE, TENSOR;
    /// `a ** b`
    Pow => "pow", "pow", CUSTOM, NUMBER;
    /// `div(a, b, rounding_mode='trunc')`
    DivTrunc => "div_trunc", "div_trunc", CUSTOM, NUMBER;
    /// `div(a, b, rounding_mode='floor')`, `floor_divide`, `//`
    DivFloor => "div_floor", "div_floor", CUSTOM, NUMBER;
    /// `remainder(a, b)`: the result takes the sign of `b` (Python's `%`)
    Remainder => "remainder", "remainder", NO_INPLACE_FUNCTION, NUMBER;
    /// `fmod(a, b)`: the result takes the sign of `a` (C's `fmod`)
    Fmod => "fmod", "fmod", NO_INPLACE_FUNCTION, NUMBER;
    /// `atan2(a, b)`
    Atan2 => "atan2", "atan2", NO_INPLACE_FUNCTION, TENSOR;
    /// `fmax(a, b)` (NaN-ignoring)
    Fmax => "fmax", "fmax", OUT_OF_PLACE, TENSOR;
    /// `fmin(a, b)` (NaN-ignoring)
    Fmin => "fmin", "fmin", OUT_OF_PLACE, TENSOR;
    /// `hypot(a, b)`
    Hypot => "hypot", "hypot", NO_INPLACE_FUNCTION, TENSOR;
    /// `logaddexp(a, b)`
    LogAddExp => "logaddexp", "logaddexp", OUT_OF_PLACE, TENSOR;
    /// `copysign(a, b)`
    CopySign => "copysign", "copysign", NO_INPLACE_FUNCTION, NUMBER;
    /// `a & b`
    BitAnd => "bitwise_and", "bitwise_and", NO_INPLACE_FUNCTION, NUMBER;
    /// `a | b`
    BitOr => "bitwise_or", "bitwise_or", NO_INPLACE_FUNCTION, NUMBER;
    /// `a ^ b`
    BitXor => "bitwise_xor", "bitwise_xor", NO_INPLACE_FUNCTION, NUMBER;
    /// `a << b`
    Shl => "bitwise_left_shift", "lshift", NO_INPLACE_FUNCTION, NUMBER;
    /// `a >> b`
    Shr => "bitwise_right_shift", "rshift", NO_INPLACE_FUNCTION, NUMBER;
    /// `logical_and(a, b)`
    LogicalAnd => "logical_and", "logical_and", NO_INPLACE_FUNCTION, TENSOR;
    /// `logical_or(a, b)`
    LogicalOr => "logical_or", "logical_or", NO_INPLACE_FUNCTION, TENSOR;
    /// `logical_xor(a, b)`
    LogicalXor => "logical_xor", "logical_xor", NO_INPLACE_FUNCTION, TENSOR;
    /// `a * ln(b)`, 0 where `a == 0` (unless `b` is NaN)
    Xlogy => "xlogy", "xlogy", ALL, NUMBER;
    /// `a * ln(1 + b)`, 0 where `a == 0` (unless `b` is NaN)
    Xlog1py => "special_xlog1py", "special_xlog1py", CUSTOM, NUMBER;
    /// Hurwitz zeta `ζ(a, b)`
    Zeta => "special_zeta", "zeta", CUSTOM, NUMBER;
    /// Regularised lower incomplete gamma `P(a, b)`
    Igamma => "igamma", "igamma", NO_INPLACE_FUNCTION, TENSOR;
    /// Regularised upper incomplete gamma `Q(a, b)`
    Igammac => "igammac", "igammac", NO_INPLACE_FUNCTION, TENSOR;
    /// The next representable value after `a` towards `b`
    NextAfter => "nextafter", "nextafter", NO_INPLACE_FUNCTION, TENSOR;
    /// Heaviside step of `a` with `b` at `a == 0`
    Heaviside => "heaviside", "heaviside", NO_INPLACE_FUNCTION, TENSOR;
    /// Greatest common divisor (integers)
    Gcd => "gcd", "gcd", ALL, TENSOR;
    /// Least common multiple (integers)
    Lcm => "lcm", "lcm", ALL, TENSOR;
    /// `log2(2^a + 2^b)`
    LogAddExp2 => "logaddexp2", "logaddexp2", OUT_OF_PLACE, TENSOR;
    /// Chebyshev polynomial of the first kind `T_n(x)`
    ChebyshevT => "special_chebyshev_polynomial_t", "chebyshev_polynomial_t", CUSTOM, NUMBER;
    /// Chebyshev polynomial of the second kind `U_n(x)`
    ChebyshevU => "special_chebyshev_polynomial_u", "chebyshev_polynomial_u", CUSTOM, NUMBER;
    /// Chebyshev polynomial of the third kind `V_n(x)`
    ChebyshevV => "special_chebyshev_polynomial_v", "chebyshev_polynomial_v", CUSTOM, NUMBER;
    /// Chebyshev polynomial of the fourth kind `W_n(x)`
    ChebyshevW => "special_chebyshev_polynomial_w", "chebyshev_polynomial_w", CUSTOM, NUMBER;
    /// Shifted Chebyshev polynomial of the first kind
    ShiftedChebyshevT => "special_shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_t", CUSTOM, NUMBER;
    /// Shifted Chebyshev polynomial of the second kind
    ShiftedChebyshevU => "special_shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_u", CUSTOM, NUMBER;
    /// Shifted Chebyshev polynomial of the third kind
    ShiftedChebyshevV => "special_shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_v", CUSTOM, NUMBER;
    /// Shifted Chebyshev polynomial of the fourth kind
    ShiftedChebyshevW => "special_shifted_chebyshev_polynomial_w", "shifted_chebyshev_polynomial_w", CUSTOM, NUMBER;
    /// Physicists' Hermite polynomial `H_n(x)`
    HermiteH => "special_hermite_polynomial_h", "hermite_polynomial_h", CUSTOM, NUMBER;
    /// Probabilists' Hermite polynomial `He_n(x)`
    HermiteHe => "special_hermite_polynomial_he", "hermite_polynomial_he", CUSTOM, NUMBER;
    /// Laguerre polynomial `L_n(x)`
    LaguerreL => "special_laguerre_polynomial_l", "laguerre_polynomial_l", CUSTOM, NUMBER;
    /// Legendre polynomial `P_n(x)`
    LegendreP => "special_legendre_polynomial_p", "legendre_polynomial_p", CUSTOM, NUMBER;
}

impl BinaryOp {
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
        matches!(self, BinaryOp::Div | BinaryOp::Atan2 | BinaryOp::CopySign | BinaryOp::Xlogy | BinaryOp::Xlog1py | BinaryOp::Zeta)
            || self.is_polynomial()
    }

    /// Whether PyTorch's CPU kernel takes float16/bfloat16 operands (its
    /// special functions `zeta` and the polynomials do not).
    pub fn has_reduced_float_kernel(self) -> bool {
        !(self == BinaryOp::Zeta || self.is_polynomial())
    }

    /// The orthogonal polynomials `P_n(x)` of `torch.special` (no derivative).
    pub fn is_polynomial(self) -> bool {
        use BinaryOp::*;
        matches!(
            self,
            ChebyshevT | ChebyshevU | ChebyshevV | ChebyshevW | ShiftedChebyshevT | ShiftedChebyshevU | ShiftedChebyshevV
                | ShiftedChebyshevW | HermiteH | HermiteHe | LaguerreL | LegendreP
        )
    }
}

/// Which PyTorch entry points an op has, as the `variants` of PyTorch's
/// `native_functions.yaml`: the Python layer binds exactly these.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Surface {
    /// `torch.op(x)`
    pub function: bool,
    /// `Tensor.op()`
    pub method: bool,
    /// `Tensor.op_()`
    pub inplace_method: bool,
    /// `torch.op_(x)`
    pub inplace_function: bool,
}

impl Surface {
    /// `torch.op`, `Tensor.op`, `Tensor.op_` and `torch.op_`.
    pub const ALL: Surface = Surface { function: true, method: true, inplace_method: true, inplace_function: true };
    /// `torch.op`, `Tensor.op` and `Tensor.op_` (no `torch.op_`).
    pub const NO_INPLACE_FUNCTION: Surface = Surface { inplace_function: false, ..Surface::ALL };
    /// `torch.op` and `Tensor.op` (predicates: no in-place form).
    pub const OUT_OF_PLACE: Surface = Surface { inplace_method: false, inplace_function: false, ..Surface::ALL };
    /// None generated from the registry: the op is bound by hand (extra
    /// arguments, or only in `nn.functional`).
    pub const CUSTOM: Surface = Surface { function: false, method: false, inplace_method: false, inplace_function: false };
}

/// Declares [`UnaryOp`] and its registry. Each parameterless op is one
/// entry: variant, aten name, backward node name, Python surface; every
/// table that needs an op's name (messages, bindings, autograd nodes) reads
/// it from here. Ops with arguments are declared after them and named in
/// [`UnaryOp::name`]/[`UnaryOp::node_name`].
macro_rules! unary_ops {
    (
        simple { $( $(#[$sm:meta])* $v:ident => $name:literal, $node:literal, $surface:ident; )* }
        with_args { $( $(#[$pm:meta])* $pv:ident($($pt:ty),*); )* }
    ) => {
        /// Unary ops. Parameters ride along in the variant (`LeakyRelu(slope)`).
        #[derive(Clone, Copy, Debug, PartialEq)]
        pub enum UnaryOp {
            $( $(#[$sm])* $v, )*
            $( $(#[$pm])* $pv($($pt),*), )*
        }

        /// One registry entry of a parameterless unary op.
        #[derive(Clone, Copy, Debug, PartialEq)]
        pub struct UnaryEntry {
            /// The op.
            pub op: UnaryOp,
            /// Its aten name (`torch.<name>`).
            pub name: &'static str,
            /// The `grad_fn` node PyTorch records for it.
            pub node: &'static str,
            /// The Python entry points it has.
            pub surface: Surface,
        }

        impl UnaryOp {
            /// The registry of parameterless unary ops, in declaration order.
            pub const REGISTRY: &'static [UnaryEntry] = &[
                $( UnaryEntry { op: UnaryOp::$v, name: $name, node: $node, surface: Surface::$surface }, )*
            ];

            /// The parameterless op whose aten name is `name`.
            pub fn from_name(name: &str) -> Option<UnaryOp> {
                match name {
                    $( $name => Some(UnaryOp::$v), )*
                    _ => None,
                }
            }

            /// (aten name, node name) of a parameterless op.
            fn simple_names(self) -> Option<(&'static str, &'static str)> {
                match self {
                    $( UnaryOp::$v => Some(($name, $node)), )*
                    _ => None,
                }
            }
        }
    };
}

unary_ops! {
    simple {
        /// `-x`
        Neg => "neg", "NegBackward0", ALL;
        /// `|x|`
        Abs => "abs", "AbsBackward0", ALL;
        /// `e^x`
        Exp => "exp", "ExpBackward0", ALL;
        /// `ln x`
        Log => "log", "LogBackward0", ALL;
        /// `sqrt x`
        Sqrt => "sqrt", "SqrtBackward0", ALL;
        /// `tanh x`
        Tanh => "tanh", "TanhBackward0", ALL;
        /// `1 / (1 + e^-x)`
        Sigmoid => "sigmoid", "SigmoidBackward0", ALL;
        /// `max(x, 0)`
        Relu => "relu", "ReluBackward0", ALL;
        /// `sign(x)` (0 for NaN)
        Sign => "sign", "SignBackward0", NO_INPLACE_FUNCTION;
        /// `1 / sqrt(x)`
        Rsqrt => "rsqrt", "RsqrtBackward0", ALL;
        /// `2^x`
        Exp2 => "exp2", "Exp2Backward0", ALL;
        /// `e^x - 1`
        Expm1 => "expm1", "Expm1Backward0", ALL;
        /// `log2 x`
        Log2 => "log2", "Log2Backward0", ALL;
        /// `log10 x`
        Log10 => "log10", "Log10Backward0", ALL;
        /// `ln(1 + x)`
        Log1p => "log1p", "Log1PBackward0", ALL;
        /// `sin x`
        Sin => "sin", "SinBackward0", ALL;
        /// `cos x`
        Cos => "cos", "CosBackward0", ALL;
        /// `tan x`
        Tan => "tan", "TanBackward0", ALL;
        /// `asin x`
        Asin => "asin", "AsinBackward0", ALL;
        /// `acos x`
        Acos => "acos", "AcosBackward0", ALL;
        /// `atan x`
        Atan => "atan", "AtanBackward0", ALL;
        /// `sinh x`
        Sinh => "sinh", "SinhBackward0", ALL;
        /// `cosh x`
        Cosh => "cosh", "CoshBackward0", ALL;
        /// `asinh x`
        Asinh => "asinh", "AsinhBackward0", ALL;
        /// `acosh x`
        Acosh => "acosh", "AcoshBackward0", ALL;
        /// `atanh x`
        Atanh => "atanh", "AtanhBackward0", ALL;
        /// `erf x`
        Erf => "erf", "ErfBackward0", ALL;
        /// `erfc x`
        Erfc => "erfc", "ErfcBackward0", ALL;
        /// `erfinv x`
        Erfinv => "erfinv", "ErfinvBackward0", NO_INPLACE_FUNCTION;
        /// `floor x`
        Floor => "floor", "FloorBackward0", ALL;
        /// `ceil x`
        Ceil => "ceil", "CeilBackward0", ALL;
        /// `round x` (half to even; `round(decimals=)` is bound by hand)
        Round => "round", "RoundBackward0", CUSTOM;
        /// `trunc x`
        Trunc => "trunc", "TruncBackward0", ALL;
        /// `x - trunc x`
        Frac => "frac", "FracBackward0", ALL;
        /// `1 / x`
        Reciprocal => "reciprocal", "ReciprocalBackward0", ALL;
        /// `x * sigmoid(x)`
        Silu => "silu", "SiluBackward0", CUSTOM;
        /// `x * tanh(softplus(x))`
        Mish => "mish", "MishBackward0", CUSTOM;
        /// `hardsigmoid x`
        Hardsigmoid => "hardsigmoid", "HardsigmoidBackward0", CUSTOM;
        /// `hardswish x`
        Hardswish => "hardswish", "HardswishBackward0", CUSTOM;
        /// `log(sigmoid(x))`
        LogSigmoid => "log_sigmoid", "LogSigmoidBackward0", CUSTOM;
        /// `~x` (logical not on bool)
        BitwiseNot => "bitwise_not", "NotDifferentiable", NO_INPLACE_FUNCTION;
        /// `logical_not x` (bool result)
        LogicalNot => "logical_not", "NotDifferentiable", NO_INPLACE_FUNCTION;
        /// `isnan x`
        IsNan => "isnan", "NotDifferentiable", OUT_OF_PLACE;
        /// `isinf x`
        IsInf => "isinf", "NotDifferentiable", OUT_OF_PLACE;
        /// `isposinf x`
        IsPosInf => "isposinf", "NotDifferentiable", OUT_OF_PLACE;
        /// `isneginf x`
        IsNegInf => "isneginf", "NotDifferentiable", OUT_OF_PLACE;
        /// `isfinite x`
        IsFinite => "isfinite", "NotDifferentiable", OUT_OF_PLACE;
        /// `signbit x` (bool: the sign bit is set, -0.0 included)
        Signbit => "signbit", "NotDifferentiable", OUT_OF_PLACE;
        /// `sgn x` (`sign` for real dtypes)
        Sgn => "sgn", "SgnBackward0", NO_INPLACE_FUNCTION;
        /// `ln |Γ(x)|`
        Lgamma => "lgamma", "LgammaBackward0", NO_INPLACE_FUNCTION;
        /// `ψ(x)`, the logarithmic derivative of Γ
        Digamma => "digamma", "DigammaBackward0", NO_INPLACE_FUNCTION;
        /// modified Bessel function `I0(x)`
        I0 => "i0", "I0Backward0", ALL;
        /// `sin(πx) / (πx)` (1 at 0)
        Sinc => "sinc", "SincBackward0", ALL;
        /// degrees to radians
        Deg2rad => "deg2rad", "Deg2RadBackward0", ALL;
        /// radians to degrees
        Rad2deg => "rad2deg", "Rad2DegBackward0", ALL;
        /// `exp(x^2) erfc(x)`
        Erfcx => "special_erfcx", "SpecialErfcxBackward0", CUSTOM;
        /// the standard normal quantile function
        Ndtri => "special_ndtri", "SpecialNdtriBackward0", CUSTOM;
        /// `ln Φ(x)`
        LogNdtr => "special_log_ndtr", "SpecialLogNdtrBackward0", CUSTOM;
        /// `exp(-|x|) I0(x)`
        I0e => "special_i0e", "SpecialI0EBackward0", CUSTOM;
        /// modified Bessel function `I1(x)`
        I1 => "special_i1", "SpecialI1Backward0", CUSTOM;
        /// `exp(-|x|) I1(x)`
        I1e => "special_i1e", "SpecialI1EBackward0", CUSTOM;
        /// `-x ln x` (0 at 0, -inf below)
        Entr => "special_entr", "SpecialEntrBackward0", CUSTOM;
        /// Bessel function `J0(x)` (no derivative)
        BesselJ0 => "special_bessel_j0", "NotDifferentiable", CUSTOM;
        /// Bessel function `J1(x)` (no derivative)
        BesselJ1 => "special_bessel_j1", "NotDifferentiable", CUSTOM;
        /// Bessel function `Y0(x)` (no derivative)
        BesselY0 => "special_bessel_y0", "NotDifferentiable", CUSTOM;
        /// Bessel function `Y1(x)` (no derivative)
        BesselY1 => "special_bessel_y1", "NotDifferentiable", CUSTOM;
        /// modified Bessel function `I0(x)` (no derivative)
        ModifiedBesselI0 => "special_modified_bessel_i0", "NotDifferentiable", CUSTOM;
        /// modified Bessel function `I1(x)` (no derivative)
        ModifiedBesselI1 => "special_modified_bessel_i1", "NotDifferentiable", CUSTOM;
        /// modified Bessel function `K0(x)` (no derivative)
        ModifiedBesselK0 => "special_modified_bessel_k0", "NotDifferentiable", CUSTOM;
        /// modified Bessel function `K1(x)` (no derivative)
        ModifiedBesselK1 => "special_modified_bessel_k1", "NotDifferentiable", CUSTOM;
        /// `exp(x) K0(x)` (no derivative)
        ScaledModifiedBesselK0 => "special_scaled_modified_bessel_k0", "NotDifferentiable", CUSTOM;
        /// `exp(x) K1(x)` (no derivative)
        ScaledModifiedBesselK1 => "special_scaled_modified_bessel_k1", "NotDifferentiable", CUSTOM;
        /// spherical Bessel function `j0(x) = sin(x)/x` (no derivative)
        SphericalBesselJ0 => "special_spherical_bessel_j0", "NotDifferentiable", CUSTOM;
        /// Airy function `Ai(x)` (no derivative)
        AiryAi => "special_airy_ai", "NotDifferentiable", CUSTOM;
        /// the argument of a complex number (0 or π for reals, NaN kept)
        Angle => "angle", "AngleBackward0", OUT_OF_PLACE;
    }
    with_args {
        /// `logit(x, eps)`; a negative eps means none
        Logit(f64);
        /// `round(x, decimals)`
        RoundDecimals(i64);
        /// `hardtanh(x, min, max)` (`relu6` is `hardtanh(x, 0, 6)`)
        Hardtanh(f64, f64);
        /// `softshrink(x, lambd)` (true) or `hardshrink(x, lambd)` (false)
        Shrink(f64, bool);
        /// `leaky_relu(x, negative_slope)`
        LeakyRelu(f64);
        /// `elu` family: (alpha, scale, input_scale); selu and celu are instances
        Elu(f64, f64, f64);
        /// `celu(x, alpha)` (the elu kernel with input scale 1/alpha)
        Celu(f64);
        /// `gelu(x)`; true for the tanh approximation
        Gelu(bool);
        /// `softplus(x, beta, threshold)`
        Softplus(f64, f64);
        /// `nan_to_num(x, nan, posinf, neginf)`; None = the dtype's extremes
        NanToNum(f64, Option<f64>, Option<f64>);
        /// `polygamma(n, x)`, the n-th derivative of digamma
        Polygamma(i64);
        /// `mvlgamma(x, p)`, the multivariate log-gamma of dimension p
        Mvlgamma(i64);
    }
}

impl UnaryOp {
    /// The aten-style name used in messages.
    pub fn name(self) -> &'static str {
        use UnaryOp::*;
        if let Some((name, _)) = self.simple_names() {
            return name;
        }
        match self {
            Logit(_) => "logit",
            RoundDecimals(_) => "round",
            Hardtanh(..) => "hardtanh",
            Shrink(_, true) => "softshrink",
            Shrink(_, false) => "hardshrink",
            LeakyRelu(_) => "leaky_relu",
            Elu(..) | Celu(_) => "elu",
            Gelu(_) => "GeluKernelImpl",
            Softplus(..) => "softplus",
            NanToNum(..) => "nan_to_num",
            Polygamma(_) => "polygamma",
            Mvlgamma(_) => "mvlgamma",
            _ => unreachable!("every parameterless op is in the registry"),
        }
    }

    /// The `grad_fn` node PyTorch records for `op(x)` (the out-of-place form).
    pub fn node_name(self) -> &'static str {
        use UnaryOp::*;
        if let Some((_, node)) = self.simple_names() {
            return node;
        }
        match self {
            Logit(_) => "LogitBackward0",
            RoundDecimals(_) => "RoundBackward1",
            Hardtanh(..) => "HardtanhBackward0",
            Shrink(_, true) => "SoftshrinkBackward0",
            Shrink(_, false) => "HardshrinkBackward0",
            LeakyRelu(_) => "LeakyReluBackward0",
            Elu(..) => "EluBackward0",
            Celu(_) => "CeluBackward0",
            Gelu(_) => "GeluBackward0",
            Softplus(..) => "SoftplusBackward0",
            NanToNum(..) => "NanToNumBackward0",
            Polygamma(_) => "PolygammaBackward0",
            Mvlgamma(_) => "MvlgammaBackward0",
            _ => unreachable!("every parameterless op is in the registry"),
        }
    }

    /// Ops with a bool result.
    pub fn is_predicate(self) -> bool {
        use UnaryOp::*;
        matches!(self, LogicalNot | IsNan | IsInf | IsPosInf | IsNegInf | IsFinite | Signbit)
    }

    /// The name PyTorch's kernel gives in dtype errors (`"erfcx_cpu" not
    /// implemented for 'Half'`): the aten name without `special_`.
    pub fn kernel_name(self) -> &'static str {
        let name = self.name();
        name.strip_prefix("special_").unwrap_or(name)
    }

    /// Whether PyTorch's CPU kernel takes float16/bfloat16 inputs (the Bessel,
    /// Airy and normal-distribution functions have float32/float64 kernels only).
    pub fn has_reduced_float_kernel(self) -> bool {
        use UnaryOp::*;
        !matches!(
            self,
            Erfcx | Ndtri | LogNdtr | BesselJ0 | BesselJ1 | BesselY0 | BesselY1 | ModifiedBesselI0 | ModifiedBesselI1
                | ModifiedBesselK0 | ModifiedBesselK1 | ScaledModifiedBesselK0 | ScaledModifiedBesselK1 | SphericalBesselJ0
                | AiryAi
        )
    }

    /// Does PyTorch record a derivative for the op (on a floating result)?
    pub fn is_differentiable(self) -> bool {
        self.node_name() != "NotDifferentiable"
    }

    /// Ops that keep integer dtypes (the others compute integers in the default
    /// float dtype or refuse them).
    pub fn keeps_int(self) -> bool {
        use UnaryOp::*;
        matches!(self, Neg | Abs | Relu | Sign | Sgn | Floor | Ceil | Round | RoundDecimals(_) | Trunc | Hardtanh(..) | BitwiseNot | NanToNum(..))
    }


    /// Ops PyTorch refuses for integer inputs.
    pub fn float_only(self) -> bool {
        use UnaryOp::*;
        matches!(self, Frac | Shrink(..) | LeakyRelu(_) | Elu(..) | Celu(_) | Gelu(_) | Silu | Mish | Softplus(..) | Hardsigmoid | Hardswish | LogSigmoid)
    }
}

/// An elementwise op of three operands of one dtype (`where`, whose
/// condition is bool, is [`Backend::select`](crate::backend::Backend::select)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TernaryOp {
    /// `a * b + c` with one rounding (float32/float64): the `vec::fmadd`
    /// PyTorch's vectorised `lerp` and `addcmul` kernels use.
    MulAdd,
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
    /// Product of every element of a floating tensor (all dims reduced,
    /// one output) in the order of PyTorch's full reduction: dims in its
    /// iterator's order (by input stride, size-1 dims and mergeable
    /// neighbours coalesced), the innermost runs folded as [`Prod`](Self::Prod)
    /// folds a contiguous run. Which order is taken decides where a float32
    /// product overflows or underflows although the exact product is finite.
    ProdAll,
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
