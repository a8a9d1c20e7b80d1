// Layer, batch and group norm forward and backward, and row moments. Layer
// norm runs over contiguous rows of `n` elements.
// Statistics, parameters and parameter gradients are in A (float for the
// 16-bit floats and float32, double for float64: the engine's
// norm_compute_dtype). One block per row for the row passes; one thread per
// column for the parameter gradients (summed over rows in order).

typedef typename FtTraits<T>::nat A;

struct FtSumA { __device__ __forceinline__ A operator()(A a, A b) const { return a + b; } };

// Block-wide mean and sum of squared deviations of a contiguous row, in two
// passes (no cancellation). Every thread of the block gets both.
__device__ __forceinline__ void ft_row_stats(const T* xr, i64 n, A& mean, A& sq) {
    A s = 0;
    for (i64 j = threadIdx.x; j < n; j += blockDim.x) s += FtTraits<T>::load(xr + j);
    mean = ft_block_reduce(s, FtSumA()) / (A)n;
    A q = 0;
    for (i64 j = threadIdx.x; j < n; j += blockDim.x) {
        const A d = FtTraits<T>::load(xr + j) - mean;
        q += d * d;
    }
    sq = ft_block_reduce(q, FtSumA());
}

// Two passes per row: the mean, then the squared deviations (no cancellation).
extern "C" __global__ void layer_norm_fwd(const T* x, const A* w, const A* b, T* out, A* mean, A* rstd, i64 rows, i64 n,
                                          double eps) {
    for (i64 r = blockIdx.x; r < rows; r += gridDim.x) {
        const T* xr = x + r * n;
        A m, q;
        ft_row_stats(xr, n, m, q);
        const A rs = ft_rsqrt(q / (A)n + (A)eps);
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

// ---- batch norm over the channels of an (N, C, S) input ----------------------
// One block per channel for the statistics and the backward (the channel's
// N blocks of S elements); the saved mean/invstd and the parameters are in A.
// The running statistics are 1-d, any stride, stored as T (`stats_t`) or as
// float32 (the parameters' dtype); with `stats_t` the batch statistics are
// rounded to T before they are used, as the CPU kernels do.

__device__ __forceinline__ A ft_stat_load(const void* p, i64 i, i64 stride, int stats_t) {
    return stats_t ? (A)FtTraits<T>::load((const T*)p + i * stride) : (A)((const float*)p)[i * stride];
}
__device__ __forceinline__ void ft_stat_store(void* p, i64 i, i64 stride, int stats_t, A v) {
    if (stats_t) FtTraits<T>::store((T*)p + i * stride, v);
    else ((float*)p)[i * stride] = (float)v;
}
__device__ __forceinline__ A ft_round_t(A v) {
    T r;
    FtTraits<T>::store(&r, v);
    return FtTraits<T>::load(&r);
}

// Training statistics: the batch mean and 1/sqrt(biased var + eps) into
// save_mean/save_invstd; the running statistics (null: none) move towards
// the mean and the unbiased variance by `momentum`.
extern "C" __global__ void batch_norm_stats(const T* x, i64 n, i64 c, i64 s, double eps, double momentum, void* rm,
                                            i64 rm_stride, void* rv, i64 rv_stride, int stats_t, A* save_mean,
                                            A* save_invstd) {
    const i64 cnt = n * s;
    for (i64 ch = blockIdx.x; ch < c; ch += gridDim.x) {
        A acc = 0;
        for (i64 j = threadIdx.x; j < cnt; j += blockDim.x) acc += FtTraits<T>::load(x + ((j / s) * c + ch) * s + j % s);
        const A m = ft_block_reduce(acc, FtSumA()) / (A)cnt;
        A q = 0;
        for (i64 j = threadIdx.x; j < cnt; j += blockDim.x) {
            const A d = FtTraits<T>::load(x + ((j / s) * c + ch) * s + j % s) - m;
            q += d * d;
        }
        q = ft_block_reduce(q, FtSumA());
        if (threadIdx.x == 0) {
            A inv = ft_rsqrt(q / (A)cnt + (A)eps);
            save_mean[ch] = stats_t ? ft_round_t(m) : m;
            save_invstd[ch] = stats_t ? ft_round_t(inv) : inv;
            const A mom = (A)momentum;
            if (rm) ft_stat_store(rm, ch, rm_stride, stats_t, ((A)1 - mom) * ft_stat_load(rm, ch, rm_stride, stats_t) + mom * m);
            if (rv) {
                const A unbiased = q / (A)(cnt - 1);
                ft_stat_store(rv, ch, rv_stride, stats_t, ((A)1 - mom) * ft_stat_load(rv, ch, rv_stride, stats_t) + mom * unbiased);
            }
        }
    }
}

// Evaluation: save_mean = running mean, save_invstd = 1/sqrt(running var + eps).
extern "C" __global__ void batch_norm_eval_stats(const void* rm, i64 rm_stride, const void* rv, i64 rv_stride,
                                                 int stats_t, i64 c, double eps, A* save_mean, A* save_invstd) {
    FT_LOOP(ch, c) {
        save_mean[ch] = ft_stat_load(rm, ch, rm_stride, stats_t);
        save_invstd[ch] = (A)(1.0 / sqrt((double)ft_stat_load(rv, ch, rv_stride, stats_t) + eps));
    }
}

// out = (x - mean[c]) * invstd[c] * w[c] + b[c] (w, b null: none).
extern "C" __global__ void batch_norm_apply(const T* x, const A* mean, const A* invstd, const A* w, const A* b, T* out,
                                            i64 total, i64 c, i64 s) {
    FT_LOOP(i, total) {
        const i64 ch = (i / s) % c;
        A y = (FtTraits<T>::load(x + i) - mean[ch]) * invstd[ch];
        if (w) y = y * w[ch];
        if (b) y = y + b[ch];
        FtTraits<T>::store(out + i, y);
    }
}

// Per channel: Σg and Σ(x - mean)g, then dw = Σ(x - mean)g * invstd, db = Σg
// and the input gradient (training: the batch statistics' own derivative
// included; evaluation: g * invstd * w). Any of gx, dw, db may be null.
extern "C" __global__ void batch_norm_bwd(const T* g, const T* x, const A* mean, const A* invstd, const A* w, T* gx, A* dw,
                                          A* db, i64 n, i64 c, i64 s, int training) {
    const i64 cnt = n * s;
    for (i64 ch = blockIdx.x; ch < c; ch += gridDim.x) {
        const A m = mean[ch], inv = invstd[ch];
        A s1 = 0, s2 = 0;
        for (i64 j = threadIdx.x; j < cnt; j += blockDim.x) {
            const i64 at = ((j / s) * c + ch) * s + j % s;
            const A gv = FtTraits<T>::load(g + at);
            s1 += gv;
            s2 += (FtTraits<T>::load(x + at) - m) * gv;
        }
        s1 = ft_block_reduce(s1, FtSumA());
        s2 = ft_block_reduce(s2, FtSumA());
        if (threadIdx.x == 0) {
            if (dw) dw[ch] = s2 * inv;
            if (db) db[ch] = s1;
        }
        if (!gx) continue;
        const A scale = inv * (w ? w[ch] : (A)1);
        const A k = s2 * inv * inv / (A)cnt, gm = s1 / (A)cnt;
        for (i64 j = threadIdx.x; j < cnt; j += blockDim.x) {
            const i64 at = ((j / s) * c + ch) * s + j % s;
            const A gv = FtTraits<T>::load(g + at);
            const A v = training ? (gv - gm - (FtTraits<T>::load(x + at) - m) * k) * scale : gv * scale;
            FtTraits<T>::store(gx + at, v);
        }
    }
}

// ---- group norm: rows of (C / G) * S consecutive elements --------------------
// Row r is sample r / G, group r % G; channel of element j of a row is
// (r % G) * cpg + j / s. With `round_t` the statistics are stored rounded to T
// (the parameters' dtype), after the output used the unrounded ones.

extern "C" __global__ void group_norm_fwd(const T* x, const A* w, const A* b, T* out, A* mean, A* rstd, i64 rows,
                                          i64 groups, i64 cpg, i64 s, double eps, int round_t) {
    const i64 len = cpg * s;
    for (i64 r = blockIdx.x; r < rows; r += gridDim.x) {
        const T* xr = x + r * len;
        A m, q;
        ft_row_stats(xr, len, m, q);
        const A rs = ft_rsqrt(q / (A)len + (A)eps);
        const i64 c0 = (r % groups) * cpg;
        for (i64 j = threadIdx.x; j < len; j += blockDim.x) {
            const i64 ch = c0 + j / s;
            A y = (FtTraits<T>::load(xr + j) - m) * rs;
            if (w) y = y * w[ch];
            if (b) y = y + b[ch];
            FtTraits<T>::store(out + r * len + j, y);
        }
        if (threadIdx.x == 0) {
            mean[r] = round_t ? ft_round_t(m) : m;
            rstd[r] = round_t ? ft_round_t(rs) : rs;
        }
    }
}

// dx = rstd * (dy*w - mean_j(dy*w) - xhat * mean_j(dy*w*xhat)), per row.
extern "C" __global__ void group_norm_bwd_input(const T* g, const T* x, const A* mean, const A* rstd, const A* w, T* gx,
                                                i64 rows, i64 groups, i64 cpg, i64 s) {
    const i64 len = cpg * s;
    for (i64 r = blockIdx.x; r < rows; r += gridDim.x) {
        const T* gr = g + r * len;
        const T* xr = x + r * len;
        const A m = mean[r], rs = rstd[r];
        const i64 c0 = (r % groups) * cpg;
        A s1 = 0, s2 = 0;
        for (i64 j = threadIdx.x; j < len; j += blockDim.x) {
            const A dy = FtTraits<T>::load(gr + j) * (w ? w[c0 + j / s] : (A)1);
            s1 += dy;
            s2 += dy * (FtTraits<T>::load(xr + j) - m) * rs;
        }
        s1 = ft_block_reduce(s1, FtSumA());
        s2 = ft_block_reduce(s2, FtSumA());
        for (i64 j = threadIdx.x; j < len; j += blockDim.x) {
            const A dy = FtTraits<T>::load(gr + j) * (w ? w[c0 + j / s] : (A)1);
            const A xh = (FtTraits<T>::load(xr + j) - m) * rs;
            FtTraits<T>::store(gx + r * len + j, rs / (A)len * ((A)len * dy - s1 - xh * s2));
        }
    }
}

// dw[c] = Σ_n Σ_s dy * xhat, db[c] = Σ_n Σ_s dy: one block per channel.
extern "C" __global__ void group_norm_bwd_params(const T* g, const T* x, const A* mean, const A* rstd, A* dw, A* db,
                                                 i64 n, i64 c, i64 groups, i64 s) {
    const i64 cpg = c / groups;
    for (i64 ch = blockIdx.x; ch < c; ch += gridDim.x) {
        A sw = 0, sb = 0;
        for (i64 j = threadIdx.x; j < n * s; j += blockDim.x) {
            const i64 smp = j / s, r = smp * groups + ch / cpg;
            const i64 at = (smp * c + ch) * s + j % s;
            const A dy = FtTraits<T>::load(g + at);
            sw += dy * (FtTraits<T>::load(x + at) - mean[r]) * rstd[r];
            sb += dy;
        }
        sw = ft_block_reduce(sw, FtSumA());
        sb = ft_block_reduce(sb, FtSumA());
        if (threadIdx.x == 0) {
            if (dw) dw[ch] = sw;
            if (db) db[ch] = sb;
        }
    }
}

// Mean and biased variance of each contiguous row (two passes).
extern "C" __global__ void row_moments(const T* x, A* mean, A* var, i64 rows, i64 n) {
    for (i64 r = blockIdx.x; r < rows; r += gridDim.x) {
        A m, q;
        ft_row_stats(x + r * n, n, m, q);
        if (threadIdx.x == 0) {
            mean[r] = m;
            var[r] = q / (A)n;
        }
    }
}
