// Fused optimizer steps (float32/float64), one launch per parameter: the
// element updates of ferrotorch-cpu's optim.rs, with the same roundings
// (hyper-parameters rounded to T once, fused multiply-adds where PyTorch's
// CPU kernels fuse). A null state pointer is a slot the group does not keep:
// it reads as 0 and is not stored.

typedef T A;

__device__ __forceinline__ A ft_grad_in(A p, A g, int maximize, A l2) {
    g = maximize ? -g : g;
    return l2 != (A)0 ? ft_fma(p, l2, g) : g;
}

// `a.lerp(end, w)` with PyTorch's choice of formula by |w|.
__device__ __forceinline__ A ft_lerp(A a, A end, A w) {
    bool small = ft_abs(w) < (A)0.5;
    A coeff = small ? w : w - (A)1;
    return ft_fma(coeff, end - a, small ? a : end);
}

extern "C" __global__ void optim_adam(T* p, const T* g, T* m, T* v, T* vmax, i64 n, double decay_factor, double l2,
                                      double one_minus_beta1, double beta2, double one_minus_beta2,
                                      double bias_correction2_sqrt, double eps, double neg_step_size, int maximize,
                                      int decoupled) {
    const A decay = (A)decay_factor, wd = decoupled ? (A)0 : (A)l2, w1 = (A)one_minus_beta1, b2 = (A)beta2;
    const A omb2 = (A)one_minus_beta2, bc2 = (A)bias_correction2_sqrt, ep = (A)eps, nss = (A)neg_step_size;
    FT_LOOP(i, n) {
        A pi = decoupled ? p[i] * decay : p[i];
        A gi = ft_grad_in(pi, g[i], maximize, wd);
        A mi = ft_lerp(m ? m[i] : (A)0, gi, w1);
        A vi = ft_fma(omb2 * gi, gi, (v ? v[i] : (A)0) * b2);
        A vd = vi;
        if (vmax) {
            A x = vmax[i];
            x = x != x ? x : (vi != vi || vi > x ? vi : x);
            vmax[i] = x;
            vd = x;
        }
        A denom = ft_sqrt(vd) / bc2 + ep;
        if (m) m[i] = mi;
        if (v) v[i] = vi;
        p[i] = pi + nss * mi / denom;
    }
}

extern "C" __global__ void optim_sgd(T* p, const T* g, T* buf, i64 n, double weight_decay, double momentum,
                                     double one_minus_dampening, double neg_lr, int nesterov, int maximize, int fresh) {
    const A wd = (A)weight_decay, mu = (A)momentum, omd = (A)one_minus_dampening, lr = (A)neg_lr;
    FT_LOOP(i, n) {
        A gi = ft_grad_in(p[i], g[i], maximize, wd);
        if (momentum != 0.0) {
            A b = fresh ? gi : ft_fma(gi, omd, (buf ? buf[i] : (A)0) * mu);
            if (buf) buf[i] = b;
            gi = nesterov ? ft_fma(b, mu, gi) : b;
        }
        p[i] = ft_fma(gi, lr, p[i]);
    }
}
