#!/usr/bin/env python3
"""Expected values for tests/random/test_samplers.cpp, derived without JAX.

Each sampler of jax.random is re-implemented step by step in numpy, following
jax/_src/random/core.py of JAX 0.11.1 (github.com/jax-ml/jax, commit cec06d116c05): the same key
splits, the same draws and the same float32 operations. The elementary functions follow XLA:CPU:
its Cephes-style float32 log, its log1p, chlo's erf_inv, and a fused multiply-add wherever LLVM
contracts a single-use product into an add (uniform's affine map, Marsaglia-Tsang's v = 1 + x c).
exp, pow, tan and lgamma are the correctly rounded float64 values rounded to float32.

Run with python3 (numpy only); it prints the C++ initializers pasted into the test.
"""
import math

import numpy as np

U32 = np.uint32
F32 = np.float32
TINY = np.finfo(F32).tiny
MASK = 0xFFFFFFFF


# ---- threefry2x32 and jax.random's key algorithms (jax/_src/random/threefry2x32.py) --------


def threefry2x32(k0, k1, x0, x1):
    x0 = np.asarray(x0, U32).copy()
    x1 = np.asarray(x1, U32).copy()
    ks = [U32(k0), U32(k1), U32(k0) ^ U32(k1) ^ U32(0x1BD11BDA)]
    rot = [[13, 15, 26, 6], [17, 29, 16, 24]]
    with np.errstate(over="ignore"):
        x0 += ks[0]
        x1 += ks[1]
        for i in range(5):
            for r in rot[i % 2]:
                x0 += x1
                x1 = (x1 << U32(r)) | (x1 >> U32(32 - r))
                x1 ^= x0
            x0 += ks[(i + 1) % 3]
            x1 += ks[(i + 2) % 3] + U32(i + 1)
    return x0, x1


def threefry_2x32(key, count):
    """The array helper: pad to even length, hash first half against second half."""
    count = np.asarray(count, U32).ravel()
    n = count.size
    padded = np.concatenate([count, np.zeros(n % 2, U32)])
    h = padded.size // 2
    y0, y1 = threefry2x32(key[0], key[1], padded[:h], padded[h:])
    return np.concatenate([y0, y1])[:n]


class Mode:
    partitionable = True  # jax_threefry_partitionable (default True since JAX 0.5)


def key(seed):
    return (U32(0), U32(seed & MASK))


def split(k, num=2):
    if Mode.partitionable:
        b0, b1 = threefry2x32(k[0], k[1], np.zeros(num, U32), np.arange(num, dtype=U32))
        return [(b0[i], b1[i]) for i in range(num)]
    out = threefry_2x32(k, np.arange(2 * num, dtype=U32)).reshape(num, 2)
    return [(out[i, 0], out[i, 1]) for i in range(num)]


def bits32(k, n):
    if Mode.partitionable:
        b0, b1 = threefry2x32(k[0], k[1], np.zeros(n, U32), np.arange(n, dtype=U32))
        return b0 ^ b1
    return threefry_2x32(k, np.arange(n, dtype=U32))


# ---- XLA:CPU float32 arithmetic ---------------------------------------------------------------


def fma(a, b, c):
    """float32 a*b+c with one rounding (the float64 product of two float32 values is exact)."""
    return F32(np.float64(a) * np.float64(b) + np.float64(c))


def xla_log(x):
    x = F32(x)
    if np.isnan(x) or x < 0:
        return F32(np.nan)
    if x == 0:
        return F32(-np.inf)
    if np.isinf(x):
        return x
    b = int(np.array(max(x, TINY), F32).view(U32))
    m = F32(np.array((b & ~0x7F800000) | 0x3F000000, U32).view(F32))
    e = F32(F32((b >> 23) - 0x7F) + F32(1))
    below = m < F32(0.707106781186547524)
    shift = m if below else F32(0)
    m = F32(m - F32(1))
    e = F32(e - (F32(1) if below else F32(0)))
    m = F32(m + shift)
    x2 = F32(m * m)
    x3 = F32(x2 * m)
    y = fma(m, F32(7.0376836292e-2), F32(-1.1514610310e-1))
    y1 = fma(m, F32(-1.2420140846e-1), F32(1.4249322787e-1))
    y2 = fma(m, F32(2.0000714765e-1), F32(-2.4999993993e-1))
    y = fma(y, m, F32(1.1676998740e-1))
    y1 = fma(y1, m, F32(-1.6668057665e-1))
    y2 = fma(y2, m, F32(3.3333331174e-1))
    y = fma(y, x3, y1)
    y = fma(y, x3, y2)
    y = fma(y, x3, F32(F32(-2.12194440e-4) * e))
    m = fma(-x2, F32(0.5), m)
    m = F32(m + y)
    return fma(F32(0.693359375), e, m)


