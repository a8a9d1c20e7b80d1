// Random draws with the Philox4x32-10 counter-based generator (Salmon et al.,
// "Parallel random numbers: as easy as 1, 2, 3", SC11): element i of a call
// is a function of (key, base, i) alone, so a draw does not depend on the
// launch geometry and is reproducible from the host generator's state, which
// supplies `key` and `base` (two 64-bit draws per call).

typedef unsigned int u32;

struct FtPhilox {
    u32 v[4];
};

__device__ __forceinline__ FtPhilox ft_philox(u64 key, u64 base, u64 i) {
    u32 c0 = (u32)i, c1 = (u32)(i >> 32), c2 = (u32)base, c3 = (u32)(base >> 32);
    u32 k0 = (u32)key, k1 = (u32)(key >> 32);
#pragma unroll
    for (int r = 0; r < 10; ++r) {
        const u32 lo0 = 0xD2511F53u * c0, hi0 = __umulhi(0xD2511F53u, c0);
        const u32 lo1 = 0xCD9E8D57u * c2, hi1 = __umulhi(0xCD9E8D57u, c2);
        c0 = hi1 ^ c1 ^ k0;
        c1 = lo1;
        c2 = hi0 ^ c3 ^ k1;
        c3 = lo0;
        k0 += 0x9E3779B9u;
        k1 += 0xBB67AE85u;
    }
    FtPhilox o;
    o.v[0] = c0;
    o.v[1] = c1;
    o.v[2] = c2;
    o.v[3] = c3;
    return o;
}

// Mantissa bits of T's uniform draws: a multiple of 2^-bits below 1 is exact
// in T, so rounding to T never gives 1.0.
#if FT_FLOAT
template <class S> struct FtUnitBits { static const int v = 53; };
template <> struct FtUnitBits<float> { static const int v = 24; };
template <> struct FtUnitBits<ft_half> { static const int v = 11; };
template <> struct FtUnitBits<ft_bf16> { static const int v = 8; };

// Uniform on [0, 1) from 64 random bits, in steps of 2^-bits.
__device__ __forceinline__ double ft_unit(u64 bits) {
    const int b = FtUnitBits<T>::v;
    return (double)(bits >> (64 - b)) * (1.0 / (double)(1ull << b));
}

extern "C" __global__ void random_uniform(T* out, i64 n, u64 key, u64 base) {
    FT_LOOP(i, n) {
        const FtPhilox r = ft_philox(key, base, (u64)i);
        FtTraits<T>::store(out + i, ft_unit(((u64)r.v[0] << 32) | r.v[1]));
    }
}

// mean + std * N(0, 1) by Box-Muller on two uniforms (the first kept away
// from 0 so the logarithm is finite).
extern "C" __global__ void random_normal(T* out, i64 n, u64 key, u64 base, double mean, double std) {
    FT_LOOP(i, n) {
        const FtPhilox r = ft_philox(key, base, (u64)i);
        const double u1 = ((double)((((u64)r.v[0] << 32) | r.v[1]) >> 11) + 1.0) * (1.0 / 9007199254740992.0);
        const double u2 = (double)((((u64)r.v[2] << 32) | r.v[3]) >> 11) * (1.0 / 9007199254740992.0);
        const double z = sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
        FtTraits<T>::store(out + i, (typename FtTraits<T>::nat)(mean + std * z));
    }
}
#endif

// Integers uniform on [low, low + span) (span >= 1): 64 random bits reduced
// modulo span (the bias is below span / 2^64).
extern "C" __global__ void random_integers(T* out, i64 n, u64 key, u64 base, i64 low, u64 span) {
    FT_LOOP(i, n) {
        const FtPhilox r = ft_philox(key, base, (u64)i);
        const i64 v = low + (i64)((((u64)r.v[0] << 32) | r.v[1]) % span);
        FtTraits<T>::store(out + i, FtConv<typename FtTraits<T>::nat, i64>::go(v));
    }
}
