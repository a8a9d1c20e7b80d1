// Elementwise binary ops of the op vocabulary (BinaryOp) on compute dtype T:
// binary_<name>(out layout, out, a layout, a, b layout, b, n). Comparisons
// and logical ops write bool. add_scaled computes a + s * b with one
// rounding (add/sub with alpha). The Rust side (kernels::binary_entry)
// lists which op runs under which dtype.

typedef typename FtTraits<T>::nat A;

#define FT_BINARY_OUT(NAME, OUT, EXPR)                                                  \
    extern "C" __global__ void binary_##NAME(FtLayout ol, OUT* o, FtLayout al, const T* ap, \
                                             FtLayout bl, const T* bp, i64 n) {         \
        FT_LOOP(i, n) {                                                                 \
            const A a = FtTraits<T>::load(ap + ft_offset(al, i));                       \
            const A b = FtTraits<T>::load(bp + ft_offset(bl, i));                       \
            FtTraits<OUT>::store(o + ft_offset(ol, i), (typename FtTraits<OUT>::nat)(EXPR)); \
        }                                                                               \
    }
#define FT_BINARY(NAME, EXPR) FT_BINARY_OUT(NAME, T, EXPR)
#define FT_COMPARE(NAME, EXPR) FT_BINARY_OUT(NAME, ft_bool, EXPR)

FT_COMPARE(eq, a == b)
FT_COMPARE(ne, a != b)
FT_COMPARE(lt, a < b)
FT_COMPARE(le, a <= b)
FT_COMPARE(gt, a > b)
FT_COMPARE(ge, a >= b)
FT_COMPARE(logical_and, (a != (A)0) && (b != (A)0))
FT_COMPARE(logical_or, (a != (A)0) || (b != (A)0))
FT_COMPARE(logical_xor, (a != (A)0) != (b != (A)0))

#if FT_BOOL
FT_BINARY(add, a || b)
FT_BINARY(mul, a && b)
FT_BINARY(maximum, a || b)
FT_BINARY(minimum, a && b)
FT_BINARY(bitwise_and, a && b)
FT_BINARY(bitwise_or, a || b)
FT_BINARY(bitwise_xor, a != b)
#endif

#if FT_INT
// Wrapping arithmetic: through u64, so signed overflow is not undefined.
#define FT_WRAP(op) (A)((u64)(i64)a op (u64)(i64)b)
__device__ __forceinline__ A ft_idiv_trunc(A a, A b) {
    if (b == (A)0) return (A)-1;  // undefined in PyTorch's CUDA kernels too
    if (b == (A)-1) return (A)(0ull - (u64)(i64)a);
    return a / b;
}
__device__ __forceinline__ A ft_idiv_floor(A a, A b) {
    if (b == (A)0) return (A)-1;
    if (b == (A)-1) return (A)(0ull - (u64)(i64)a);
    A q = a / b, r = a % b;
    if (r != (A)0 && ((r < (A)0) != (b < (A)0))) q -= (A)1;
    return q;
}
__device__ __forceinline__ A ft_iremainder(A a, A b) {
    if (b == (A)0 || b == (A)-1) return (A)0;
    A r = a % b;
    if (r != (A)0 && ((r < (A)0) != (b < (A)0))) r += b;
    return r;
}
__device__ __forceinline__ A ft_ifmod(A a, A b) {
    if (b == (A)0 || b == (A)-1) return (A)0;
    return a % b;
}
__device__ __forceinline__ A ft_ipow(A base, A exp) {
    if (exp < (A)0) {
        if (base == (A)1) return (A)1;
        if (base == (A)-1) return (exp & (A)1) ? (A)-1 : (A)1;
        return (A)0;
    }
    u64 r = 1, b = (u64)(i64)base, e = (u64)(i64)exp;
    while (e) {
        if (e & 1ull) r *= b;
        b *= b;
        e >>= 1;
    }
    return (A)r;
}
// Shifts by the width or more (or by a negative amount) give 0, and -1 for a
// right shift of a negative value, as PyTorch.
__device__ __forceinline__ A ft_shl(A a, A b) {
    const i64 bits = 8 * (i64)sizeof(A);
    if ((i64)b < 0 || (i64)b >= bits) return (A)0;
    return (A)((u64)(i64)a << (int)b);
}
__device__ __forceinline__ A ft_shr(A a, A b) {
    const i64 bits = 8 * (i64)sizeof(A);
    if ((i64)b < 0 || (i64)b >= bits) return a < (A)0 ? (A)-1 : (A)0;
    return (A)(a >> (int)b);
}
__device__ __forceinline__ A ft_gcd(A a, A b) {
    u64 x = (i64)a < 0 ? 0ull - (u64)(i64)a : (u64)(i64)a;
    u64 y = (i64)b < 0 ? 0ull - (u64)(i64)b : (u64)(i64)b;
    while (y) {
        u64 t = x % y;
        x = y;
        y = t;
    }
    return (A)x;
}
__device__ __forceinline__ A ft_lcm(A a, A b) {
    A g = ft_gcd(a, b);
    if (g == (A)0) return (A)0;
    A l = (A)((u64)(i64)(a / g) * (u64)(i64)b);
    return l < (A)0 ? (A)(0ull - (u64)(i64)l) : l;
}
FT_BINARY(add, FT_WRAP(+))
FT_BINARY(sub, FT_WRAP(-))
FT_BINARY(mul, FT_WRAP(*))
FT_BINARY(maximum, a > b ? a : b)
FT_BINARY(minimum, a < b ? a : b)
FT_BINARY(pow, ft_ipow(a, b))
FT_BINARY(div_trunc, ft_idiv_trunc(a, b))
FT_BINARY(div_floor, ft_idiv_floor(a, b))
FT_BINARY(remainder, ft_iremainder(a, b))
FT_BINARY(fmod, ft_ifmod(a, b))
FT_BINARY(fmax, a > b ? a : b)
FT_BINARY(fmin, a < b ? a : b)
FT_BINARY(bitwise_and, a & b)
FT_BINARY(bitwise_or, a | b)
FT_BINARY(bitwise_xor, a ^ b)
FT_BINARY(bitwise_left_shift, ft_shl(a, b))
FT_BINARY(bitwise_right_shift, ft_shr(a, b))
FT_BINARY(gcd, ft_gcd(a, b))
FT_BINARY(lcm, ft_lcm(a, b))
#endif

