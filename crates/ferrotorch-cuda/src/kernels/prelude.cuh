// ferrotorch CUDA prelude: element types, strided layouts and conversions
// shared by every kernel family. Self-contained: NVRTC compiles it with no
// system header. The Rust side puts `typedef <storage type> T;` and the
// FT_* dtype flags in front of it (see kernels/mod.rs).

typedef long long i64;
typedef unsigned long long u64;

// Most dims a kernel operand may have after coalescing (PyTorch's limit).
#define FT_MAX_DIMS 25

// A strided operand, passed to kernels by value (no per-launch upload).
// Dims are stored innermost first. The offset loop is not unrolled: the
// struct is still read in place from parameter memory (ld.param through a
// register address, no local copy), and a 25-fold unroll of every operand's
// loop made NVRTC seven times slower.
struct FtLayout {
    i64 sizes[FT_MAX_DIMS];
    i64 strides[FT_MAX_DIMS];
    i64 offset;
    int ndim;
    int pad_;
};

// Element offset of the i-th element in row-major order of the sizes.
__device__ __forceinline__ i64 ft_offset(const FtLayout& l, i64 i) {
    if (l.ndim == 1) return l.offset + i * l.strides[0];
    i64 off = l.offset;
#pragma unroll 1
    for (int k = 0; k < FT_MAX_DIMS; ++k) {
        if (k == l.ndim) break;
        i64 s = l.sizes[k];
        i64 q = i / s;
        off += (i - q * s) * l.strides[k];
        i = q;
    }
    return off;
}

// A grid-stride loop over n elements with 64-bit indices.
#define FT_LOOP(i, n) \
    for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += (i64)gridDim.x * blockDim.x)

// Storage types of the dtypes without a plain C type of their own.
struct ft_bool { unsigned char v; };
struct ft_half { unsigned short v; };
struct ft_bf16 { unsigned short v; };

union ft_fu { float f; unsigned int u; };
union ft_du { double d; u64 u; };

