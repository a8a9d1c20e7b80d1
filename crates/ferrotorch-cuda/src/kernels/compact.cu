// Stream compaction for nonzero / count_nonzero / masked_scatter: the
// elements (row-major over a layout) are cut into tiles of blockDim.x; each
// tile counts its selected elements, one block scans the tile counts into
// offsets (and the total), and a last pass scans flags inside each tile to
// place every selected element. Order is row-major, as PyTorch's.

// Exclusive prefix sum of one flag per thread over the block; `total` gets
// the block's sum. Every thread of the block must call it.
__device__ __forceinline__ i64 ft_block_exclusive(int flag, i64& total) {
    __shared__ int s[1024];
    const int t = threadIdx.x;
    s[t] = flag;
    __syncthreads();
    for (int off = 1; off < (int)blockDim.x; off <<= 1) {
        const int v = t >= off ? s[t - off] : 0;
        __syncthreads();
        s[t] += v;
        __syncthreads();
    }
    const int incl = s[t];
    total = s[blockDim.x - 1];
    __syncthreads();
    return incl - flag;
}

__device__ __forceinline__ int ft_selected(const FtLayout& l, const T* x, i64 i, i64 n) {
    return i < n && FtTraits<T>::load(x + ft_offset(l, i)) != 0;
}

// counts[t] = selected elements of tile t.
extern "C" __global__ void compact_tile_counts(FtLayout xl, const T* x, i64 n, i64* counts, i64 tiles) {
    for (i64 t = blockIdx.x; t < tiles; t += gridDim.x) {
        i64 total;
        ft_block_exclusive(ft_selected(xl, x, t * blockDim.x + threadIdx.x, n), total);
        if (threadIdx.x == 0) counts[t] = total;
    }
}

// One block: counts become exclusive offsets, total[0] their sum.
extern "C" __global__ void compact_scan_tiles(i64* counts, i64 tiles, i64* total) {
    __shared__ i64 part[1024];
    const i64 per = (tiles + blockDim.x - 1) / blockDim.x;
    const i64 lo = threadIdx.x * per, hi = lo + per < tiles ? lo + per : tiles;
    i64 sum = 0;
    for (i64 k = lo; k < hi; ++k) sum += counts[k];
    part[threadIdx.x] = sum;
    __syncthreads();
    if (threadIdx.x == 0) {
        i64 run = 0;
        for (int k = 0; k < (int)blockDim.x; ++k) {
            const i64 v = part[k];
            part[k] = run;
            run += v;
        }
        total[0] = run;
    }
    __syncthreads();
    i64 run = part[threadIdx.x];
    for (i64 k = lo; k < hi; ++k) {
        const i64 v = counts[k];
        counts[k] = run;
        run += v;
    }
}

// The row-major coordinates (x's dims, outermost first) of every selected
// element into out (count x ndim, contiguous).
extern "C" __global__ void compact_nonzero(FtLayout xl, const T* x, i64 n, const i64* offsets, i64 tiles, i64* out) {
    for (i64 t = blockIdx.x; t < tiles; t += gridDim.x) {
        const i64 i = t * blockDim.x + threadIdx.x;
        const int flag = ft_selected(xl, x, i, n);
        i64 total;
        const i64 at = offsets[t] + ft_block_exclusive(flag, total);
        if (flag) {
            i64 rest = i;
            for (int k = 0; k < xl.ndim; ++k) {
                out[at * xl.ndim + (xl.ndim - 1 - k)] = rest % xl.sizes[k];
                rest /= xl.sizes[k];
            }
        }
    }
}

// dst[i] = the next element of src (row-major) where the bool mask is set.
extern "C" __global__ void compact_masked_scatter(FtLayout dl, T* dst, FtLayout ml, const ft_bool* mask, FtLayout sl,
                                                  const T* src, i64 n, const i64* offsets, i64 tiles) {
    for (i64 t = blockIdx.x; t < tiles; t += gridDim.x) {
        const i64 i = t * blockDim.x + threadIdx.x;
        const int flag = i < n && mask[ft_offset(ml, i)].v != 0;
        i64 total;
        const i64 at = offsets[t] + ft_block_exclusive(flag, total);
        if (flag) dst[ft_offset(dl, i)] = src[ft_offset(sl, at)];
    }
}

// The tile counts of a bool mask (for masked_scatter's count).
extern "C" __global__ void compact_mask_counts(FtLayout ml, const ft_bool* mask, i64 n, i64* counts, i64 tiles) {
    for (i64 t = blockIdx.x; t < tiles; t += gridDim.x) {
        const i64 i = t * blockDim.x + threadIdx.x;
        i64 total;
        ft_block_exclusive(i < n && mask[ft_offset(ml, i)].v != 0, total);
        if (threadIdx.x == 0) counts[t] = total;
    }
}
