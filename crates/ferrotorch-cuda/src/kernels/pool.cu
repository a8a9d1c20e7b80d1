// Max, average and adaptive poolings over contiguous (planes, D, H, W)
// operands (1-d and 2-d poolings have leading unit dims), and their
// backwards. Values are compared and summed in A (float for the 16-bit
// floats). Indices are flat positions d*H*W + h*W + w within a plane.
//
// The forwards run one thread per output. The backwards run one thread per
// input element and gather from the outputs whose windows contain it, so they
// need no atomics and give the same bits on every run.

typedef typename FtTraits<T>::nat A;

// Window geometry by value (ferrotorch_core::op::pool::PoolGeom).
struct FtPoolGeom {
    i64 in[3];
    i64 out[3];
    i64 k[3];
    i64 s[3];
    i64 p[3];
    i64 d[3];
};

__device__ __forceinline__ A ft_pool_lowest() { return -(A)1 / (A)0; }

// Splits a flat index within `n[0] x n[1] x n[2]` planes into (plane, d, h, w).
__device__ __forceinline__ void ft_split(i64 i, const i64* n, i64& pl, i64& a, i64& b, i64& c) {
    c = i % n[2];
    i /= n[2];
    b = i % n[1];
    i /= n[1];
    a = i % n[0];
    pl = i / n[0];
}

// First tap and end (exclusive) of max window `o` along dim `j`: taps before
// the input are skipped a dilation at a time.
__device__ __forceinline__ void ft_max_span(const FtPoolGeom& g, int j, i64 o, i64& lo, i64& hi) {
    lo = o * g.s[j] - g.p[j];
    hi = lo + (g.k[j] - 1) * g.d[j] + 1;
    if (hi > g.in[j]) hi = g.in[j];
    while (lo < 0) lo += g.d[j];
}

// A NaN wins a window (`v > best || isnan(v)`: the last NaN is taken); ties
// keep the first tap. A window no tap beats points at its first tap.
extern "C" __global__ void max_pool_fwd(const T* x, T* y, i64* ind, i64 planes, FtPoolGeom g) {
    const i64 ip = g.in[0] * g.in[1] * g.in[2], op = g.out[0] * g.out[1] * g.out[2];
    FT_LOOP(i, planes * op) {
        i64 pl, od, oh, ow;
        ft_split(i, g.out, pl, od, oh, ow);
        i64 d0, d1, h0, h1, w0, w1;
        ft_max_span(g, 0, od, d0, d1);
        ft_max_span(g, 1, oh, h0, h1);
        ft_max_span(g, 2, ow, w0, w1);
        const T* xp = x + pl * ip;
        A best = ft_pool_lowest();
        i64 at = (d0 * g.in[1] + h0) * g.in[2] + w0;
        for (i64 d = d0; d < d1; d += g.d[0])
            for (i64 h = h0; h < h1; h += g.d[1])
                for (i64 w = w0; w < w1; w += g.d[2]) {
                    const i64 k = (d * g.in[1] + h) * g.in[2] + w;
                    const A v = FtTraits<T>::load(xp + k);
                    if (v > best || v != v) {
                        best = v;
                        at = k;
                    }
                }
        FtTraits<T>::store(y + i, best);
        if (ind) ind[i] = at;
    }
}

// The outputs along dim `j` whose max windows may hold input position `x`:
// [lo, hi), PyTorch's phstart/phend.
__device__ __forceinline__ void ft_max_cover(const FtPoolGeom& g, int j, i64 x, i64& lo, i64& hi) {
    const i64 reach = (g.k[j] - 1) * g.d[j] + 1;
    lo = (x + g.p[j] < reach) ? 0 : (x + g.p[j] - reach) / g.s[j] + 1;
    hi = (x + g.p[j]) / g.s[j] + 1;
    if (hi > g.out[j]) hi = g.out[j];
}