def horner0(x, coeffs):
    p = F32(0)
    for c in coeffs:
        p = fma(p, x, F32(c))
    return p


def xla_log1p(x):
    x = F32(x)
    num = [4.5270000862445199635215e-5, 4.9854102823193375972212e-1, 6.5787325942061044846969e0,
           2.9911919328553073277375e1, 6.0949667980987787057556e1, 5.7112963590585538103336e1,
           2.0039553499201281259648e1]
    den = [1.0, 1.5062909083469192043167e1, 8.3047565967967209469434e1,
           2.2176239823732856465394e2, 3.0909872225312059774938e2, 2.1642788614495947685003e2,
           6.0118660497603843919306e1]
    if abs(x) < F32(0.41421356237309504880):
        x2 = F32(x * x)
        ratio = F32(horner0(x, num) / horner0(x, den))
        cubic = F32(F32(x * x2) * ratio)
        return F32(x + fma(F32(-0.5), x2, cubic))
    return xla_log(F32(x + F32(1)))


def erf_inv(x):
    x = F32(x)
    lt5 = [2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
           -0.00125372503, -0.00417768164, 0.246640727, 1.50140941]
    ge5 = [-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
           -0.0076224613, 0.00943887047, 1.00167406, 2.83297682]
    w = -xla_log1p(F32(x * -x))
    if w < F32(5):
        t, c = F32(w - F32(2.5)), lt5
    else:
        t, c = F32(F32(np.sqrt(w)) - F32(3)), ge5
    p = F32(c[0])
    for ci in c[1:]:
        p = fma(p, t, F32(ci))
    if abs(x) == F32(1):
        return F32(x * F32(np.inf))
    return F32(p * x)


def rounded(fn, *args):
    return F32(fn(*[float(a) for a in args]))


def exp(x):
    try:
        return rounded(math.exp, x)
    except OverflowError:
        return F32(np.inf)


def powf(x, y):
    return rounded(math.pow, x, y)


def lgamma(x):
    return rounded(math.lgamma, x)


# ---- jax.random's samplers (jax/_src/random/core.py), float32 ---------------------------------


def uniform(k, n, minval=0.0, maxval=1.0):
    lo, hi = F32(minval), F32(maxval)
    rng = F32(hi - lo)
    b = bits32(k, n)
    f = ((b >> U32(9)) | U32(0x3F800000)).view(F32) - F32(1)
    return np.array([max(lo, fma(u, rng, lo)) for u in f], F32)


def normal(k, n):
    u = uniform(k, n, np.nextafter(F32(-1), F32(0)), 1.0)
    return np.array([F32(F32(np.sqrt(2)) * erf_inv(v)) for v in u], F32)


def exponential(k, n):
    return np.array([-xla_log1p(-u) for u in uniform(k, n)], F32)


def laplace(k, n):
    epsneg = float(np.finfo(F32).epsneg)
    u = uniform(k, n, -1.0 + epsneg, 1.0)
    return np.array([F32(np.sign(v) * xla_log1p(-abs(v))) for v in u], F32)


def logistic(k, n):
    u = uniform(k, n, float(TINY), 1.0)
    return np.array([F32(xla_log(v) - xla_log1p(-v)) for v in u], F32)


def cauchy(k, n):
    u = uniform(k, n, float(np.finfo(F32).eps), 1.0)
    return np.array([rounded(math.tan, F32(F32(np.pi) * F32(v - F32(0.5)))) for v in u], F32)


