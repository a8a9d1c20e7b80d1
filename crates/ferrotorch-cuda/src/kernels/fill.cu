// Fill every element of a strided tensor of dtype T with one value, given
// as the bit pattern of a T in the low bytes of `bits` (converted on the
// host with the engine's one scalar conversion rule).

extern "C" __global__ void fill(FtLayout dl, T* d, u64 bits, i64 n) {
    union { u64 b; T t; } u;
    u.b = bits;
    const T v = u.t;
    FT_LOOP(i, n) { d[ft_offset(dl, i)] = v; }
}

// Ranges (arange, linspace, logspace) into a fresh contiguous tensor: element
// `i` is computed in double (wrapping int64 for integer aranges), as
// `Sequence::value` on the host, then converted to T.
typedef typename FtTraits<T>::nat A;
template <class V> __device__ __forceinline__ void ft_store_value(T* d, V v) { FtTraits<T>::store(d, FtConv<A, V>::go(v)); }

extern "C" __global__ void seq_affine(T* d, i64 n, double start, double step) {
    FT_LOOP(i, n) { ft_store_value(d + i, start + (double)i * step); }
}
extern "C" __global__ void seq_affine_int(T* d, i64 n, i64 start, i64 step) {
    // Unsigned arithmetic wraps as the host's wrapping_add/wrapping_mul.
    FT_LOOP(i, n) { ft_store_value(d + i, (i64)((u64)start + (u64)i * (u64)step)); }
}
// PyTorch's symmetric linspace: the first half counts up from `start`, the
// rest down from `end`; `log` raises `base` to it (logspace).
extern "C" __global__ void seq_linspace(T* d, i64 n, double start, double end, double base, int log) {
    const double step = n > 1 ? (end - start) / (double)(n - 1) : 0.0;
    FT_LOOP(i, n) {
        double v = n == 1 ? start : (i < n / 2 ? start + step * (double)i : end - step * (double)(n - 1 - i));
        if (log) v = pow(base, v);
        ft_store_value(d + i, v);
    }
}