__device__ __forceinline__ float ft_half_to_float(unsigned short h) {
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
    return f;
}
__device__ __forceinline__ unsigned short ft_float_to_half(float f) {
    unsigned short h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
    return h;
}
__device__ __forceinline__ float ft_bf16_to_float(unsigned short b) {
    ft_fu c;
    c.u = ((unsigned int)b) << 16;
    return c.f;
}
// Round to nearest even; NaN stays a quiet NaN.
__device__ __forceinline__ unsigned short ft_float_to_bf16(float f) {
    ft_fu c;
    c.f = f;
    unsigned int u = c.u;
    if ((u & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((u >> 16) | 0x40u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (unsigned short)(u >> 16);
}

// Per storage type: the type values are computed in (`nat`; float for the
// 16-bit floats) and how to load and store one element.
template <class S> struct FtTraits;
#define FT_PLAIN_TRAITS(S)                                                              \
    template <> struct FtTraits<S> {                                                    \
        typedef S nat;                                                                  \
        static __device__ __forceinline__ nat load(const S* p) { return *p; }          \
        static __device__ __forceinline__ void store(S* p, nat v) { *p = v; }          \
    };
FT_PLAIN_TRAITS(unsigned char)
FT_PLAIN_TRAITS(signed char)
FT_PLAIN_TRAITS(short)
FT_PLAIN_TRAITS(int)
FT_PLAIN_TRAITS(i64)
FT_PLAIN_TRAITS(float)
FT_PLAIN_TRAITS(double)
template <> struct FtTraits<ft_bool> {
    typedef bool nat;
    static __device__ __forceinline__ bool load(const ft_bool* p) { return p->v != 0; }
    static __device__ __forceinline__ void store(ft_bool* p, bool v) { p->v = v ? 1 : 0; }
};
template <> struct FtTraits<ft_half> {
    typedef float nat;
    static __device__ __forceinline__ float load(const ft_half* p) { return ft_half_to_float(p->v); }
    static __device__ __forceinline__ void store(ft_half* p, float v) { p->v = ft_float_to_half(v); }
};
template <> struct FtTraits<ft_bf16> {
    typedef float nat;
    static __device__ __forceinline__ float load(const ft_bf16* p) { return ft_bf16_to_float(p->v); }
    static __device__ __forceinline__ void store(ft_bf16* p, float v) { p->v = ft_float_to_bf16(v); }
};

// Value conversion between computation types. Floats become narrow
// integers through int64, as PyTorch's static_cast_with_inter_type.
template <class D, class S> struct FtConv {
    static __device__ __forceinline__ D go(S v) { return (D)v; }
};
#define FT_INT_FROM_FLOAT(D)                                                            \
    template <> struct FtConv<D, float> {                                               \
        static __device__ __forceinline__ D go(float v) { return (D)(i64)v; }           \
    };                                                                                  \
    template <> struct FtConv<D, double> {                                              \
        static __device__ __forceinline__ D go(double v) { return (D)(i64)v; }          \
    };
FT_INT_FROM_FLOAT(unsigned char)
FT_INT_FROM_FLOAT(signed char)
FT_INT_FROM_FLOAT(short)
FT_INT_FROM_FLOAT(int)

// Dtype codes, in the order of ferrotorch's DType::ALL; reductions write
// their result dtype through them.
#define FT_CODE_BOOL 0
#define FT_CODE_UINT8 1
#define FT_CODE_INT8 2
#define FT_CODE_INT16 3
#define FT_CODE_INT32 4
#define FT_CODE_INT64 5
#define FT_CODE_FLOAT16 6
#define FT_CODE_BFLOAT16 7
#define FT_CODE_FLOAT32 8
#define FT_CODE_FLOAT64 9

template <class V> __device__ __forceinline__ void ft_store_as(void* base, i64 off, int code, V v) {
    switch (code) {
    case FT_CODE_BOOL: FtTraits<ft_bool>::store((ft_bool*)base + off, v != (V)0); break;
    case FT_CODE_UINT8: *((unsigned char*)base + off) = FtConv<unsigned char, V>::go(v); break;
    case FT_CODE_INT8: *((signed char*)base + off) = FtConv<signed char, V>::go(v); break;
    case FT_CODE_INT16: *((short*)base + off) = FtConv<short, V>::go(v); break;
    case FT_CODE_INT32: *((int*)base + off) = FtConv<int, V>::go(v); break;
    case FT_CODE_INT64: *((i64*)base + off) = (i64)v; break;
    case FT_CODE_FLOAT16: FtTraits<ft_half>::store((ft_half*)base + off, (float)v); break;
    case FT_CODE_BFLOAT16: FtTraits<ft_bf16>::store((ft_bf16*)base + off, (float)v); break;
    case FT_CODE_FLOAT32: *((float*)base + off) = (float)v; break;
    default: *((double*)base + off) = (double)v; break;
    }
}

// Float math under one name for float and double.
#define FT_MATH1(name, f32, f64)                                                        \
    __device__ __forceinline__ float ft_##name(float x) { return f32(x); }              \
    __device__ __forceinline__ double ft_##name(double x) { return f64(x); }
#define FT_MATH2(name, f32, f64)                                                        \
    __device__ __forceinline__ float ft_##name(float x, float y) { return f32(x, y); }  \
    __device__ __forceinline__ double ft_##name(double x, double y) { return f64(x, y); }
FT_MATH1(exp, expf, exp)
FT_MATH1(exp2, exp2f, exp2)
FT_MATH1(expm1, expm1f, expm1)
FT_MATH1(log, logf, log)
FT_MATH1(log2, log2f, log2)
FT_MATH1(log10, log10f, log10)
FT_MATH1(log1p, log1pf, log1p)
FT_MATH1(sqrt, sqrtf, sqrt)
FT_MATH1(rsqrt, rsqrtf, rsqrt)
FT_MATH1(abs, fabsf, fabs)
FT_MATH1(sin, sinf, sin)
FT_MATH1(cos, cosf, cos)
FT_MATH1(tan, tanf, tan)
FT_MATH1(asin, asinf, asin)
FT_MATH1(acos, acosf, acos)
FT_MATH1(atan, atanf, atan)
FT_MATH1(sinh, sinhf, sinh)
FT_MATH1(cosh, coshf, cosh)
FT_MATH1(tanh, tanhf, tanh)
FT_MATH1(asinh, asinhf, asinh)
FT_MATH1(acosh, acoshf, acosh)
FT_MATH1(atanh, atanhf, atanh)
FT_MATH1(erf, erff, erf)
FT_MATH1(erfc, erfcf, erfc)
FT_MATH1(erfinv, erfinvf, erfinv)
FT_MATH1(erfcx, erfcxf, erfcx)
FT_MATH1(ndtri, normcdfinvf, normcdfinv)
FT_MATH1(lgamma, lgammaf, lgamma)
FT_MATH1(floor, floorf, floor)
FT_MATH1(ceil, ceilf, ceil)
FT_MATH1(rint, rintf, rint)
FT_MATH1(trunc, truncf, trunc)
FT_MATH1(i0, cyl_bessel_i0f, cyl_bessel_i0)
FT_MATH1(i1, cyl_bessel_i1f, cyl_bessel_i1)
FT_MATH1(j0, j0f, j0)
FT_MATH1(j1, j1f, j1)
FT_MATH1(y0, y0f, y0)
FT_MATH1(y1, y1f, y1)
FT_MATH2(pow, powf, pow)
FT_MATH2(fmod, fmodf, fmod)
FT_MATH2(atan2, atan2f, atan2)
FT_MATH2(hypot, hypotf, hypot)
FT_MATH2(copysign, copysignf, copysign)
FT_MATH2(nextafter, nextafterf, nextafter)
FT_MATH2(fmax, fmaxf, fmax)
FT_MATH2(fmin, fminf, fmin)

__device__ __forceinline__ float ft_fma(float a, float b, float c) { return fmaf(a, b, c); }
__device__ __forceinline__ double ft_fma(double a, double b, double c) { return fma(a, b, c); }

// Block-wide reduction of one value per thread (blockDim.x a multiple of 32,
// at most 1024): warp shuffles, then one warp over the warps' results.
// Every thread gets the result. `op` combines two partial values.
template <class R, class Op> __device__ __forceinline__ R ft_block_reduce(R v, Op op) {
    __shared__ u64 ft_smem_raw[32];
    R* smem = (R*)ft_smem_raw;
    const unsigned full = 0xffffffffu;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v = op(v, __shfl_down_sync(full, v, o));
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    int nwarps = (blockDim.x + 31) >> 5;
    __syncthreads();
    if (lane == 0) smem[warp] = v;
    __syncthreads();
    if (warp == 0) {
        R w = lane < nwarps ? smem[lane] : smem[0];
        // Lanes past the warps' count repeat warp 0's value; `op` must be
        // insensitive to that, so they are masked out below instead.
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) {
            R other = __shfl_down_sync(full, w, o);
            if (lane + o < nwarps) w = op(w, other);
        }
        if (lane == 0) smem[0] = w;
    }
    __syncthreads();
    R r = smem[0];
    __syncthreads();
    return r;
}