def rademacher(k, n):
    return np.array([1 if u < F32(0.5) else -1 for u in uniform(k, n)], np.int32)


def maxwell(k, n):
    x = normal(k, 3 * n).reshape(n, 3)
    return np.array([np.sqrt(F32(F32(F32(r[0] * r[0]) + F32(r[1] * r[1])) + F32(r[2] * r[2])))
                     for r in x], F32)


def double_sided_maxwell(k, n, loc, scale):
    km, kr = split(k)
    m = maxwell(km, n)
    s = rademacher(kr, n).astype(F32)
    return np.array([fma(F32(si * mi), F32(scale), F32(loc)) for si, mi in zip(s, m)], F32)


def weibull_min(k, n, scale, concentration):
    u = uniform(k, n)
    inv = F32(1.0 / concentration)
    return np.array([F32(powf(-xla_log1p(-v), inv) * F32(scale)) for v in u], F32)


def pareto(k, n, b):
    return np.array([exp(F32(e / F32(b))) for e in exponential(k, n)], F32)


def rayleigh(k, n, scale):
    u = uniform(k, n)
    return np.array([F32(F32(scale) * np.sqrt(F32(xla_log(v) * F32(-2)))) for v in u], F32)


def lognormal(k, n, sigma):
    return np.array([exp(F32(z * F32(sigma))) for z in normal(k, n)], F32)


def geometric(k, n, p):
    u = uniform(k, n)
    l1p = xla_log1p(-F32(p))
    out = []
    for v in u:
        v = F32(1) if v == 0 else v
        out.append(int(np.floor(F32(xla_log(v) / l1p))) + 1)
    return np.array(out, np.int32)


def triangular(k, n, left, mode, right):
    left, mode, right = F32(left), F32(mode), F32(right)
    fc = F32(F32(mode - left) / F32(right - left))
    out = []
    for u in uniform(k, n):
        o1 = F32(left + np.sqrt(F32(F32(u * F32(right - left)) * F32(mode - left))))
        o2 = F32(right - np.sqrt(F32(F32(F32(F32(1) - u) * F32(right - left)) * F32(right - mode))))
        out.append(o1 if u < fc else o2)
    return np.array(out, F32)


def wald(k, n, mean):
    k1, k2 = split(k)
    v = normal(k1, n)
    z = uniform(k2, n)
    mu = F32(mean)
    out = []
    for vi, zi in zip(v, z):
        y = F32(vi * vi)
        y_sq = F32(y * y)
        mu_sq = F32(mu * mu)
        sqrt_term = F32(np.sqrt(fma(F32(F32(4) * mu), y, F32(mu_sq * y_sq))))
        x = fma(-F32(mu / F32(2)), sqrt_term, F32(mu + F32(F32(mu_sq * y) / F32(2))))
        out.append(x if zi <= F32(mu / F32(mu + x)) else F32(mu_sq / x))
    return np.array(out, F32)


def gamma_one(k, alpha, log_space):
    """_gamma_one: Marsaglia-Tsang with JAX's key use per loop iteration."""
    alpha = F32(alpha)
    one, third = F32(1), F32(1.0 / 3.0)
    boost = alpha >= one
    a = alpha if boost else F32(alpha + one)
    d = F32(a - third)
    c = F32(third * F32(one / np.sqrt(d)))  # XLA rewrites A / sqrt(B) to A * rsqrt(B)
    k, subkey = split(k)
    X, V, U = F32(0), one, F32(2)

    def keep_going(X, V, U):
        if U >= fma(F32(-0.0331), F32(X * X), one):
            return xla_log(U) >= fma(X, F32(0.5), F32(d * F32(F32(one - V) + xla_log(V))))
        return False

    while keep_going(X, V, U):
        k, x_key, u_key = split(k, 3)
        kk, x, v = x_key, F32(0), F32(-1)
        while v <= 0:
            kk, sub = split(kk)
            x = normal(sub, 1)[0]
            v = fma(x, c, one)
        X = F32(x * x)
        V = F32(F32(v * v) * v)
        U = uniform(u_key, 1)[0]
    if log_space:
        log_samples = -exponential(subkey, 1)[0]
        log_boost = F32(0) if (boost or log_samples == 0) else F32(log_samples * F32(one / alpha))
        return F32(F32(xla_log(d) + xla_log(V)) + log_boost)
    samples = F32(one - uniform(subkey, 1)[0])
    b = one if boost else powf(samples, F32(one / alpha))
    return F32(F32(d * V) * b)