// gx[x] = sum of g[o] over the outputs o that cover x and chose it.
extern "C" __global__ void max_pool_bwd(const T* gy, const i64* ind, T* gx, i64 planes, FtPoolGeom g) {
    const i64 ip = g.in[0] * g.in[1] * g.in[2], op = g.out[0] * g.out[1] * g.out[2];
    FT_LOOP(i, planes * ip) {
        i64 pl, a, b, c;
        ft_split(i, g.in, pl, a, b, c);
        const i64 k = i - pl * ip;
        i64 d0, d1, h0, h1, w0, w1;
        ft_max_cover(g, 0, a, d0, d1);
        ft_max_cover(g, 1, b, h0, h1);
        ft_max_cover(g, 2, c, w0, w1);
        A s = 0;
        for (i64 d = d0; d < d1; ++d)
            for (i64 h = h0; h < h1; ++h)
                for (i64 w = w0; w < w1; ++w) {
                    const i64 o = pl * op + (d * g.out[1] + h) * g.out[2] + w;
                    if (ind[o] == k) s += FtTraits<T>::load(gy + o);
                }
        FtTraits<T>::store(gx + i, s);
    }
}

// Average window `o` along dim `j`: clipped [lo, hi) and the extent clipped
// only to the padded input (PyTorch's divisor rules).
__device__ __forceinline__ void ft_avg_span(const FtPoolGeom& g, int j, i64 o, i64& lo, i64& hi, i64& padded) {
    lo = o * g.s[j] - g.p[j];
    hi = lo + g.k[j];
    if (hi > g.in[j] + g.p[j]) hi = g.in[j] + g.p[j];
    padded = hi > lo ? hi - lo : 0;
    if (lo < 0) lo = 0;
    if (hi > g.in[j]) hi = g.in[j];
}

__device__ __forceinline__ i64 ft_avg_divisor(const FtPoolGeom& g, i64 od, i64 oh, i64 ow, int count_include_pad,
                                              i64 divisor_override) {
    if (divisor_override) return divisor_override;
    i64 lo[3], hi[3], pad[3];
    ft_avg_span(g, 0, od, lo[0], hi[0], pad[0]);
    ft_avg_span(g, 1, oh, lo[1], hi[1], pad[1]);
    ft_avg_span(g, 2, ow, lo[2], hi[2], pad[2]);
    if (count_include_pad) return pad[0] * pad[1] * pad[2];
    i64 n = 1;
    for (int j = 0; j < 3; ++j) n *= hi[j] > lo[j] ? hi[j] - lo[j] : 0;
    return n;
}

// `divisor_override` 0 means none (the op layer rejects a zero override).
extern "C" __global__ void avg_pool_fwd(const T* x, T* y, i64 planes, FtPoolGeom g, int count_include_pad,
                                        i64 divisor_override) {
    const i64 ip = g.in[0] * g.in[1] * g.in[2], op = g.out[0] * g.out[1] * g.out[2];
    FT_LOOP(i, planes * op) {
        i64 pl, od, oh, ow;
        ft_split(i, g.out, pl, od, oh, ow);
        i64 d0, d1, h0, h1, w0, w1, pad;
        ft_avg_span(g, 0, od, d0, d1, pad);
        ft_avg_span(g, 1, oh, h0, h1, pad);
        ft_avg_span(g, 2, ow, w0, w1, pad);
        A s = 0;
        if (d0 < d1 && h0 < h1 && w0 < w1) {
            const T* xp = x + pl * ip;
            for (i64 d = d0; d < d1; ++d)
                for (i64 h = h0; h < h1; ++h)
                    for (i64 w = w0; w < w1; ++w) s += FtTraits<T>::load(xp + (d * g.in[1] + h) * g.in[2] + w);
            s = s / (A)ft_avg_divisor(g, od, oh, ow, count_include_pad, divisor_override);
        }
        FtTraits<T>::store(y + i, s);
    }
}

// The outputs along dim `j` whose average windows start at most at `x` and
// end after it: [lo, hi).
__device__ __forceinline__ void ft_avg_cover(const FtPoolGeom& g, int j, i64 x, i64& lo, i64& hi) {
    const i64 t = x + g.p[j] - g.k[j] + 1;
    lo = t <= 0 ? 0 : (t + g.s[j] - 1) / g.s[j];
    hi = (x + g.p[j]) / g.s[j] + 1;
    if (hi > g.out[j]) hi = g.out[j];
}

