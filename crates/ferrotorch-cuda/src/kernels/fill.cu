// Fill every element of a strided tensor of dtype T with one value, given
// as the bit pattern of a T in the low bytes of `bits` (converted on the
// host with the engine's one scalar conversion rule).

extern "C" __global__ void fill(FtLayout dl, T* d, u64 bits, i64 n) {
    union { u64 b; T t; } u;
    u.b = bits;
    const T v = u.t;
    FT_LOOP(i, n) { d[ft_offset(dl, i)] = v; }
}