def gamma(k, alphas, log_space=False):
    """random_gamma_p: one split key per element of the broadcast `a`."""
    keys = split(k, len(alphas))
    return np.array([gamma_one(ki, a, log_space) for ki, a in zip(keys, alphas)], F32)


CHI2_QUANTILE_COEF = [
    (1.0, -0.2237368, -0.01513904), (0.4713941, 0.02607083, -0.008986007),
    (0.0001348028, 0.01128186, 0.02277679), (-0.008553069, -0.01153761, -0.01323293),
    (0.00312558, 0.005169654, -0.006950356), (-0.0008426812, 0.00253001, 0.001060438),
    (0.00009780499, -0.001450117, 0.001565326)]


def gamma_approx(k, alphas, log_space=False):
    """_gamma_approx: the chi-square quantile series at a + 4, then Stuart's boosting."""
    a = np.array(alphas, F32)
    n = a.size
    k_base, k_boost = split(k)
    ab = (a + F32(4)).astype(F32)
    x = normal(k_base, n)
    log_u = -exponential(k_boost, 4 * n).reshape(4, n)
    out = []
    for i in range(n):
        nu = F32(F32(2) * ab[i])
        u = F32(F32(1) / nu)
        t = F32(x[i] * F32(F32(1) / np.sqrt(nu)))
        row = lambda c: fma(u, fma(u, F32(c[2]), F32(c[1])), F32(c[0]))
        poly = row(CHI2_QUANTILE_COEF[6])
        for c in reversed(CHI2_QUANTILE_COEF[:6]):
            poly = fma(poly, t, row(c))
        poly = max(poly, TINY)
        log_base = fma(F32(3), xla_log(poly), xla_log(ab[i]))
        total = F32(0)
        for j in range(4):
            total = F32(total + F32(log_u[j, i] / F32(a[i] + F32(j))))
        ls = F32(log_base + total)
        out.append(ls if log_space else exp(ls))
    return np.array(out, F32)


def beta(k, n, a, b):
    ka, kb = split(k)
    la = gamma(ka, [a] * n, True)
    lb = gamma(kb, [b] * n, True)
    out = []
    for x, y in zip(la, lb):
        m = max(x, y)
        ga, gb = exp(F32(x - m)), exp(F32(y - m))
        out.append(F32(ga / F32(ga + gb)))
    return np.array(out, F32)


def dirichlet(k, n, alpha):
    lg = gamma(k, list(alpha) * n, True).reshape(n, len(alpha))
    out = []
    for row in lg:
        e = [exp(F32(v - row.max())) for v in row]
        s = F32(0)
        for v in e:
            s = F32(s + v)
        out.append([F32(v / s) for v in e])
    return np.array(out, F32)


def chisquare(k, n, df):
    lg = gamma(k, [F32(F32(df) / F32(2))] * n, True)
    return np.array([F32(exp(v) * F32(2)) for v in lg], F32)


def t(k, n, df):
    kn, kg = split(k)
    z = normal(kn, n)
    half = F32(F32(df) / F32(2))
    g = gamma(kg, [half] * n)
    return np.array([F32(zi * np.sqrt(F32(half / gi))) for zi, gi in zip(z, g)], F32)


def f(k, n, dfnum, dfden):
    kd, kn = split(k)
    num = chisquare(kn, n, dfnum)
    den = chisquare(kd, n, dfden)
    return np.array([F32(F32(a / F32(dfnum)) / F32(b / F32(dfden))) for a, b in zip(num, den)], F32)


def generalized_normal(k, n, p):
    k0, k1 = split(k)
    inv = F32(F32(1) / F32(p))
    g = gamma(k0, [inv] * n)
    r = rademacher(k1, n).astype(F32)
    return np.array([F32(ri * powf(gi, inv)) for ri, gi in zip(r, g)], F32)


