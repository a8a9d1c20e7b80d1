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

// ---- the other optimizers: one entry, the kind and hyper-parameters by value
// The update of each element is ferrotorch-cpu's (optim.rs) for that kind;
// `h` holds the hyper-parameters in the order the Rust side packs them and
// `flags` the booleans (FT_OPT_* bits).

struct FtOptimArgs {
    double h[10];
};

#define FT_OPT_MAXIMIZE 1
#define FT_OPT_L2 2
#define FT_OPT_DECAY 4
#define FT_OPT_CENTERED 8
#define FT_OPT_MOMENTUM 16
#define FT_OPT_RECT 32
#define FT_OPT_MU 64

#define FT_OPT_ADAGRAD 0
#define FT_OPT_ADADELTA 1
#define FT_OPT_ADAMAX 2
#define FT_OPT_NADAM 3
#define FT_OPT_RADAM 4
#define FT_OPT_RMSPROP 5
#define FT_OPT_RPROP 6
#define FT_OPT_ASGD 7

// PyTorch's elementwise ops on one element, rounded as its CPU kernels round.
__device__ __forceinline__ A ft_add_alpha(A a, A b, A alpha) { return ft_fma(b, alpha, a); }
__device__ __forceinline__ A ft_addcmul(A a, A t1, A t2, A v) { return ft_fma(v * t1, t2, a); }
__device__ __forceinline__ A ft_addcdiv(A a, A t1, A t2, A v) { return a + v * t1 / t2; }
__device__ __forceinline__ A ft_maximum(A a, A b) { return a != a ? a : ((b != b || b > a) ? b : a); }
__device__ __forceinline__ A ft_sign0(A x) { return x > (A)0 ? (A)1 : (x < (A)0 ? (A)-1 : (A)0); }
__device__ __forceinline__ A ft_clamp_nan(A x, A lo, A hi) {
    if (x != x) return x;
    const A y = x < lo ? lo : x;
    return hi < y ? hi : y;
}