// gx[x] = sum over the windows holding x of g[o] / divisor(o), in A (as
// PyTorch's CUDA kernel; its CPU kernel rounds each term to T).
extern "C" __global__ void avg_pool_bwd(const T* gy, T* gx, i64 planes, FtPoolGeom g, int count_include_pad,
                                        i64 divisor_override) {
    const i64 ip = g.in[0] * g.in[1] * g.in[2], op = g.out[0] * g.out[1] * g.out[2];
    FT_LOOP(i, planes * ip) {
        i64 pl, a, b, c;
        ft_split(i, g.in, pl, a, b, c);
        i64 d0, d1, h0, h1, w0, w1;
        ft_avg_cover(g, 0, a, d0, d1);
        ft_avg_cover(g, 1, b, h0, h1);
        ft_avg_cover(g, 2, c, w0, w1);
        A s = 0;
        for (i64 d = d0; d < d1; ++d)
            for (i64 h = h0; h < h1; ++h)
                for (i64 w = w0; w < w1; ++w) {
                    const i64 o = pl * op + (d * g.out[1] + h) * g.out[2] + w;
                    s += FtTraits<T>::load(gy + o) / (A)ft_avg_divisor(g, d, h, w, count_include_pad, divisor_override);
                }
        FtTraits<T>::store(gx + i, s);
    }
}

// Adaptive window of output `o` of `n_out` over `n_in`: floor(o*n_in/n_out)
// to ceil((o+1)*n_in/n_out). The same formula with the extents swapped gives
// the outputs whose windows hold input `o`.
__device__ __forceinline__ void ft_adaptive_span(i64 o, i64 n_out, i64 n_in, i64& lo, i64& hi) {
    lo = o * n_in / n_out;
    hi = ((o + 1) * n_in + n_out - 1) / n_out;
}

// The adaptive windows of output (od, oh, ow) along the three dims.
__device__ __forceinline__ void ft_adaptive_windows(const FtPoolGeom& g, i64 od, i64 oh, i64 ow, i64* lo, i64* hi) {
    ft_adaptive_span(od, g.out[0], g.in[0], lo[0], hi[0]);
    ft_adaptive_span(oh, g.out[1], g.in[1], lo[1], hi[1]);
    ft_adaptive_span(ow, g.out[2], g.in[2], lo[2], hi[2]);
}

// The outputs whose adaptive windows hold input (a, b, c), per dim.
__device__ __forceinline__ void ft_adaptive_cover(const FtPoolGeom& g, i64 a, i64 b, i64 c, i64* lo, i64* hi) {
    ft_adaptive_span(a, g.in[0], g.out[0], lo[0], hi[0]);
    ft_adaptive_span(b, g.in[1], g.out[1], lo[1], hi[1]);
    ft_adaptive_span(c, g.in[2], g.out[2], lo[2], hi[2]);
}

// Extents travel in the geometry's `in`/`out` (the rest is unused).
extern "C" __global__ void adaptive_avg_fwd(const T* x, T* y, i64 planes, FtPoolGeom g) {
    const i64 ip = g.in[0] * g.in[1] * g.in[2], op = g.out[0] * g.out[1] * g.out[2];
    FT_LOOP(i, planes * op) {
        i64 pl, od, oh, ow;
        ft_split(i, g.out, pl, od, oh, ow);
        i64 lo[3], hi[3];
        ft_adaptive_windows(g, od, oh, ow, lo, hi);
        const i64 d0 = lo[0], d1 = hi[0], h0 = lo[1], h1 = hi[1], w0 = lo[2], w1 = hi[2];
        const T* xp = x + pl * ip;
        A s = 0;
        for (i64 d = d0; d < d1; ++d)
            for (i64 h = h0; h < h1; ++h)
                for (i64 w = w0; w < w1; ++w) s += FtTraits<T>::load(xp + (d * g.in[1] + h) * g.in[2] + w);
        FtTraits<T>::store(y + i, s / (A)(d1 - d0) / (A)(h1 - h0) / (A)(w1 - w0));
    }
}