def ball(k, n, d, p):
    k1, k2 = split(k)
    g = generalized_normal(k1, n * d, p).reshape(n, d)
    e = exponential(k2, n)
    p = F32(p)
    out = []
    for row, ei in zip(g, e):
        s = F32(0)
        for v in row:
            s = F32(s + powf(abs(v), p))
        r = powf(F32(s + ei), F32(F32(1) / p))
        out.append([F32(v / r) for v in row])
    return np.array(out, F32)


def poisson(k, n, lam):
    """_poisson: Knuth for lam < 10, transformed rejection otherwise, both over the whole draw."""
    lam = F32(lam)
    knuth = lam < 10
    # Knuth's loop on the whole shape, until every element has log_prod <= -lam.
    lam_k = lam if knuth else F32(0)
    rng, kk = k, np.zeros(n, np.int64)
    log_prod = np.zeros(n, F32)
    while (log_prod > -lam_k).any():
        rng, sub = split(rng)
        kk = np.where(log_prod > -lam_k, kk + 1, kk)
        u = uniform(sub, n)
        log_prod = np.array([F32(lp + xla_log(ui)) for lp, ui in zip(log_prod, u)], F32)
    knuth_out = kk - 1
    # Rejection on the same key, lam replaced by 1e5 where Knuth is used.
    lr = F32(1e5) if knuth else lam
    log_lam = xla_log(lr)
    b = fma(F32(2.53), F32(np.sqrt(lr)), F32(0.931))
    a = fma(F32(0.02483), b, F32(-0.059))
    inv_alpha = F32(F32(1.1239) + F32(F32(1.1328) / F32(b - F32(3.4))))
    v_r = F32(F32(0.9277) - F32(F32(3.6224) / F32(b - F32(2))))
    k_out = np.full(n, -1.0, F32)
    accepted = np.zeros(n, bool)
    key_ = k
    while not accepted.all():
        key_, s0, s1 = split(key_, 3)
        u = uniform(s0, n) - F32(0.5)
        v = uniform(s1, n)
        for i in range(n):
            us = F32(F32(0.5) - abs(u[i]))
            kk_ = F32(np.floor(F32(fma(F32(F32(F32(F32(2) * a) / us) + b), u[i], lr) + F32(0.43))))
            s = xla_log(F32(F32(v[i] * inv_alpha) / F32(F32(a / F32(us * us)) + b)))
            tt = F32(fma(kk_, log_lam, -lr) - lgamma(F32(kk_ + F32(1))))
            accept1 = us >= F32(0.07) and v[i] <= v_r
            reject = kk_ < 0 or (us < F32(0.013) and v[i] > us)
            if accept1 or (not reject and s <= tt):
                k_out[i] = kk_
                accepted[i] = True
    out = knuth_out if knuth else k_out.astype(np.int64)
    return np.array(out if lam != 0 else np.zeros(n), np.int32)


def stirling_tail(k):
    vals = [0.0810614667953272, 0.0413406959554092, 0.0276779256849983, 0.02079067210376509,
            0.0166446911898211, 0.0138761288230707, 0.0118967099458917, 0.0104112652619720,
            0.00925546218271273, 0.00833056343336287]
    kc = F32(min(max(k, F32(0)), F32(9)))  # JAX clamps before the approximation too
    if k <= 9:
        return F32(vals[int(np.floor(kc))])
    kp1sq = F32(F32(kc + F32(1)) * F32(kc + F32(1)))
    inner = F32(F32(1.0 / 360) - F32(F32(F32(1.0 / 1260) / kp1sq)))
    return F32(F32(F32(1.0 / 12) - F32(inner / kp1sq)) / F32(kc + F32(1)))