extern "C" __global__ void optim_other(int kind, int flags, T* p, const T* g, T* s0, T* s1, T* s2, i64 n, FtOptimArgs a) {
    const int maximize = flags & FT_OPT_MAXIMIZE;
    const A l2 = (flags & FT_OPT_L2) ? (A)a.h[0] : (A)0;
    FT_LOOP(i, n) {
        A pi = p[i];
        A gi = maximize ? -g[i] : g[i];
        A v0 = s0 ? s0[i] : (A)0, v1 = s1 ? s1[i] : (A)0, v2 = s2 ? s2[i] : (A)0;
        switch (kind) {
        case FT_OPT_ADAGRAD: {  // h: wd, neg_clr, eps
            if (flags & FT_OPT_L2) gi = ft_add_alpha(gi, pi, l2);
            v0 = ft_addcmul(v0, gi, gi, (A)1);
            pi = ft_addcdiv(pi, gi, ft_sqrt(v0) + (A)a.h[2], (A)a.h[1]);
            break;
        }
        case FT_OPT_ADADELTA: {  // h: wd, rho, one_minus_rho, eps, neg_lr
            if (flags & FT_OPT_L2) gi = ft_add_alpha(gi, pi, l2);
            const A rho = (A)a.h[1], omr = (A)a.h[2], eps = (A)a.h[3];
            v0 = ft_addcmul(v0 * rho, gi, gi, omr);
            const A delta = ft_sqrt(v1 + eps) / ft_sqrt(v0 + eps) * gi;
            v1 = ft_addcmul(v1 * rho, delta, delta, omr);
            pi = ft_add_alpha(pi, delta, (A)a.h[4]);
            break;
        }
        case FT_OPT_ADAMAX: {  // h: wd, one_minus_beta1, beta2, eps, neg_clr
            if (flags & FT_OPT_L2) gi = ft_add_alpha(gi, pi, l2);
            v0 = ft_lerp(v0, gi, (A)a.h[1]);
            v1 = ft_maximum(v1 * (A)a.h[2], ft_abs(gi) + (A)a.h[3]);
            pi = ft_addcdiv(pi, v0, v1, (A)a.h[4]);
            break;
        }
        case FT_OPT_NADAM: {  // h: wd, decay, omb1, beta2, omb2, bc2, eps, grad_coeff, avg_coeff
            if (flags & FT_OPT_DECAY) pi = pi * (A)a.h[1];
            if (flags & FT_OPT_L2) gi = ft_add_alpha(gi, pi, l2);
            v0 = ft_lerp(v0, gi, (A)a.h[2]);
            v1 = ft_addcmul(v1 * (A)a.h[3], gi, gi, (A)a.h[4]);
            const A denom = ft_sqrt(v1 / (A)a.h[5]) + (A)a.h[6];
            pi = ft_addcdiv(pi, gi, denom, (A)a.h[7]);
            pi = ft_addcdiv(pi, v0, denom, (A)a.h[8]);
            break;
        }
        case FT_OPT_RADAM: {  // h: wd, decay, omb1, beta2, omb2, bc1, bc2_sqrt, lr, eps, rect
            if (flags & FT_OPT_DECAY) pi = pi * (A)a.h[1];
            if (flags & FT_OPT_L2) gi = ft_add_alpha(gi, pi, l2);
            v0 = ft_lerp(v0, gi, (A)a.h[2]);
            v1 = ft_addcmul(v1 * (A)a.h[3], gi, gi, (A)a.h[4]);
            const A corrected = v0 / (A)a.h[5];
            A step = corrected * (A)a.h[7];
            if (flags & FT_OPT_RECT) {
                const A adaptive = (A)1 / (ft_sqrt(v1) + (A)a.h[8]) * (A)a.h[6];
                step = corrected * (A)a.h[7] * adaptive * (A)a.h[9];
            }
            pi = ft_add_alpha(pi, step, (A)-1);
            break;
        }
        case FT_OPT_RMSPROP: {  // h: wd, alpha, one_minus_alpha, eps, momentum, neg_lr
            if (flags & FT_OPT_L2) gi = ft_add_alpha(gi, pi, l2);
            v0 = ft_addcmul(v0 * (A)a.h[1], gi, gi, (A)a.h[2]);
            A avg;
            if (flags & FT_OPT_CENTERED) {
                v1 = ft_lerp(v1, gi, (A)a.h[2]);
                avg = ft_sqrt(ft_addcmul(v0, v1, v1, (A)-1));
            } else {
                avg = ft_sqrt(v0);
            }
            avg = avg + (A)a.h[3];
            if (flags & FT_OPT_MOMENTUM) {
                v2 = ft_addcdiv(v2 * (A)a.h[4], gi, avg, (A)1);
                pi = ft_add_alpha(pi, v2, (A)a.h[5]);
            } else {
                pi = ft_addcdiv(pi, gi, avg, (A)a.h[5]);
            }
            break;
        }
        case FT_OPT_RPROP: {  // h: etaminus, etaplus, step_min, step_max
            const A em = (A)a.h[0], ep = (A)a.h[1];
            const A sg = ft_sign0(gi * v0);
            const A factor = sg > (A)0 ? ep : (sg < (A)0 ? em : (A)1);
            v1 = ft_clamp_nan(v1 * factor, (A)a.h[2], (A)a.h[3]);
            // A sign change skips this update and forgets the gradient.
            if (factor == em) gi = (A)0;
            v0 = gi;
            pi = ft_addcmul(pi, ft_sign0(gi), v1, (A)-1);
            break;
        }
        case FT_OPT_ASGD: {  // h: wd, decay, neg_eta, mu
            if (flags & FT_OPT_L2) gi = ft_add_alpha(gi, pi, l2);
            pi = ft_add_alpha(pi * (A)a.h[1], gi, (A)a.h[2]);
            v0 = (flags & FT_OPT_MU) ? v0 + (pi - v0) * (A)a.h[3] : pi;
            break;
        }
        }
        if (s0) s0[i] = v0;
        if (s1) s1[i] = v1;
        if (s2) s2[i] = v2;
        p[i] = pi;
    }
}
