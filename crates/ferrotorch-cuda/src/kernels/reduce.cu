// Reductions (ReduceKind) of a tensor of dtype T over some of its dims.
// Launch: one block per output element (grid-stride over outputs); each
// thread folds a strided share of the reduced elements, then the block
// combines the partial values with warp shuffles (ft_block_reduce).
// Geometry: `ox` walks the kept dims of x (its offset is x's), `oo` the same
// dims of the output, `ix` the reduced dims of x (offset 0). The result is
// written in the output dtype named by `code`.

typedef typename FtTraits<T>::nat A;
#if FT_FLOAT
typedef A SumT;
#else
typedef i64 SumT;
#endif
// Extremes are folded in A, widened to int below 32 bits (warp shuffles
// move 32- and 64-bit values only).
template <class V> struct FtWide { typedef V type; };
template <> struct FtWide<bool> { typedef int type; };
template <> struct FtWide<unsigned char> { typedef int type; };
template <> struct FtWide<signed char> { typedef int type; };
template <> struct FtWide<short> { typedef int type; };
typedef typename FtWide<A>::type ExtT;

template <class V> __device__ __forceinline__ V ft_lowest();
template <class V> __device__ __forceinline__ V ft_highest();
#define FT_LIMITS(V, LO, HI)                                                            \
    template <> __device__ __forceinline__ V ft_lowest<V>() { return LO; }             \
    template <> __device__ __forceinline__ V ft_highest<V>() { return HI; }
FT_LIMITS(bool, false, true)
FT_LIMITS(unsigned char, 0, 255)
FT_LIMITS(signed char, -128, 127)
FT_LIMITS(short, -32768, 32767)
FT_LIMITS(int, (-2147483647 - 1), 2147483647)
FT_LIMITS(i64, (-9223372036854775807ll - 1), 9223372036854775807ll)
FT_LIMITS(float, -1.0f / 0.0f, 1.0f / 0.0f)
FT_LIMITS(double, -1.0 / 0.0, 1.0 / 0.0)

struct FtAdd { template <class V> __device__ __forceinline__ V operator()(V a, V b) const { return a + b; } };
struct FtMul { template <class V> __device__ __forceinline__ V operator()(V a, V b) const { return a * b; } };
struct FtAnd { template <class V> __device__ __forceinline__ V operator()(V a, V b) const { return a & b; } };
struct FtOr { template <class V> __device__ __forceinline__ V operator()(V a, V b) const { return a | b; } };
// NaN-propagating extremes, as PyTorch's max/min.
struct FtMax {
    template <class V> __device__ __forceinline__ V operator()(V a, V b) const {
        return a != a ? a : (b != b ? b : (a > b ? a : b));
    }
};
struct FtMin {
    template <class V> __device__ __forceinline__ V operator()(V a, V b) const {
        return a != a ? a : (b != b ? b : (a < b ? a : b));
    }
};

template <class R, class Map, class Op>
__device__ __forceinline__ R ft_fold(const FtLayout& ix, const T* x, i64 n_in, R init, Map map, Op op) {
    R acc = init;
    for (i64 j = threadIdx.x; j < n_in; j += blockDim.x) acc = op(acc, map(FtTraits<T>::load(x + ft_offset(ix, j))));
    return ft_block_reduce(acc, op);
}

struct FtToSum { __device__ __forceinline__ SumT operator()(A v) const { return (SumT)v; } };
struct FtToExt { __device__ __forceinline__ ExtT operator()(A v) const { return (ExtT)v; } };
struct FtToFlag { __device__ __forceinline__ int operator()(A v) const { return v != (A)0 ? 1 : 0; } };
struct FtToCount { __device__ __forceinline__ i64 operator()(A v) const { return v != (A)0 ? 1 : 0; } };

#define FT_REDUCE_ENTRY(NAME, BODY)                                                     \
    extern "C" __global__ void reduce_##NAME(FtLayout ox, FtLayout oo, FtLayout ix, const T* x, void* out, \
                                             int code, i64 n_out, i64 n_in, double p) {  \
        for (i64 r = blockIdx.x; r < n_out; r += gridDim.x) {                           \
            const T* xr = x + ft_offset(ox, r);                                         \
            const i64 oo_off = ft_offset(oo, r);                                        \
            BODY                                                                        \
        }                                                                               \
    }