def binomial(k, n, count, prob):
    """_binomial: inversion when count * q <= 10, else BTRS, both over the whole draw."""
    count, prob = F32(count), F32(prob)
    p_lt_half = prob < F32(0.5)
    q = prob if p_lt_half else F32(F32(1) - prob)
    use_inv = count * q <= F32(10)
    count = F32(np.floor(count))
    # Inversion: subkey, key = split(key) (the first key is the draw's).
    c_inv = count if use_inv else F32(0)
    l1mq = xla_log1p(-q)
    num_geom = np.zeros(n, F32)
    geom_sum = np.zeros(n, F32)
    key_ = k
    while (geom_sum <= c_inv).any():
        sub, key_ = split(key_)
        num_geom = np.where(geom_sum <= c_inv, num_geom + F32(1), num_geom).astype(F32)
        u = uniform(sub, n)
        geom = np.array([F32(np.ceil(F32(xla_log(ui) / l1mq))) for ui in u], F32)
        geom_sum = (geom_sum + geom).astype(F32)
    inv_out = num_geom - F32(1)
    # BTRS with count 1e4, q 0.5 where the inversion is used.
    cb = F32(1e4) if use_inv else count
    qb = F32(0.5) if use_inv else q
    stddev = F32(np.sqrt(F32(F32(cb * qb) * F32(F32(1) - qb))))
    b = fma(F32(2.53), stddev, F32(1.15))
    a = fma(F32(0.01), qb, fma(F32(0.0248), b, F32(-0.0873)))
    c = fma(cb, qb, F32(0.5))
    v_r = F32(F32(0.92) - F32(F32(4.2) / b))
    r = F32(qb / F32(F32(1) - qb))
    alpha = F32(F32(F32(2.83) + F32(F32(5.1) / b)) * stddev)
    m = F32(np.floor(F32(F32(cb + F32(1)) * qb)))
    k_out = np.full(n, -1.0, F32)
    accepted = np.zeros(n, bool)
    key_ = k
    while not accepted.all():
        key_, s0, s1 = split(key_, 3)
        u = uniform(s0, n)
        v = uniform(s1, n)
        for i in range(n):
            ui = F32(u[i] - F32(0.5))
            us = F32(F32(0.5) - abs(ui))
            accept1 = us >= F32(0.07) and v[i] <= v_r
            kk = F32(np.floor(fma(F32(F32(F32(F32(2) * a) / us) + b), ui, c)))
            reject = kk < 0 or kk > cb
            vv = xla_log(F32(F32(v[i] * alpha) / F32(F32(a / F32(us * us)) + b)))
            l1 = xla_log(F32(F32(m + F32(1)) / F32(r * F32(F32(cb - m) + F32(1)))))
            l2 = xla_log(F32(F32(F32(cb - m) + F32(1)) / F32(F32(cb - kk) + F32(1))))
            l3 = xla_log(F32(F32(r * F32(F32(cb - kk) + F32(1))) / F32(kk + F32(1))))
            # A*l1 + B*l2 + C*l3: each single-use product is contracted into the add after it.
            s12 = fma(F32(m + F32(0.5)), l1, F32(F32(cb + F32(1)) * l2))
            s123 = fma(F32(kk + F32(0.5)), l3, s12)
            ub = F32(F32(F32(F32(s123 + stirling_tail(m)) + stirling_tail(F32(cb - m)))
                         - stirling_tail(kk)) - stirling_tail(F32(cb - kk)))
            if accept1 or (not reject and vv <= ub):
                k_out[i] = kk
                accepted[i] = True
    out = inv_out if use_inv else k_out
    return np.array(out if p_lt_half else F32(count) - out, F32)


# ---- the implicit reparameterization gradient, independently --------------------------------


def regularized_lower_gamma(a, x):
    """P(a, x) by its power series in float64."""
    term = total = 1.0 / a
    n = 0
    while abs(term) > 1e-18 * abs(total):
        n += 1
        term *= x / (a + n)
        total += term
    return math.exp(a * math.log(x) - x - math.lgamma(a)) * total


def implicit_gamma_grad(a, x):
    """d x / d a at fixed P(a, x): -(dP/da) / (dP/dx), dP/da by a central difference."""
    h = 1e-5 * a
    dp_da = (regularized_lower_gamma(a + h, x) - regularized_lower_gamma(a - h, x)) / (2 * h)
    density = math.exp((a - 1) * math.log(x) - x - math.lgamma(a))
    return -dp_da / density


# ---- printing ---------------------------------------------------------------------------------


