// The data movement of a convolution done as GEMMs on cuBLAS: unfolding
// images into column matrices (vol2col), folding column matrices back into
// images (col2vol, the transposed convolution) and the bias. Every problem is
// 3-d: 1-d and 2-d convolutions have leading unit dims.
//
// A column matrix of one image is (channels * taps) x P, row-major, P the
// output positions; row c*taps + t holds tap t of channel c for every output.

// Geometry by value (ferrotorch_core::op::conv::ConvSpec seen in 3-d).
struct FtConvGeom {
    i64 in[3];
    i64 k[3];
    i64 out[3];
    i64 s[3];
    i64 p[3];
    i64 d[3];
};

// col[n] = vol2col(x[n]) for `images` images of `channels` channels; image n
// of x starts at n * x_step, its column matrix at n * col_step.
extern "C" __global__ void conv_vol2col(const T* x, T* col, i64 images, i64 channels, FtConvGeom g, i64 x_step,
                                        i64 col_step) {
    const i64 P = g.out[0] * g.out[1] * g.out[2];
    const i64 taps = g.k[0] * g.k[1] * g.k[2];
    const i64 plane = g.in[0] * g.in[1] * g.in[2];
    FT_LOOP(i, images * channels * taps * P) {
        const i64 p = i % P;
        const i64 r = i / P;
        const i64 t = r % taps;
        const i64 c = (r / taps) % channels;
        const i64 n = r / (taps * channels);
        const i64 ow = p % g.out[2], oh = (p / g.out[2]) % g.out[1], od = p / (g.out[2] * g.out[1]);
        const i64 kw = t % g.k[2], kh = (t / g.k[2]) % g.k[1], kd = t / (g.k[2] * g.k[1]);
        const i64 id = od * g.s[0] - g.p[0] + kd * g.d[0];
        const i64 ih = oh * g.s[1] - g.p[1] + kh * g.d[1];
        const i64 iw = ow * g.s[2] - g.p[2] + kw * g.d[2];
        T v;
        FtTraits<T>::store(&v, 0);
        if (id >= 0 && id < g.in[0] && ih >= 0 && ih < g.in[1] && iw >= 0 && iw < g.in[2])
            v = x[n * x_step + c * plane + (id * g.in[1] + ih) * g.in[2] + iw];
        col[n * col_step + (c * taps + t) * P + p] = v;
    }
}

// The taps along one dim that read input position `x` and the output they
// feed: o = (x + p - t*d) / s when that divides and lands inside the output.
__device__ __forceinline__ bool ft_conv_tap(const FtConvGeom& g, int j, i64 x, i64 t, i64& o) {
    const i64 num = x + g.p[j] - t * g.d[j];
    if (num < 0 || num % g.s[j] != 0) return false;
    o = num / g.s[j];
    return o < g.out[j];
}

// x[n] = col2vol(col[n]) (+ bias[c]): each input element sums the column
// entries of the taps that read it, in tap order (no atomics, deterministic).
// `bias` may be null.
extern "C" __global__ void conv_col2vol(const T* col, const T* bias, T* x, i64 images, i64 channels, FtConvGeom g,
                                        i64 x_step, i64 col_step) {
    typedef typename FtTraits<T>::nat A;
    const i64 P = g.out[0] * g.out[1] * g.out[2];
    const i64 taps = g.k[0] * g.k[1] * g.k[2];
    const i64 plane = g.in[0] * g.in[1] * g.in[2];
    FT_LOOP(i, images * channels * plane) {
        const i64 q = i % plane;
        const i64 c = (i / plane) % channels;
        const i64 n = i / (plane * channels);
        const i64 iw = q % g.in[2], ih = (q / g.in[2]) % g.in[1], id = q / (g.in[2] * g.in[1]);
        const T* cc = col + n * col_step + c * taps * P;
        A s = bias ? (A)FtTraits<T>::load(bias + c) : (A)0;
        for (i64 kd = 0; kd < g.k[0]; ++kd) {
            i64 od;
            if (!ft_conv_tap(g, 0, id, kd, od)) continue;
            for (i64 kh = 0; kh < g.k[1]; ++kh) {
                i64 oh;
                if (!ft_conv_tap(g, 1, ih, kh, oh)) continue;
                for (i64 kw = 0; kw < g.k[2]; ++kw) {
                    i64 ow;
                    if (!ft_conv_tap(g, 2, iw, kw, ow)) continue;
                    const i64 t = (kd * g.k[1] + kh) * g.k[2] + kw;
                    s += FtTraits<T>::load(cc + t * P + (od * g.out[1] + oh) * g.out[2] + ow);
                }
            }
        }
        FtTraits<T>::store(x + n * x_step + c * plane + q, s);
    }
}

// y[n, c, :] = bias[c] for `n_total` elements of (images, channels, plane):
// the start of a forward whose GEMM then accumulates.
extern "C" __global__ void conv_bias_fill(T* y, const T* bias, i64 n_total, i64 channels, i64 plane) {
    FT_LOOP(i, n_total) y[i] = bias[(i / plane) % channels];
}
