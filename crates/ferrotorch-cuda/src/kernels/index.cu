// Reads and writes at positions named by int64 index tensors (see
// ferrotorch_core::backend::index). Three steps: the storage offset of every
// position (`index_offsets_init`, then `index_offsets_term` per index
// operand, which also records the first out-of-range value), then the
// gather or the scatter over positions x block elements.

typedef typename FtTraits<T>::nat A;

extern "C" __global__ void index_offsets_init(FtLayout pos, i64* offs, i64 npos) {
    FT_LOOP(p, npos) { offs[p] = ft_offset(pos, p); }
}

// Adds `wrap(index[p]) * stride` to each offset. A value outside the range
// leaves its offset alone and lowers `first_bad` to `key_base + p`, so the
// host finds the first bad value of the first bad operand.
extern "C" __global__ void index_offsets_term(FtLayout il, const i64* idx, i64 npos, i64 size, int negative, i64 stride,
                                              i64* offs, u64* first_bad, u64 key_base) {
    FT_LOOP(p, npos) {
        i64 v = idx[ft_offset(il, p)];
        i64 w = (v < 0 && negative) ? v + size : v;
        if (w >= 0 && w < size) offs[p] += w * stride;
        else atomicMin(first_bad, key_base + (u64)p);
    }
}

extern "C" __global__ void index_gather(const i64* offs, FtLayout block, const T* src, FtLayout ol, T* out, i64 npos,
                                        i64 nblock) {
    FT_LOOP(e, npos * nblock) {
        i64 p = e / nblock, r = e - p * nblock;
        out[ft_offset(ol, e)] = src[offs[p] + ft_offset(block, r)];
    }
}

// Element bits <-> a machine word for compare-and-swap: 32- and 64-bit
// elements swap whole; narrower ones swap the aligned 32-bit word holding them.
template <int S> struct FtWord;
template <> struct FtWord<8> { typedef unsigned long long type; };
template <> struct FtWord<4> { typedef unsigned int type; };
template <> struct FtWord<2> { typedef unsigned int type; };
template <> struct FtWord<1> { typedef unsigned int type; };

template <class Op> __device__ __forceinline__ void ft_atomic_update(T* p, Op op) {
    typedef typename FtWord<sizeof(T)>::type W;
    const unsigned long long addr = (unsigned long long)p;
    W* word = (W*)(sizeof(T) >= 4 ? addr : addr & ~3ull);
    const int shift = sizeof(T) >= 4 ? 0 : (int)(addr & 3ull) * 8;
    const unsigned long long low = sizeof(T) >= 4 ? ~0ull : ((1ull << (8 * (sizeof(T) & 3))) - 1ull);
    const W mask = (W)(low << shift);
    W old = *word, assumed;
    do {
        assumed = old;
        union { W w; T t; } cur, next;
        cur.w = (assumed & mask) >> shift;
        FtTraits<T>::store(&next.t, op(FtTraits<T>::load(&cur.t)));
        const W bits = (next.w << shift) & mask;
        old = atomicCAS(word, assumed, (assumed & ~mask) | bits);
    } while (assumed != old);
}

// The IndexReduce modes, in A (float for 16-bit floats).
#define FT_MODE_ASSIGN 0
#define FT_MODE_ADD 1
#define FT_MODE_ADD_SCALED 2
#define FT_MODE_MUL 3
#define FT_MODE_MAX 4
#define FT_MODE_MIN 5
struct FtCombine {
    A v;
    int mode;
    double alpha;
    __device__ __forceinline__ A operator()(A cur) const {
        switch (mode) {
#if FT_BOOL
        case FT_MODE_ADD: return cur || v;
        case FT_MODE_MUL: return cur && v;
        case FT_MODE_MAX: return cur || v;
        case FT_MODE_MIN: return cur && v;
#else
        case FT_MODE_ADD: return cur + v;
#if FT_FLOAT
        case FT_MODE_ADD_SCALED: return ft_fma(v, (A)alpha, cur);
#endif
        case FT_MODE_MUL: return cur * v;
        case FT_MODE_MAX: return cur != cur ? cur : (v != v ? v : (v > cur ? v : cur));
        case FT_MODE_MIN: return cur != cur ? cur : (v != v ? v : (v < cur ? v : cur));
#endif
        default: return v;
        }
    }
};

// Assign writes directly (repeated positions: one of the values wins, as on
// PyTorch's CUDA); the other modes combine atomically.
extern "C" __global__ void index_scatter(const i64* offs, FtLayout block, T* dst, FtLayout vl, const T* vals, i64 npos,
                                         i64 nblock, int mode, double alpha) {
    FT_LOOP(e, npos * nblock) {
        i64 p = e / nblock, r = e - p * nblock;
        T* d = dst + offs[p] + ft_offset(block, r);
        const T* s = vals + ft_offset(vl, e);
        if (mode == FT_MODE_ASSIGN) {
            *d = *s;
        } else {
            FtCombine c;
            c.v = FtTraits<T>::load(s);
            c.mode = mode;
            c.alpha = alpha;
            ft_atomic_update(d, c);
        }
    }
}