def cpp(values):
    vals = np.asarray(values).ravel()
    if vals.dtype == F32:
        return "{" + ", ".join(f"{float(v)!r}f".replace("inf", "INFINITY") for v in vals) + "}"
    return "{" + ", ".join(str(int(v)) for v in vals) + "}"


def adler_key(name):
    import zlib
    return key(zlib.adler32((name + "threefry2x32").encode()))


def main():
    for partitionable in (False, True):
        Mode.partitionable = partitionable
        print(f"// threefry_partitionable={partitionable}")
        k = adler_key  # RandomValuesCase seeds: adler32(name + "threefry2x32")
        table = [
            ("exponential", lambda: exponential(k("exponential"), 5)),
            ("laplace", lambda: laplace(k("laplace"), 5)),
            ("logistic", lambda: logistic(k("logistic"), 5)),
            ("cauchy", lambda: cauchy(k("cauchy"), 5)),
            ("rademacher", lambda: rademacher(k("rademacher"), 5)),
            ("maxwell", lambda: maxwell(k("maxwell"), 5)),
            ("double_sided_maxwell", lambda: double_sided_maxwell(k("double_sided_maxwell"), 5, 1, 2)),
            ("weibull_min", lambda: weibull_min(k("weibull_min"), 5, 1, 1)),
            ("pareto", lambda: pareto(k("pareto"), 5, 0.5)),
            ("gamma", lambda: gamma(k("gamma"), [0.8] * 5)),
            ("loggamma", lambda: gamma(k("loggamma"), [0.8] * 5, True)),
            ("beta", lambda: beta(k("beta"), 5, 0.8, 0.9)),
            ("dirichlet", lambda: dirichlet(k("dirichlet"), 2, [0.5, 0.6, 0.7])),
            ("poisson", lambda: poisson(k("poisson"), 5, 5)),
            ("gamma_a", lambda: gamma(key(3), [0.3, 1.0, 2.5, 7.0, 0.05, 40.0])),
            ("loggamma_a", lambda: gamma(key(3), [0.3, 1.0, 2.5, 7.0, 0.05, 40.0], True)),
            ("gamma_approx", lambda: gamma_approx(key(16), [0.3, 1.0, 2.5, 7.0, 0.05, 40.0])),
            ("loggamma_approx",
             lambda: gamma_approx(key(16), [0.3, 1.0, 2.5, 7.0, 0.05, 40.0], True)),
            ("poisson_large", lambda: poisson(key(4), 6, 25.5)),
            ("poisson_small", lambda: poisson(key(4), 6, 0.7)),
            ("binomial_inv", lambda: binomial(key(5), 6, 20, 0.3)),
            ("binomial_btrs", lambda: binomial(key(5), 6, 200, 0.4)),
            ("binomial_flip", lambda: binomial(key(5), 6, 200, 0.8)),
            ("geometric", lambda: geometric(key(6), 6, 0.3)),
            ("rayleigh", lambda: rayleigh(key(7), 6, 2.0)),
            ("wald", lambda: wald(key(8), 6, 1.5)),
            ("triangular", lambda: triangular(key(9), 6, -1.0, 0.5, 2.0)),
            ("lognormal", lambda: lognormal(key(10), 6, 0.5)),
            ("t", lambda: t(key(11), 6, 3.0)),
            ("chisquare", lambda: chisquare(key(12), 6, 3.0)),
            ("f", lambda: f(key(13), 6, 3.0, 5.0)),
            ("generalized_normal", lambda: generalized_normal(key(14), 6, 1.5)),
            ("ball", lambda: ball(key(15), 2, 3, 2.0)),
        ]
        for name, fn in table:
            print(f"{{\"{name}\", {cpp(fn())}}},")
    print("// implicit_gamma_grad(a, x)")
    for a, x in [(0.3, 0.05), (0.8, 0.7), (1.0, 1.0), (2.5, 1.2), (2.5, 6.0), (7.0, 4.0),
                 (7.0, 12.0), (40.0, 35.0), (0.05, 1e-6)]:
        print(f"{{{a}, {x}, {implicit_gamma_grad(a, x)!r}}},")


if __name__ == "__main__":
    main()
