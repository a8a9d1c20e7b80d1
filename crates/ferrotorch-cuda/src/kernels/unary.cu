// Elementwise unary ops of the op vocabulary (UnaryOp) on dtype T, computed
// in FtTraits<T>::nat (float for float16/bfloat16). Entry points:
// unary_<name>(out layout, out, x layout, x, n, p0, p1, p2), where p0..p2
// carry the op's parameters. Predicates write bool. The Rust side
// (kernels::unary_entry) lists which op runs under which dtype.

typedef typename FtTraits<T>::nat A;

#define FT_UNARY(NAME, EXPR)                                                            \
    extern "C" __global__ void unary_##NAME(FtLayout ol, T* o, FtLayout xl, const T* xp, i64 n, \
                                            double p0, double p1, double p2) {          \
        FT_LOOP(i, n) {                                                                 \
            const A x = FtTraits<T>::load(xp + ft_offset(xl, i));                       \
            FtTraits<T>::store(o + ft_offset(ol, i), (A)(EXPR));                        \
        }                                                                               \
    }
#define FT_PRED(NAME, EXPR)                                                             \
    extern "C" __global__ void unary_##NAME(FtLayout ol, ft_bool* o, FtLayout xl, const T* xp, i64 n, \
                                            double p0, double p1, double p2) {          \
        FT_LOOP(i, n) {                                                                 \
            const A x = FtTraits<T>::load(xp + ft_offset(xl, i));                       \
            FtTraits<ft_bool>::store(o + ft_offset(ol, i), (bool)(EXPR));               \
        }                                                                               \
    }

FT_PRED(logical_not, !(x != (A)0))

#if FT_BOOL
FT_UNARY(bitwise_not, !x)
FT_UNARY(abs, x)
FT_PRED(isnan, false)
FT_PRED(isinf, false)
FT_PRED(isposinf, false)
FT_PRED(isneginf, false)
FT_PRED(isfinite, true)
FT_PRED(signbit, false)
#endif

#if FT_INT
FT_UNARY(neg, (A)(0ull - (u64)x))
FT_UNARY(abs, x < (A)0 ? (A)(0ull - (u64)x) : x)
FT_UNARY(relu, x > (A)0 ? x : (A)0)
FT_UNARY(sign, (A)((x > (A)0) - (x < (A)0)))
FT_UNARY(sgn, (A)((x > (A)0) - (x < (A)0)))
FT_UNARY(floor, x)
FT_UNARY(ceil, x)
FT_UNARY(round, x)
FT_UNARY(trunc, x)
FT_UNARY(bitwise_not, ~x)
FT_UNARY(hardtanh, x < (A)p0 ? (A)p0 : (x > (A)p1 ? (A)p1 : x))
FT_UNARY(nan_to_num, x)
FT_PRED(isnan, false)
FT_PRED(isinf, false)
FT_PRED(isposinf, false)
FT_PRED(isneginf, false)
FT_PRED(isfinite, true)
FT_PRED(signbit, x < (A)0)
#endif