// `p` divides the sum (the mean's element count; 1 for a plain sum).
FT_REDUCE_ENTRY(sum, {
    SumT v = ft_fold(ix, xr, n_in, (SumT)0, FtToSum(), FtAdd());
    if (threadIdx.x == 0) {
        if (p != 1.0) v = (SumT)(v / (SumT)p);
        ft_store_as(out, oo_off, code, v);
    }
})
FT_REDUCE_ENTRY(prod, {
    SumT v = ft_fold(ix, xr, n_in, (SumT)1, FtToSum(), FtMul());
    if (threadIdx.x == 0) ft_store_as(out, oo_off, code, v);
})
FT_REDUCE_ENTRY(max, {
    ExtT v = ft_fold(ix, xr, n_in, ft_lowest<ExtT>(), FtToExt(), FtMax());
    if (threadIdx.x == 0) ft_store_as(out, oo_off, code, v);
})
FT_REDUCE_ENTRY(min, {
    ExtT v = ft_fold(ix, xr, n_in, (ExtT)ft_highest<A>(), FtToExt(), FtMin());
    if (threadIdx.x == 0) ft_store_as(out, oo_off, code, v);
})
FT_REDUCE_ENTRY(all, {
    int v = ft_fold(ix, xr, n_in, 1, FtToFlag(), FtAnd());
    if (threadIdx.x == 0) ft_store_as(out, oo_off, code, v);
})
FT_REDUCE_ENTRY(any, {
    int v = ft_fold(ix, xr, n_in, 0, FtToFlag(), FtOr());
    if (threadIdx.x == 0) ft_store_as(out, oo_off, code, v);
})
FT_REDUCE_ENTRY(count_nonzero, {
    i64 v = ft_fold(ix, xr, n_in, (i64)0, FtToCount(), FtAdd());
    if (threadIdx.x == 0) ft_store_as(out, oo_off, code, v);
})

#if FT_FLOAT
struct FtAbs { __device__ __forceinline__ A operator()(A v) const { return ft_abs(v); } };
struct FtSquare { __device__ __forceinline__ A operator()(A v) const { return v * v; } };
struct FtAbsPow {
    A p;
    __device__ __forceinline__ A operator()(A v) const { return ft_pow(ft_abs(v), p); }
};
struct FtExpShift {
    A m;
    __device__ __forceinline__ A operator()(A v) const { return ft_exp(v - m); }
};

// The p-norm over the reduced elements: `p` is the order (inf, -inf, 0, 1,
// 2 and the rest as PyTorch's norm).
FT_REDUCE_ENTRY(norm, {
    const A inf = (A)1 / (A)0;
    A v;
    if ((A)p == inf) v = ft_fold(ix, xr, n_in, (A)0, FtAbs(), FtMax());
    else if ((A)p == -inf) v = ft_fold(ix, xr, n_in, inf, FtAbs(), FtMin());
    else if (p == 0.0) v = (A)ft_fold(ix, xr, n_in, (i64)0, FtToCount(), FtAdd());
    else if (p == 1.0) v = ft_fold(ix, xr, n_in, (A)0, FtAbs(), FtAdd());
    else if (p == 2.0) v = ft_sqrt(ft_fold(ix, xr, n_in, (A)0, FtSquare(), FtAdd()));
    else {
        FtAbsPow f;
        f.p = (A)p;
        v = ft_pow(ft_fold(ix, xr, n_in, (A)0, f, FtAdd()), (A)1 / (A)p);
    }
    if (threadIdx.x == 0) ft_store_as(out, oo_off, code, v);
})

// log(sum(exp(x))) with the maximum shifted out; an infinite maximum is
// not shifted (so inf stays inf and all -inf gives -inf).
FT_REDUCE_ENTRY(logsumexp, {
    A m = ft_fold(ix, xr, n_in, ft_lowest<A>(), FtToExt(), FtMax());
    const A inf = (A)1 / (A)0;
    FtExpShift f;
    f.m = (m == inf || m == -inf) ? (A)0 : m;
    A s = ft_fold(ix, xr, n_in, (A)0, f, FtAdd());
    if (threadIdx.x == 0) ft_store_as(out, oo_off, code, ft_log(s) + f.m);
})
#endif

