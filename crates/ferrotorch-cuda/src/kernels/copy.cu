// Strided copy and cast into a tensor of dtype T, one entry point per source
// dtype: copy_from_<source dtype>. Both layouts have the same sizes.

template <class D, class S>
__device__ __forceinline__ void ft_copy(FtLayout dl, D* d, FtLayout sl, const S* s, i64 n) {
    typedef typename FtTraits<D>::nat DN;
    typedef typename FtTraits<S>::nat SN;
    FT_LOOP(i, n) {
        SN v = FtTraits<S>::load(s + ft_offset(sl, i));
        FtTraits<D>::store(d + ft_offset(dl, i), FtConv<DN, SN>::go(v));
    }
}

#define FT_COPY_FROM(NAME, S)                                                           \
    extern "C" __global__ void copy_from_##NAME(FtLayout dl, T* d, FtLayout sl, const S* s, i64 n) { \
        ft_copy<T, S>(dl, d, sl, s, n);                                                 \
    }
FT_COPY_FROM(bool, ft_bool)
FT_COPY_FROM(uint8, unsigned char)
FT_COPY_FROM(int8, signed char)
FT_COPY_FROM(int16, short)
FT_COPY_FROM(int32, int)
FT_COPY_FROM(int64, i64)
FT_COPY_FROM(float16, ft_half)
FT_COPY_FROM(bfloat16, ft_bf16)
FT_COPY_FROM(float32, float)
FT_COPY_FROM(float64, double)
