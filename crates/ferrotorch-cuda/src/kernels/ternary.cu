// Three-operand elementwise ops on dtype T: `where` (a bool condition
// choosing between x and y) and the TernaryOp kinds (fused multiply-add).

typedef typename FtTraits<T>::nat A;

extern "C" __global__ void where_select(FtLayout ol, T* o, FtLayout cl, const ft_bool* c, FtLayout xl, const T* x,
                                        FtLayout yl, const T* y, i64 n) {
    FT_LOOP(i, n) {
        const bool take_x = FtTraits<ft_bool>::load(c + ft_offset(cl, i));
        o[ft_offset(ol, i)] = take_x ? x[ft_offset(xl, i)] : y[ft_offset(yl, i)];
    }
}

#if FT_FLOAT
extern "C" __global__ void ternary_mul_add(FtLayout ol, T* o, FtLayout al, const T* a, FtLayout bl, const T* b,
                                           FtLayout cl, const T* c, i64 n) {
    FT_LOOP(i, n) {
        const A va = FtTraits<T>::load(a + ft_offset(al, i));
        const A vb = FtTraits<T>::load(b + ft_offset(bl, i));
        const A vc = FtTraits<T>::load(c + ft_offset(cl, i));
        FtTraits<T>::store(o + ft_offset(ol, i), ft_fma(va, vb, vc));
    }
}
#endif