// ---- argmax / argmin: the first index of the extreme along the one reduced
// dim (a NaN counts as the extreme; its first index wins), and optionally the
// value. Pairs are combined lane by lane: shuffles move one scalar at a time.
struct FtArg {
    ExtT v;
    i64 i;
};
// Whether `a` beats `b` for max (`is_max`) or min; ties go to the lower index.
__device__ __forceinline__ bool ft_arg_better(ExtT av, i64 ai, ExtT bv, i64 bi, bool is_max) {
    if (bi < 0) return ai >= 0;
    if (ai < 0) return false;
    bool an = av != av, bn = bv != bv;
    if (an || bn) return an && (!bn || ai < bi);
    if (av == bv) return ai < bi;
    return is_max ? av > bv : av < bv;
}
__device__ __forceinline__ FtArg ft_block_arg(FtArg a, bool is_max) {
    __shared__ ExtT sv[32];
    __shared__ i64 si[32];
    const unsigned full = 0xffffffffu;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        ExtT ov = __shfl_down_sync(full, a.v, o);
        i64 oi = __shfl_down_sync(full, a.i, o);
        if (ft_arg_better(ov, oi, a.v, a.i, is_max)) { a.v = ov; a.i = oi; }
    }
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    int nwarps = (blockDim.x + 31) >> 5;
    __syncthreads();
    if (lane == 0) { sv[warp] = a.v; si[warp] = a.i; }
    __syncthreads();
    if (warp == 0) {
        FtArg w;
        w.v = lane < nwarps ? sv[lane] : sv[0];
        w.i = lane < nwarps ? si[lane] : -1;
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) {
            ExtT ov = __shfl_down_sync(full, w.v, o);
            i64 oi = __shfl_down_sync(full, w.i, o);
            if (ft_arg_better(ov, oi, w.v, w.i, is_max)) { w.v = ov; w.i = oi; }
        }
        if (lane == 0) { sv[0] = w.v; si[0] = w.i; }
    }
    __syncthreads();
    FtArg r;
    r.v = sv[0];
    r.i = si[0];
    __syncthreads();
    return r;
}
// `ov`/`oi`: the kept dims through values/indices; values may be null.
#define FT_ARG_ENTRY(NAME, IS_MAX)                                                      \
    extern "C" __global__ void reduce_##NAME(FtLayout ox, FtLayout ov, FtLayout oi, FtLayout ix, const T* x, \
                                             T* values, i64* indices, i64 n_out, i64 n_in) { \
        for (i64 r = blockIdx.x; r < n_out; r += gridDim.x) {                           \
            const T* xr = x + ft_offset(ox, r);                                         \
            FtArg a;                                                                    \
            a.v = (ExtT)0;                                                              \
            a.i = -1;                                                                   \
            for (i64 j = threadIdx.x; j < n_in; j += blockDim.x) {                      \
                ExtT v = (ExtT)FtTraits<T>::load(xr + ft_offset(ix, j));                \
                if (ft_arg_better(v, j, a.v, a.i, IS_MAX)) { a.v = v; a.i = j; }        \
            }                                                                           \
            a = ft_block_arg(a, IS_MAX);                                                \
            if (threadIdx.x == 0) {                                                     \
                indices[ft_offset(oi, r)] = a.i;                                        \
                if (values) FtTraits<T>::store(values + ft_offset(ov, r), (A)a.v);      \
            }                                                                           \
        }                                                                               \
    }
FT_ARG_ENTRY(argmax, true)
FT_ARG_ENTRY(argmin, false)

#if FT_FLOAT
// ---- variance (or standard deviation) with a correction, and the mean: two
// passes over each row (the mean, then the squared deviations from it), so
// large offsets do not cancel as a one-pass sum of squares would.
struct FtSqDev {
    A m;
    __device__ __forceinline__ A operator()(A v) const { return (v - m) * (v - m); }
};
struct FtId { __device__ __forceinline__ A operator()(A v) const { return v; } };
extern "C" __global__ void reduce_var_mean(FtLayout ox, FtLayout ov, FtLayout om, FtLayout ix, const T* x, T* var,
                                           T* mean, i64 n_out, i64 n_in, double correction, int take_sqrt) {
    for (i64 r = blockIdx.x; r < n_out; r += gridDim.x) {
        const T* xr = x + ft_offset(ox, r);
        A m = ft_fold(ix, xr, n_in, (A)0, FtId(), FtAdd()) / (A)n_in;
        FtSqDev f;
        f.m = m;
        A ss = ft_fold(ix, xr, n_in, (A)0, f, FtAdd());
        // PyTorch: a non-positive divisor gives inf (or NaN for 0/0).
        A d = (A)((double)n_in - correction);
        A v = d > (A)0 ? ss / d : ss / (A)0;
        if (take_sqrt) v = ft_sqrt(v);
        if (threadIdx.x == 0) {
            FtTraits<T>::store(var + ft_offset(ov, r), v);
            if (mean) FtTraits<T>::store(mean + ft_offset(om, r), m);
        }
    }
}
#endif