#if FT_FLOAT
__device__ __forceinline__ A ft_div_floor(A a, A b) {
    if (b == (A)0) return a / b;
    A m = ft_fmod(a, b);
    A d = (a - m) / b;
    if (m != (A)0 && ((b < (A)0) != (m < (A)0))) d -= (A)1;
    A f;
    if (d != (A)0) {
        f = ft_floor(d);
        if (d - f > (A)0.5) f += (A)1;
    } else {
        f = ft_copysign((A)0, a / b);
    }
    return f;
}
__device__ __forceinline__ A ft_remainder(A a, A b) {
    A m = ft_fmod(a, b);
    if (m != (A)0 && ((b < (A)0) != (m < (A)0))) m += b;
    return m;
}
__device__ __forceinline__ A ft_maximum(A a, A b) { return (a != a || b != b) ? a + b : (a > b ? a : b); }
__device__ __forceinline__ A ft_minimum(A a, A b) { return (a != a || b != b) ? a + b : (a < b ? a : b); }
__device__ __forceinline__ A ft_logaddexp(A a, A b) {
    if (a == b && (a == (A)1 / (A)0 || a == -(A)1 / (A)0)) return a;
    A m = a > b ? a : b;
    return m + ft_log1p(ft_exp(-ft_abs(a - b)));
}
__device__ __forceinline__ A ft_logaddexp2(A a, A b) {
    if (a == b && (a == (A)1 / (A)0 || a == -(A)1 / (A)0)) return a;
    A m = a > b ? a : b;
    return m + ft_log1p(ft_exp2(-ft_abs(a - b))) * (A)1.4426950408889634;
}
__device__ __forceinline__ A ft_xlogy(A a, A b) {
    if (b != b) return b;
    if (a == (A)0) return (A)0;
    return a * ft_log(b);
}
__device__ __forceinline__ A ft_xlog1py(A a, A b) {
    if (b != b) return b;
    if (a == (A)0) return (A)0;
    return a * ft_log1p(b);
}
__device__ __forceinline__ A ft_heaviside(A a, A b) { return a == (A)0 ? b : (A)(a > (A)0); }
FT_BINARY(add, a + b)
FT_BINARY(sub, a - b)
FT_BINARY(mul, a * b)
FT_BINARY(div, a / b)
FT_BINARY(maximum, ft_maximum(a, b))
FT_BINARY(minimum, ft_minimum(a, b))
FT_BINARY(pow, ft_pow(a, b))
FT_BINARY(div_trunc, ft_trunc(a / b))
FT_BINARY(div_floor, ft_div_floor(a, b))
FT_BINARY(remainder, ft_remainder(a, b))
FT_BINARY(fmod, ft_fmod(a, b))
FT_BINARY(atan2, ft_atan2(a, b))
FT_BINARY(fmax, ft_fmax(a, b))
FT_BINARY(fmin, ft_fmin(a, b))
FT_BINARY(hypot, ft_hypot(a, b))
FT_BINARY(logaddexp, ft_logaddexp(a, b))
FT_BINARY(logaddexp2, ft_logaddexp2(a, b))
FT_BINARY(copysign, ft_copysign(a, b))
FT_BINARY(xlogy, ft_xlogy(a, b))
FT_BINARY(special_xlog1py, ft_xlog1py(a, b))
FT_BINARY(nextafter, ft_nextafter(a, b))
FT_BINARY(heaviside, ft_heaviside(a, b))

extern "C" __global__ void add_scaled(FtLayout ol, T* o, FtLayout al, const T* ap, FtLayout bl, const T* bp,
                                      i64 n, double s) {
    FT_LOOP(i, n) {
        const A a = FtTraits<T>::load(ap + ft_offset(al, i));
        const A b = FtTraits<T>::load(bp + ft_offset(bl, i));
        FtTraits<T>::store(o + ft_offset(ol, i), (A)(a + (A)s * b));
    }
}
#endif