#if FT_FLOAT
__device__ __forceinline__ A ft_sigmoid(A x) { return (A)1 / ((A)1 + ft_exp(-x)); }
__device__ __forceinline__ A ft_softplus(A x, A beta, A threshold) {
    return x * beta > threshold ? x : ft_log1p(ft_exp(x * beta)) / beta;
}
__device__ __forceinline__ A ft_gelu(A x, bool tanh_approx) {
    if (tanh_approx) {
        const A k = (A)0.7978845608028654, c = (A)0.044715;
        return (A)0.5 * x * ((A)1 + ft_tanh(k * (x + c * x * x * x)));
    }
    return (A)0.5 * x * ((A)1 + ft_erf(x * (A)0.7071067811865476));
}
__device__ __forceinline__ A ft_nan_to_num(A x, A nan, A posinf, A neginf) {
    if (x != x) return nan;
    if (x == (A)1 / (A)0) return posinf;
    if (x == -(A)1 / (A)0) return neginf;
    return x;
}
FT_UNARY(neg, -x)
FT_UNARY(abs, ft_abs(x))
FT_UNARY(exp, ft_exp(x))
FT_UNARY(log, ft_log(x))
FT_UNARY(sqrt, ft_sqrt(x))
FT_UNARY(tanh, ft_tanh(x))
FT_UNARY(sigmoid, ft_sigmoid(x))
FT_UNARY(relu, x <= (A)0 ? (A)0 : x)
FT_UNARY(sign, (A)((x > (A)0) - (x < (A)0)))
FT_UNARY(sgn, (A)((x > (A)0) - (x < (A)0)))
FT_UNARY(rsqrt, ft_rsqrt(x))
FT_UNARY(exp2, ft_exp2(x))
FT_UNARY(expm1, ft_expm1(x))
FT_UNARY(log2, ft_log2(x))
FT_UNARY(log10, ft_log10(x))
FT_UNARY(log1p, ft_log1p(x))
FT_UNARY(sin, ft_sin(x))
FT_UNARY(cos, ft_cos(x))
FT_UNARY(tan, ft_tan(x))
FT_UNARY(asin, ft_asin(x))
FT_UNARY(acos, ft_acos(x))
FT_UNARY(atan, ft_atan(x))
FT_UNARY(sinh, ft_sinh(x))
FT_UNARY(cosh, ft_cosh(x))
FT_UNARY(asinh, ft_asinh(x))
FT_UNARY(acosh, ft_acosh(x))
FT_UNARY(atanh, ft_atanh(x))
FT_UNARY(erf, ft_erf(x))
FT_UNARY(erfc, ft_erfc(x))
FT_UNARY(erfinv, ft_erfinv(x))
FT_UNARY(floor, ft_floor(x))
FT_UNARY(ceil, ft_ceil(x))
FT_UNARY(round, ft_rint(x))
FT_UNARY(trunc, ft_trunc(x))
FT_UNARY(frac, x - ft_trunc(x))
FT_UNARY(reciprocal, (A)1 / x)
FT_UNARY(silu, x / ((A)1 + ft_exp(-x)))
FT_UNARY(mish, x * ft_tanh(ft_softplus(x, (A)1, (A)20)))
FT_UNARY(hardsigmoid, ft_fmin(ft_fmax(x + (A)3, (A)0), (A)6) / (A)6)
FT_UNARY(hardswish, x * ft_fmin(ft_fmax(x + (A)3, (A)0), (A)6) / (A)6)
FT_UNARY(log_sigmoid, ft_fmin(x, (A)0) - ft_log1p(ft_exp(-ft_abs(x))))
FT_UNARY(lgamma, ft_lgamma(x))
FT_UNARY(i0, ft_i0(x))
FT_UNARY(special_i1, ft_i1(x))
FT_UNARY(sinc, x == (A)0 ? (A)1 : ft_sin((A)3.141592653589793 * x) / ((A)3.141592653589793 * x))
FT_UNARY(deg2rad, x * (A)0.017453292519943295)
FT_UNARY(rad2deg, x * (A)57.29577951308232)
// angle of a real number: pi for negatives, NaN stays NaN, 0 otherwise.
FT_UNARY(angle, x < (A)0 ? (A)3.141592653589793 : (x != x ? x : (A)0))
FT_UNARY(special_erfcx, ft_erfcx(x))
FT_UNARY(special_ndtri, ft_ndtri(x))
FT_UNARY(special_bessel_j0, ft_j0(x))
FT_UNARY(special_bessel_j1, ft_j1(x))
FT_UNARY(special_bessel_y0, ft_y0(x))
FT_UNARY(special_bessel_y1, ft_y1(x))
FT_UNARY(hardtanh, x < (A)p0 ? (A)p0 : (x > (A)p1 ? (A)p1 : x))
FT_UNARY(leaky_relu, x > (A)0 ? x : x * (A)p0)
FT_UNARY(elu, x > (A)0 ? (A)p1 * x : (A)p1 * (A)p0 * ft_expm1(x * (A)p2))
FT_UNARY(celu, ft_fmax((A)0, x) + ft_fmin((A)0, (A)p0 * ft_expm1(x / (A)p0)))
FT_UNARY(gelu, ft_gelu(x, p0 != 0.0))
FT_UNARY(softplus, ft_softplus(x, (A)p0, (A)p1))
FT_UNARY(softshrink, x > (A)p0 ? x - (A)p0 : (x < -(A)p0 ? x + (A)p0 : (A)0))
FT_UNARY(hardshrink, (x >= -(A)p0 && x <= (A)p0) ? (A)0 : x)
FT_UNARY(nan_to_num, ft_nan_to_num(x, (A)p0, (A)p1, (A)p2))
FT_PRED(isnan, x != x)
FT_PRED(isinf, x == (A)1 / (A)0 || x == -(A)1 / (A)0)
FT_PRED(isposinf, x == (A)1 / (A)0)
FT_PRED(isneginf, x == -(A)1 / (A)0)
FT_PRED(isfinite, x == x && x != (A)1 / (A)0 && x != -(A)1 / (A)0)
FT_PRED(signbit, ft_copysign((A)1, x) < (A)0)
#endif