extern "C" __global__ void adaptive_avg_bwd(const T* gy, T* gx, i64 planes, FtPoolGeom g) {
    const i64 ip = g.in[0] * g.in[1] * g.in[2], op = g.out[0] * g.out[1] * g.out[2];
    FT_LOOP(i, planes * ip) {
        i64 pl, a, b, c;
        ft_split(i, g.in, pl, a, b, c);
        i64 clo[3], chi[3];
        ft_adaptive_cover(g, a, b, c, clo, chi);
        const i64 od0 = clo[0], od1 = chi[0], oh0 = clo[1], oh1 = chi[1], ow0 = clo[2], ow1 = chi[2];
        A s = 0;
        for (i64 od = od0; od < od1; ++od)
            for (i64 oh = oh0; oh < oh1; ++oh)
                for (i64 ow = ow0; ow < ow1; ++ow) {
                    i64 lo[3], hi[3];
                    ft_adaptive_windows(g, od, oh, ow, lo, hi);
                    const i64 o = pl * op + (od * g.out[1] + oh) * g.out[2] + ow;
                    s += FtTraits<T>::load(gy + o) / (A)(hi[0] - lo[0]) / (A)(hi[1] - lo[1]) / (A)(hi[2] - lo[2]);
                }
        FtTraits<T>::store(gx + i, s);
    }
}

extern "C" __global__ void adaptive_max_fwd(const T* x, T* y, i64* ind, i64 planes, FtPoolGeom g) {
    const i64 ip = g.in[0] * g.in[1] * g.in[2], op = g.out[0] * g.out[1] * g.out[2];
    FT_LOOP(i, planes * op) {
        i64 pl, od, oh, ow;
        ft_split(i, g.out, pl, od, oh, ow);
        i64 lo[3], hi[3];
        ft_adaptive_windows(g, od, oh, ow, lo, hi);
        const i64 d0 = lo[0], d1 = hi[0], h0 = lo[1], h1 = hi[1], w0 = lo[2], w1 = hi[2];
        const T* xp = x + pl * ip;
        A best = ft_pool_lowest();
        i64 at = (d0 * g.in[1] + h0) * g.in[2] + w0;
        for (i64 d = d0; d < d1; ++d)
            for (i64 h = h0; h < h1; ++h)
                for (i64 w = w0; w < w1; ++w) {
                    const i64 k = (d * g.in[1] + h) * g.in[2] + w;
                    const A v = FtTraits<T>::load(xp + k);
                    if (v > best || v != v) {
                        best = v;
                        at = k;
                    }
                }
        FtTraits<T>::store(y + i, best);
        ind[i] = at;
    }
}

extern "C" __global__ void adaptive_max_bwd(const T* gy, const i64* ind, T* gx, i64 planes, FtPoolGeom g) {
    const i64 ip = g.in[0] * g.in[1] * g.in[2], op = g.out[0] * g.out[1] * g.out[2];
    FT_LOOP(i, planes * ip) {
        i64 pl, a, b, c;
        ft_split(i, g.in, pl, a, b, c);
        const i64 k = i - pl * ip;
        i64 clo[3], chi[3];
        ft_adaptive_cover(g, a, b, c, clo, chi);
        const i64 od0 = clo[0], od1 = chi[0], oh0 = clo[1], oh1 = chi[1], ow0 = clo[2], ow1 = chi[2];
        A s = 0;
        for (i64 od = od0; od < od1; ++od)
            for (i64 oh = oh0; oh < oh1; ++oh)
                for (i64 ow = ow0; ow < ow1; ++ow) {
                    const i64 o = pl * op + (od * g.out[1] + oh) * g.out[2] + ow;
                    if (ind[o] == k) s += FtTraits<T>::load(gy + o);
                }
        FtTraits<T>::store(gx + i, s);
    }
}
