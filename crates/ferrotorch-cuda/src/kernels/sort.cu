// Per-row order statistics (sort, topk, kthvalue, median, mode) by a
// bitonic sort of (key, index) pairs in a workspace of rows x npow2 entries
// (npow2 the row length rounded up to a power of two), one launch per
// network step, then a pick kernel that writes the selected positions.
//
// The network orders pairs totally: keys first (NaN largest, as PyTorch),
// then original indices, so equal keys keep their order and the result is
// that of a stable sort. Padding entries carry indices >= n and sort last.
// A row of x is (outer o, inner in): element j at o*n*inner + j*inner + in.

typedef typename FtTraits<T>::nat A;

__device__ __forceinline__ bool ft_isnan_a(A v) { return v != v; }

// Whether pair a goes before pair b in the final order.
__device__ __forceinline__ bool ft_before(A ka, i64 ia, A kb, i64 ib, i64 n, int descending) {
    const bool pa = ia >= n, pb = ib >= n;
    if (pa != pb) return pb;
    if (!pa) {
        const bool na = ft_isnan_a(ka), nb = ft_isnan_a(kb);
        if (na != nb) return descending ? na : nb;
        if (!na && ka != kb) return descending ? ka > kb : ka < kb;
    }
    return ia < ib;
}

extern "C" __global__ void sort_load(const T* x, A* keys, i64* idx, i64 rows, i64 n, i64 inner, i64 npow2) {
    FT_LOOP(i, rows * npow2) {
        const i64 r = i / npow2, j = i % npow2;
        idx[i] = j;
        if (j < n) keys[i] = FtTraits<T>::load(x + (r / inner) * n * inner + j * inner + r % inner);
        else keys[i] = 0;
    }
}

// One step (k, j) of the bitonic network over every row: pair (i, i + j)
// with bit j of i clear, ascending where bit k of i is clear.
extern "C" __global__ void sort_step(A* keys, i64* idx, i64 rows, i64 n, i64 npow2, i64 k, i64 j, int descending) {
    const i64 half = npow2 / 2;
    FT_LOOP(t, rows * half) {
        const i64 r = t / half, p = t % half;
        const i64 i = (p / j) * 2 * j + p % j, l = i + j;
        A* kr = keys + r * npow2;
        i64* ir = idx + r * npow2;
        const bool up = (i & k) == 0;
        const bool swap = up ? ft_before(kr[l], ir[l], kr[i], ir[i], n, descending)
                             : ft_before(kr[i], ir[i], kr[l], ir[l], n, descending);
        if (swap) {
            const A tk = kr[i];
            kr[i] = kr[l];
            kr[l] = tk;
            const i64 ti = ir[i];
            ir[i] = ir[l];
            ir[l] = ti;
        }
    }
}

// Positions [first, first + count) of each sorted row into values/indices
// (x's shape with dim of size count). `mode`: 0 plain, 1 median (the first
// NaN when the row has one, else position first).
extern "C" __global__ void sort_pick(const A* keys, const i64* idx, T* values, i64* indices, i64 rows, i64 n,
                                     i64 inner, i64 npow2, i64 first, i64 count, int mode) {
    FT_LOOP(t, rows * count) {
        const i64 r = t / count, c = t % count;
        const A* kr = keys + r * npow2;
        i64 at = first + c;
        if (mode == 1 && n > 0 && ft_isnan_a(kr[n - 1])) {
            // NaNs sort last and contiguous: find the first.
            i64 lo = 0, hi = n - 1;
            while (lo < hi) {
                const i64 mid = (lo + hi) / 2;
                if (ft_isnan_a(kr[mid])) hi = mid;
                else lo = mid + 1;
            }
            at = lo;
        }
        const i64 o = (r / inner) * count * inner + c * inner + r % inner;
        FtTraits<T>::store(values + o, kr[at]);
        indices[o] = idx[r * npow2 + at];
    }
}

// The most frequent value of each ascending-sorted row (the smallest on
// ties; NaNs never equal) and its last index.
extern "C" __global__ void sort_mode(const A* keys, const i64* idx, T* values, i64* indices, i64 rows, i64 n, i64 inner,
                                     i64 npow2) {
    FT_LOOP(r, rows) {
        const A* kr = keys + r * npow2;
        const i64* ir = idx + r * npow2;
        i64 best = 0, best_len = 0, at = 0;
        i64 start = 0;
        for (i64 j = 1; j <= n; ++j) {
            if (j == n || !(kr[j] == kr[start])) {
                const i64 len = j - start;
                if (len > best_len) {
                    best_len = len;
                    best = start;
                    // The run is in index order: its last entry has the largest index.
                    at = ir[j - 1];
                }
                start = j;
            }
        }
        const i64 o = (r / inner) * inner + r % inner;
        FtTraits<T>::store(values + o, kr[best]);
        indices[o] = at;
    }
}
