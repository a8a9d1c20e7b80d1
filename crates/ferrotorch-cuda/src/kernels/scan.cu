// Running folds along one dim (cumsum, cumprod, cummax, cummin). One thread
// per lane (an index of every other dim) walks its lane in order, so the
// result is the sequential fold PyTorch defines. `lx`/`lo` walk the lanes of
// x and of the output(s) (the scanned dim removed); `sx`/`so` step along it.

typedef typename FtTraits<T>::nat A;
#if FT_FLOAT
typedef A AccT;
#else
typedef i64 AccT;
#endif

// Sums and products accumulate in the computation type (int64 for integers
// and bool) and are written in the output dtype named by `code`.
#define FT_SCAN_ENTRY(NAME, INIT, STEP)                                                 \
    extern "C" __global__ void scan_##NAME(FtLayout lx, FtLayout lo, const T* x, void* out, int code, \
                                           i64 lanes, i64 len, i64 sx, i64 so) {        \
        FT_LOOP(l, lanes) {                                                             \
            const T* xl = x + ft_offset(lx, l);                                         \
            const i64 ol = ft_offset(lo, l);                                            \
            AccT acc = INIT;                                                            \
            for (i64 j = 0; j < len; ++j) {                                             \
                AccT v = (AccT)FtTraits<T>::load(xl + j * sx);                          \
                acc = STEP;                                                             \
                ft_store_as(out, ol + j * so, code, acc);                               \
            }                                                                           \
        }                                                                               \
    }
FT_SCAN_ENTRY(cumsum, (AccT)0, acc + v)
FT_SCAN_ENTRY(cumprod, (AccT)1, acc * v)

// cummax/cummin: the running extreme and the index it was last taken at
// (later ties win, as PyTorch's `>=`); once a NaN is seen it stays, each
// later NaN taking the index.
#define FT_SCAN_ARG_ENTRY(NAME, CMP)                                                    \
    extern "C" __global__ void scan_##NAME(FtLayout lx, FtLayout lv, FtLayout li, const T* x, T* values, \
                                           i64* indices, i64 lanes, i64 len, i64 sx, i64 sv, i64 si) { \
        FT_LOOP(l, lanes) {                                                             \
            const T* xl = x + ft_offset(lx, l);                                         \
            T* vl = values + ft_offset(lv, l);                                          \
            i64* il = indices + ft_offset(li, l);                                       \
            A best = (A)0;                                                              \
            i64 at = 0;                                                                 \
            for (i64 j = 0; j < len; ++j) {                                             \
                A v = FtTraits<T>::load(xl + j * sx);                                   \
                bool best_nan = best != best;                                           \
                if (j == 0 || v != v || (!best_nan && v CMP best)) {                  \
                    best = v;                                                           \
                    at = j;                                                             \
                }                                                                       \
                FtTraits<T>::store(vl + j * sv, best);                                  \
                il[j * si] = at;                                                        \
            }                                                                           \
        }                                                                               \
    }
FT_SCAN_ARG_ENTRY(cummax, >=)
FT_SCAN_ARG_ENTRY(cummin, <=)
