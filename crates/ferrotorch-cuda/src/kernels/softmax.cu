// softmax / log_softmax of dtype T along one dim, computed in float (double
// for float64). One block per row: `xl`/`ol` walk the rows (every dim but
// the softmax one), `xs`/`os` are the strides along the softmax dim, whose
// length is `len`. The max and the sum of exponentials are block reductions
// (warp shuffles).

typedef typename FtTraits<T>::nat A;

struct FtSmMax {
    __device__ __forceinline__ A operator()(A a, A b) const { return a != a ? a : (b != b ? b : (a > b ? a : b)); }
};
struct FtSmAdd {
    __device__ __forceinline__ A operator()(A a, A b) const { return a + b; }
};

extern "C" __global__ void softmax(FtLayout xl, const T* x, FtLayout ol, T* o, i64 rows, i64 len, i64 xs, i64 os,
                                   int log_softmax) {
    for (i64 r = blockIdx.x; r < rows; r += gridDim.x) {
        const T* xr = x + ft_offset(xl, r);
        T* orow = o + ft_offset(ol, r);
        A m = -(A)1 / (A)0;
        for (i64 j = threadIdx.x; j < len; j += blockDim.x) m = FtSmMax()(m, FtTraits<T>::load(xr + j * xs));
        m = ft_block_reduce(m, FtSmMax());
        const A shift = (m == (A)1 / (A)0 || m == -(A)1 / (A)0) ? (A)0 : m;
        A s = (A)0;
        for (i64 j = threadIdx.x; j < len; j += blockDim.x) s += ft_exp(FtTraits<T>::load(xr + j * xs) - shift);
        s = ft_block_reduce(s, FtSmAdd());
        if (log_softmax) {
            const A lse = ft_log(s) + shift;
            for (i64 j = threadIdx.x; j < len; j += blockDim.x)
                FtTraits<T>::store(orow + j * os, FtTraits<T>::load(xr + j * xs) - lse);
        } else {
            const A inv = (A)1 / s;
            for (i64 j = threadIdx.x; j < len; j += blockDim.x)
                FtTraits<T>::store(orow + j * os, ft_exp(FtTraits<T>::load(xr + j * xs) - shift) * inv);
        }
    }
}
