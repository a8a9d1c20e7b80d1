// Layer norm forward and backward over contiguous rows of `n` elements.
// Statistics, parameters and parameter gradients are in A (float for the
// 16-bit floats and float32, double for float64: the engine's
// norm_compute_dtype). One block per row for the row passes; one thread per
// column for the parameter gradients (summed over rows in order).

typedef typename FtTraits<T>::nat A;

struct FtSumA { __device__ __forceinline__ A operator()(A a, A b) const { return a + b; } };

// Two passes per row: the mean, then the squared deviations (no cancellation).
extern "C" __global__ void layer_norm_fwd(const T* x, const A* w, const A* b, T* out, A* mean, A* rstd, i64 rows, i64 n,
                                          double eps) {
    for (i64 r = blockIdx.x; r < rows; r += gridDim.x) {
        const T* xr = x + r * n;
        A s = 0;
        for (i64 j = threadIdx.x; j < n; j += blockDim.x) s += FtTraits<T>::load(xr + j);
        const A m = ft_block_reduce(s, FtSumA()) / (A)n;
        A q = 0;
        for (i64 j = threadIdx.x; j < n; j += blockDim.x) {
            A d = FtTraits<T>::load(xr + j) - m;
            q += d * d;
        }
        const A rs = ft_rsqrt(ft_block_reduce(q, FtSumA()) / (A)n + (A)eps);
        for (i64 j = threadIdx.x; j < n; j += blockDim.x) {
            A y = (FtTraits<T>::load(xr + j) - m) * rs;
            if (w) y = y * w[j];
            if (b) y = y + b[j];
            FtTraits<T>::store(out + r * n + j, y);
        }
        if (threadIdx.x == 0) {
            mean[r] = m;
            rstd[r] = rs;
        }
    }
}

// dx = rstd / n * (n * dy*w - Σ dy*w - xhat * Σ dy*w*xhat), per row.
extern "C" __global__ void layer_norm_bwd_input(const T* g, const T* x, const A* mean, const A* rstd, const A* w, T* gx,
                                                i64 rows, i64 n) {
    for (i64 r = blockIdx.x; r < rows; r += gridDim.x) {
        const T* gr = g + r * n;
        const T* xr = x + r * n;
        const A m = mean[r], rs = rstd[r];
        A s1 = 0, s2 = 0;
        for (i64 j = threadIdx.x; j < n; j += blockDim.x) {
            A dy = FtTraits<T>::load(gr + j) * (w ? w[j] : (A)1);
            s1 += dy;
            s2 += dy * (FtTraits<T>::load(xr + j) - m) * rs;
        }
        s1 = ft_block_reduce(s1, FtSumA());
        s2 = ft_block_reduce(s2, FtSumA());
        for (i64 j = threadIdx.x; j < n; j += blockDim.x) {
            A dy = FtTraits<T>::load(gr + j) * (w ? w[j] : (A)1);
            A xh = (FtTraits<T>::load(xr + j) - m) * rs;
            FtTraits<T>::store(gx + r * n + j, rs / (A)n * ((A)n * dy - s1 - xh * s2));
        }
    }
}

// dw[j] = Σ_r dy[r, j] * xhat[r, j], db[j] = Σ_r dy[r, j]; either may be null.
extern "C" __global__ void layer_norm_bwd_params(const T* g, const T* x, const A* mean, const A* rstd, A* dw, A* db,
                                                 i64 rows, i64 n) {
    FT_LOOP(j, n) {
        A sw = 0, sb = 0;
        for (i64 r = 0; r < rows; ++r) {
            A dy = FtTraits<T>::load(g + r * n + j);
            sw += dy * (FtTraits<T>::load(x + r * n + j) - mean[r]) * rstd[r];
            sb += dy;
        }
        if (dw) dw[j] = sw;
        if (db) db[j] = sb;
    }
}
