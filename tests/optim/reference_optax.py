#!/usr/bin/env python3
"""Known answers for tests/optim: an independent NumPy implementation of optax 0.2.8's optimizers
and linesearches (written from optax/_src/{alias,transform,linesearch}.py and
optax/transforms/*.py at tag v0.2.8, commit 107e9ad20ca62bcbee1a8c016daab71c690a678c).

  /usr/bin/python3 tests/optim/reference_optax.py

First it replays the examples of optax's docstrings (f(x) = sum(x**2) from [1, 2, 3], five steps)
and asserts that the printed objective values match the ones optax's docs show: this checks the
reference against real optax output. Then it prints, in float64 with 17 significant digits, the
3-step trajectories that tests/optim/test_alias_*.cpp and test_lbfgs.cpp embed.

Checked against the real optax 0.2.8 on 2026-11-27 (scripts/reference/optax_trajectories.py runs
the same trajectories with optax in float64): every trajectory agrees to 1.2e-14 relative.
"""
import math

import numpy as np

# ---- trees: dicts of arrays (sorted keys, as JAX flattens them) --------------------------------


def tmap(f, *trees):
    return {k: f(*(t[k] for t in trees)) for k in sorted(trees[0])}


def vdot(a, b):
    return sum(float(np.sum(a[k] * b[k])) for k in sorted(a))


def zeros(t):
    return tmap(np.zeros_like, t)


def bc(m, decay, t):
    return m / (1 - decay**t)


# ---- transformations: (init(params) -> state, update(g, state, params, **extra) -> (u, s)) -------


def chain(*txs):
    def init(p):
        return [tx[0](p) for tx in txs]

    def update(g, s, p, **extra):
        s2 = []
        for tx, si in zip(txs, s):
            g, si = tx[1](g, si, p, **extra)
            s2.append(si)
        return g, s2

    return init, update


def stateless(f):
    return (lambda p: None), (lambda g, s, p, **e: (f(g, p), s))


def scale(a):
    return stateless(lambda g, p: tmap(lambda x: a * x, g))


def lr(learning_rate):
    if callable(learning_rate):
        def init(p):
            return 0

        def update(g, s, p, **e):
            return tmap(lambda x: -learning_rate(s) * x, g), s + 1

        return init, update
    return scale(-learning_rate)


def add_decayed_weights(wd, mask=None):
    if callable(wd):
        def init(p):
            return 0

        def update(g, s, p, **e):
            return tmap(lambda x, y: x + wd(s) * y, g, p), s + 1

        return init, update
    return stateless(lambda g, p: g if wd == 0 else tmap(lambda x, y: x + wd * y, g, p))


def trace(decay, nesterov=False):
    def update(g, s, p, **e):
        t = tmap(lambda x, y: x + decay * y, g, s)
        u = tmap(lambda x, y: x + decay * y, g, t) if nesterov else t
        return u, t

    return zeros, update


def ema(decay, debias=True):
    def update(g, s, p, **e):
        c, m = s
        m = tmap(lambda x, y: (1 - decay) * x + decay * y, g, m)
        u = tmap(lambda x: bc(x, decay, c + 1), m) if debias else m
        return u, (c + 1, m)

    return (lambda p: (0, zeros(p))), update


def scale_by_sign():
    return stateless(lambda g, p: tmap(np.sign, g))


def safe_norm(x, min_norm):
    n = math.sqrt(float(np.sum(x * x)))
    return min_norm if n <= min_norm else n


def scale_by_trust_ratio(min_norm=0.0, coef=1.0, eps=0.0):
    def f(u, p):
        pn, un = safe_norm(p, min_norm), safe_norm(u, min_norm)
        r = 1.0 if pn == 0 or un == 0 else coef * pn / (un + eps)
        return u * r

    return stateless(lambda g, p: tmap(f, g, p))


def adam_like(b1, b2, eps, eps_root, nesterov, second):
    """scale_by_adam with the second-moment update `second(g, nu, mu)`; returns (u, mu, nu)."""

    def update(g, s, p, **e):
        c, mu, nu = s
        mu = tmap(lambda x, m: (1 - b1) * x + b1 * m, g, mu)
        nu = tmap(second, g, nu, mu)
        c += 1
        if nesterov:
            mh = tmap(lambda m, x: b1 * bc(m, b1, c + 1) + (1 - b1) * bc(x, b1, c), mu, g)
        else:
            mh = tmap(lambda m: bc(m, b1, c), mu)
        u = tmap(lambda m, v: m / (np.sqrt(bc(v, b2, c) + eps_root) + eps), mh, nu)
        return u, (c, mu, nu)

    return update


def scale_by_adam(b1=0.9, b2=0.999, eps=1e-8, eps_root=0.0, nesterov=False):
    up = adam_like(b1, b2, eps, eps_root, nesterov, lambda x, v, m: (1 - b2) * x * x + b2 * v)
    return (lambda p: (0, zeros(p), zeros(p))), up


def scale_by_belief(b1=0.9, b2=0.999, eps=1e-16, eps_root=1e-16, nesterov=False):
    def update(g, s, p, **e):
        c, mu, nu = s
        mu = tmap(lambda x, m: (1 - b1) * x + b1 * m, g, mu)
        nu = tmap(lambda x, m, v: (1 - b2) * (x - m) ** 2 + b2 * v + eps_root, g, mu, nu)
        c += 1
        if nesterov:
            mh = tmap(lambda m, x: b1 * bc(m, b1, c + 1) + (1 - b1) * bc(x, b1, c), mu, g)
        else:
            mh = tmap(lambda m: bc(m, b1, c), mu)
        u = tmap(lambda m, v: m / (np.sqrt(bc(v, b2, c)) + eps), mh, nu)
        return u, (c, mu, nu)

    return (lambda p: (0, zeros(p), zeros(p))), update


def scale_by_amsgrad(b1=0.9, b2=0.999, eps=1e-8, eps_root=0.0, bc_mu=True, bc_nu=True):
    def update(g, s, p, **e):
        c, mu, nu, nu_max = s
        mu = tmap(lambda x, m: (1 - b1) * x + b1 * m, g, mu)
        nu = tmap(lambda x, v: (1 - b2) * x * x + b2 * v, g, nu)
        c += 1
        mh = tmap(lambda m: bc(m, b1, c), mu) if bc_mu else mu
        ne = tmap(lambda v: bc(v, b2, c), nu) if bc_nu else nu
        nu_max = tmap(np.maximum, nu_max, ne)
        u = tmap(lambda m, v: m / (np.sqrt(v + eps_root) + eps), mh, nu_max)
        return u, (c, mu, nu, nu_max)

    return (lambda p: (0, zeros(p), zeros(p), zeros(p))), update


def scale_by_adamax(b1=0.9, b2=0.999, eps=1e-8):
    def update(g, s, p, **e):
        c, mu, nu = s
        c += 1
        mu = tmap(lambda x, m: (1 - b1) * x + b1 * m, g, mu)
        nu = tmap(lambda x, v: np.maximum(np.abs(x) + eps, b2 * v), g, nu)
        return tmap(lambda m, v: bc(m, b1, c) / v, mu, nu), (c, mu, nu)

    return (lambda p: (0, zeros(p), zeros(p))), update


def scale_by_yogi(b1=0.9, b2=0.999, eps=1e-3, eps_root=0.0, init=1e-6):
    def update(g, s, p, **e):
        c, mu, nu = s
        mu = tmap(lambda x, m: (1 - b1) * x + b1 * m, g, mu)
        nu = tmap(lambda x, v: v - (1 - b2) * np.sign(v - x * x) * x * x, g, nu)
        c += 1
        u = tmap(lambda m, v: bc(m, b1, c) / (np.sqrt(bc(v, b2, c) + eps_root) + eps), mu, nu)
        return u, (c, mu, nu)

    full = lambda p: tmap(lambda x: np.full_like(x, init), p)
    return (lambda p: (0, full(p), full(p))), update


def scale_by_radam(b1=0.9, b2=0.999, eps=1e-8, eps_root=0.0, threshold=5.0, nesterov=False):
    ro_inf = 2.0 / (1.0 - b2) - 1.0

    def update(g, s, p, **e):
        c, mu, nu = s
        mu = tmap(lambda x, m: (1 - b1) * x + b1 * m, g, mu)
        nu = tmap(lambda x, v: (1 - b2) * x * x + b2 * v, g, nu)
        c += 1
        b2t = b2**c
        ro = ro_inf - 2 * c * b2t / (1 - b2t)
        if nesterov:
            mh = tmap(lambda m, x: b1 * bc(m, b1, c + 1) + (1 - b1) * bc(x, b1, c), mu, g)
        else:
            mh = tmap(lambda m: bc(m, b1, c), mu)
        if ro >= threshold:
            r = math.sqrt((ro - 4) * (ro - 2) * ro_inf / ((ro_inf - 4) * (ro_inf - 2) * ro))
            u = tmap(lambda m, v: r * m / (np.sqrt(bc(v, b2, c) + eps_root) + eps), mh, nu)
        else:
            u = mh
        return u, (c, mu, nu)

    return (lambda p: (0, zeros(p), zeros(p))), update


def scale_by_adan(b1=0.98, b2=0.92, b3=0.99, eps=1e-8, eps_root=0.0):
    def update(g, s, p, **e):
        m, v, n, gp, t = s
        diff = zeros(g) if t == 0 else tmap(lambda x, y: x - y, g, gp)
        m = tmap(lambda x, y: (1 - b1) * x + b1 * y, g, m)
        v = tmap(lambda x, y: (1 - b2) * x + b2 * y, diff, v)
        sq = tmap(lambda x, d: x + (1 - b2) * d, g, diff)
        n = tmap(lambda x, y: (1 - b3) * x * x + b3 * y, sq, n)
        t += 1
        u = tmap(lambda a, b: bc(a, b1, t) + (1 - b2) * bc(b, b2, t), m, v)
        u = tmap(lambda a, c: a / (np.sqrt(bc(c, b3, t) + eps_root) + eps), u, n)
        return u, (m, v, n, g, t)

    return (lambda p: (zeros(p), zeros(p), zeros(p), zeros(p), 0)), update


def scale_by_novograd(b1=0.9, b2=0.25, eps=1e-8, eps_root=0.0, wd=0.0):
    def update(g, s, p, **e):
        c, mu, nu = s
        c += 1
        sq = tmap(lambda x: np.linalg.norm(x) ** 2, g)
        nu = sq if c == 1 else tmap(lambda a, v: (1 - b2) * a + b2 * v, sq, nu)
        add = tmap(lambda x, q, v: x / (np.sqrt(v + eps_root) + eps) + wd * q, g, p, nu)
        mu = add if c == 1 else tmap(lambda m, a: b1 * m + a, mu, add)
        return mu, (c, mu, nu)

    return (lambda p: (0, zeros(p), tmap(lambda x: 0.0, p))), update


def scale_by_adadelta(rho=0.9, eps=1e-6):
    def update(g, s, p, **e):
        eg, ex = s
        eg = tmap(lambda x, y: (1 - rho) * x**2 + rho * y, g, eg)
        u = tmap(lambda x, a, b: (np.sqrt(b + eps) / np.sqrt(a + eps)) * x, g, eg, ex)
        ex = tmap(lambda x, y: (1 - rho) * x**2 + rho * y, u, ex)
        return u, (eg, ex)

    return (lambda p: (zeros(p), zeros(p))), update


def scale_by_sm3(b1=0.9, b2=1.0, eps=1e-8):
    def init(p):
        return tmap(lambda x: [np.zeros(x.shape[i]) for i in range(x.ndim)], p), zeros(p)

    def leaf(g, vs):
        v = [np.reshape(vs[i], [1] * i + [g.shape[i]] + [1] * (g.ndim - i - 1))
             for i in range(g.ndim)]
        c0 = (1.0 - b2) if b2 != 1.0 else 1.0
        cover = v[0]
        if g.ndim >= 2:
            for x in v[1:]:
                cover = np.minimum(cover, x)
        acc = c0 * g**2 + b2 * cover
        inv = np.where(acc > 0, 1 / np.sqrt(acc + eps), 0.0)
        axes = lambda i: tuple(j for j in range(g.ndim) if j != i)
        new = [acc if g.ndim < 2 else np.max(acc, axis=axes(i)) for i in range(g.ndim)]
        return g * inv, new

    def update(g, s, p, **e):
        mu, nu = s
        res = tmap(leaf, g, mu)
        up = {k: r[0] for k, r in res.items()}
        nu = tmap(lambda x, y: (1 - b1) * x + b1 * y, up, nu)
        return nu, ({k: r[1] for k, r in res.items()}, nu)

    return init, update


def scale_by_rprop(learning_rate, eta_minus=0.5, eta_plus=1.2, min_step=1e-6, max_step=50.0):
    def update(g, s, p, **e):
        steps, prev = s
        sg = tmap(lambda x, y: x * y, g, prev)
        steps = tmap(lambda q, st: np.where(q == 0, st, np.clip(
            st * np.where(q > 0, eta_plus, eta_minus), min_step, max_step)), sg, steps)
        new_prev = tmap(lambda q, x, st: np.where(q < 0, 0.0, st * np.sign(x)), sg, g, steps)
        # optax emits the previous step's update (state.prev_updates), zeroed where g flipped.
        u = tmap(lambda q, x: np.where(q < 0, 0.0, x), sg, prev)
        return u, (steps, new_prev)

    return (lambda p: (tmap(lambda x: np.full_like(x, learning_rate), p), zeros(p))), update


def scale_by_optimistic_gradient(alpha=1.0, beta=1.0):
    def update(g, s, p, **e):
        first, prev = s
        u = tmap(lambda x, y: (alpha + beta) * x - beta * (x if first else y), g, prev)
        return u, (False, g)

    return (lambda p: (True, zeros(p))), update


def scale_by_polyak(f_min=0.0, max_lr=1.0, eps=0.0, variant="sps"):
    def update(g, s, p, value, **e):
        sq = vdot(g, g)
        gap = value - f_min
        if variant == "sps+":
            gap = max(gap, 0.0)
        step = 0.0 if sq + eps <= np.finfo(float).eps else min(gap / (sq + eps), max_lr)
        return tmap(lambda x: step * x, g), s

    return (lambda p: None), update


def add_noise_deterministic(*a):
    raise NotImplementedError  # noisy_sgd's noise needs jax.random: checked in C++ instead


# ---- aliases ------------------------------------------------------------------------------------


def adabelief(lr_, **k):
    return chain(scale_by_belief(**k), lr(lr_))


def adadelta(lr_=None, rho=0.9, eps=1e-6, wd=0.0):
    txs = [add_decayed_weights(wd), scale_by_adadelta(rho, eps)]
    if lr_ is not None:
        txs.append(lr(lr_))
    return chain(*txs)


def adamax(lr_, **k):
    return chain(scale_by_adamax(**k), lr(lr_))


def adamaxw(lr_, b1=0.9, b2=0.999, eps=1e-8, wd=1e-4):
    return chain(scale_by_adamax(b1, b2, eps), add_decayed_weights(wd), lr(lr_))


def adan(lr_, b1=0.98, b2=0.92, b3=0.99, eps=1e-8, eps_root=1e-8, wd=0.0):
    return chain(scale_by_adan(b1, b2, b3, eps, eps_root), add_decayed_weights(wd), lr(lr_))


def amsgrad(lr_, **k):
    return chain(scale_by_amsgrad(**k), lr(lr_))


def novograd(lr_, b1=0.9, b2=0.25, eps=1e-6, eps_root=0.0, wd=0.0):
    return chain(scale_by_novograd(b1, b2, eps, eps_root, wd), lr(lr_))


def radam(lr_, **k):
    return chain(scale_by_radam(**k), lr(lr_))


def yogi(lr_, b1=0.9, b2=0.999, eps=1e-3):
    return chain(scale_by_yogi(b1, b2, eps), lr(lr_))


def sm3(lr_, momentum=0.9):
    return chain(scale_by_sm3(momentum), scale(-lr_))


def sign_sgd(lr_):
    return chain(scale_by_sign(), lr(lr_))


def signum(lr_, beta=0.9):
    return chain(ema(beta, debias=False), scale_by_sign(), lr(lr_))


def fromage(lr_, min_norm=1e-6):
    mult = 1 / (1 + lr_**2) ** 0.5
    return chain(scale_by_trust_ratio(min_norm), lr(lr_ * mult), add_decayed_weights(mult - 1))


def lars(lr_, wd=0.0, coef=0.001, eps=0.0, momentum=0.9, nesterov=False):
    return chain(add_decayed_weights(wd), scale_by_trust_ratio(0.0, coef, eps), lr(lr_),
                 trace(momentum, nesterov))


def rprop(lr_, **k):
    return chain(scale_by_rprop(lr_, **k), scale(-1.0))


def optimistic_gradient_descent(lr_, alpha=1.0, beta=1.0):
    return chain(scale_by_optimistic_gradient(alpha, beta), lr(lr_))


def optimistic_adam_v2(lr_, alpha=1.0, beta=1.0, b1=0.9, b2=0.999, eps=1e-8, nesterov=True):
    return chain(scale_by_adam(b1, b2, eps, 0.0, nesterov),
                 scale_by_optimistic_gradient(alpha, beta), lr(lr_))


def optimistic_adam(lr_, optimism=None, b1=0.9, b2=0.999, eps=1e-8, nesterov=True):
    return chain(scale_by_adam(b1, b2, eps, 0.0, nesterov),
                 scale_by_optimistic_gradient(lr_, lr_ if optimism is None else optimism),
                 scale(-1.0))


def sgd(lr_):
    return chain(stateless(lambda g, p: g), lr(lr_))


def polyak_sgd(max_lr=1.0, scaling=1.0, f_min=0.0, eps=0.0, variant="sps"):
    return chain(sgd(scaling), scale_by_polyak(f_min, max_lr, eps, variant))


# ---- zoom linesearch and L-BFGS (optax/_src/linesearch.py, transform.scale_by_lbfgs) ------------


def zoom_linesearch(value_and_grad, params, updates, value, grad, guess, max_steps=20, tol=0.0,
                    increase=2.0, slope_rtol=1e-4, curv_rtol=0.9, approx_dec_rtol=1e-6,
                    interval_threshold=1e-5):
    def line(t):
        v, g = value_and_grad(tmap(lambda p, u: p + t * u, params, updates))
        return v, g, vdot(g, updates)

    def dec_err(t, v, sl, v0, sl0):
        e = v - v0 - slope_rtol * t * sl0
        a = max(sl - (2 * slope_rtol - 1.0) * sl0, v - v0 - approx_dec_rtol * abs(v0))
        e = max(min(a, e), 0.0)
        return math.inf if math.isnan(e) else e

    def curv_err(sl, sl0):
        e = max(abs(sl) - curv_rtol * abs(sl0), 0.0)
        return math.inf if math.isnan(e) else e

    def cubicmin(a, fa, fpa, b, fb, c, fc):
        C, db, dc = fpa, b - a, c - a
        denom = (db * dc) ** 2 * (db - dc)
        d1 = np.array([[dc**2, -(db**2)], [-(dc**3), db**3]])
        A, B = d1 @ np.array([fb - fa - C * db, fc - fa - C * dc]) / denom
        rad = B * B - 3.0 * A * C
        return a + (-B + math.sqrt(rad)) / (3.0 * A) if rad >= 0 and A != 0 else math.nan

    def quadmin(a, fa, fpa, b, fb):
        db = b - a
        B = (fb - fa - fpa * db) / db**2
        return a - fpa / (2.0 * B) if B != 0 else math.nan

    sl0 = vdot(updates, grad)
    s = dict(count=0, stepsize=0.0, value=value, grad=grad, slope=sl0, de=math.inf,
             ce=math.inf, found=False, done=False, failed=False, low=0.0, vlow=value, slow=sl0,
             high=0.0, vhigh=value, shigh=sl0, cref=0.0, vcref=value, safe=0.0, vsafe=value,
             gsafe=grad)
    while not (s["done"] or s["failed"]):
        n = dict(s)
        if not s["found"]:
            t = guess if s["count"] == 0 else increase * s["stepsize"]
            v, g, sl = line(t)
            de, ce = dec_err(t, v, sl, value, sl0), curv_err(sl, sl0)
            err = max(de, ce)
            if de <= tol:
                n.update(safe=t, vsafe=v, gsafe=g)
            high_new = de > 0 or (v >= s["value"] and s["count"] > 0)
            low_new = sl >= 0 and not high_new
            if low_new:
                n.update(low=t, vlow=v, slow=sl, high=s["stepsize"], vhigh=s["value"],
                         shigh=s["slope"])
            else:
                n.update(low=s["stepsize"], vlow=s["value"], slow=s["slope"], high=t, vhigh=v,
                         shigh=sl)
            n["found"] = high_new or low_new or err <= tol
            n["done"] = err <= tol
            n["failed"] = s["count"] + 1 >= max_steps and not n["done"]
            n.update(cref=n["low"], vcref=n["vlow"])
        else:
            lo, hi = s["low"], s["high"]
            delta = abs(hi - lo)
            left, right = min(hi, lo), max(hi, lo)
            mc = cubicmin(lo, s["vlow"], s["slow"], hi, s["vhigh"], s["cref"], s["vcref"])
            mq = quadmin(lo, s["vlow"], s["slow"], hi, s["vhigh"])
            if left + 0.2 * delta < mc < right - 0.2 * delta:
                t = mc
            elif left + 0.1 * delta < mq < right - 0.1 * delta:
                t = mq
            else:
                t = (lo + hi) / 2.0
            v, g, sl = line(t)
            de, ce = dec_err(t, v, sl, value, sl0), curv_err(sl, sl0)
            err = max(de, ce)
            if de <= tol and v < s["vsafe"]:
                n.update(safe=t, vsafe=v, gsafe=g)
            n["done"] = err <= tol
            high_mid = de > 0 or v >= s["vlow"]
            high_low = sl * (hi - lo) >= 0 and not high_mid
            if high_mid:
                n.update(high=t, vhigh=v, shigh=sl)
            if high_low:
                n.update(high=lo, vhigh=s["vlow"], shigh=s["slow"])
            if not high_mid:
                n.update(low=t, vlow=v, slow=sl)
            if high_mid or high_low:
                n.update(cref=hi, vcref=s["vhigh"])
            else:
                n.update(cref=lo, vcref=s["vlow"])
            failed = s["count"] + 1 >= max_steps or (delta <= interval_threshold and
                                                     n["safe"] > 0)
            n["failed"] = failed and not n["done"]
        n.update(count=s["count"] + 1, stepsize=t, value=v, grad=g, slope=sl, de=de, ce=ce)
        if n["failed"] and (n["safe"] > 0 or math.isinf(n["de"])):
            n.update(stepsize=n["safe"], value=n["vsafe"], grad=n["gsafe"])
        s = n
    return s


def lbfgs_run(f, grad_f, x0, steps, memory_size=10, guess_one=True):
    """optax.lbfgs() driven as its docstring does (value_and_grad_from_state); returns, per step,
    the params, the linesearch stepsize and its number of steps."""
    m = memory_size
    x = x0
    prev_p, prev_u = zeros(x), zeros(x)
    dw_mem = [zeros(x) for _ in range(m)]
    du_mem = [zeros(x) for _ in range(m)]
    rho = [0.0] * m
    state_value, state_grad, lr_prev = math.inf, None, 1.0
    out = []
    for count in range(steps):
        if math.isfinite(state_value):
            value, g = state_value, state_grad
        else:
            value, g = f(x), grad_f(x)
        dp = tmap(lambda a, b: a - b, x, prev_p)
        du = tmap(lambda a, b: a - b, g, prev_u)
        vd = vdot(du, dp)
        w = 0.0 if vd == 0 else 1.0 / vd
        if count == 0:
            dp, du, w = zeros(x), zeros(x), 0.0
        prev_idx = (count - 1) % m
        dw_mem[prev_idx], du_mem[prev_idx], rho[prev_idx] = dp, du, w
        den = vdot(du, du)
        scale_ = vdot(du, dp) / den if den > 0 else 1.0
        if count == 0:
            scale_ = min(1.0, 1.0 / math.sqrt(vdot(g, g)))
        idx = [(count % m + j) % m for j in range(m)]
        vec, alphas = g, [0.0] * m
        for j in reversed(range(m)):
            alphas[j] = rho[idx[j]] * vdot(dw_mem[idx[j]], vec)
            vec = tmap(lambda a, b: a - alphas[j] * b, vec, du_mem[idx[j]])
        vec = tmap(lambda a: scale_ * a, vec)
        for j in range(m):
            beta = rho[idx[j]] * vdot(du_mem[idx[j]], vec)
            vec = tmap(lambda a, b: a + (alphas[j] - beta) * b, vec, dw_mem[idx[j]])
        prev_p, prev_u = x, g
        direction = tmap(lambda a: -a, vec)
        ls = zoom_linesearch(lambda p: (f(p), grad_f(p)), x, direction, value, g,
                             1.0 if guess_one else lr_prev)
        lr_prev = ls["stepsize"]
        x = tmap(lambda a, d: a + ls["stepsize"] * d, x, direction)
        state_value, state_grad = ls["value"], ls["grad"]
        out.append((x, ls["stepsize"], ls["count"]))
    return out


def backtracking_run(f, grad_f, x0, steps, max_steps=15, slope_rtol=1e-4, decrease=0.8,
                     increase=1.5, max_lr=1.0):
    """sgd(1) then scale_by_backtracking_linesearch(max_steps): (params, lr, steps) per step."""
    x, lr_state, out = x0, 1.0, []
    for _ in range(steps):
        value, g = f(x), grad_f(x)
        u = tmap(lambda a: -a, g)
        slope = vdot(u, g)
        t = min(increase * lr_state, max_lr)
        err, it = math.inf, 0
        while not err <= 0.0 and it <= max_steps:
            if it > 0:
                t = decrease * t
            nv = f(tmap(lambda a, b: a + t * b, x, u))
            err = nv - value - t * slope_rtol * slope
            err = math.inf if math.isnan(err) else max(err, 0.0)
            it += 1
        lr_state = 0.0 if math.isinf(err) else t
        x = tmap(lambda a, b: a + lr_state * b, x, u)
        out.append((x, lr_state, it))
    return out


# ---- drivers ------------------------------------------------------------------------------------


def docstring(tx, lr_steps=5, extra=False):
    init, update = tx
    p = {"x": np.array([1.0, 2.0, 3.0])}
    s = init(p)
    out = []
    for _ in range(lr_steps):
        g = {"x": 2 * p["x"]}
        kw = {"value": float(np.sum(p["x"] ** 2))} if extra else {}
        u, s = update(g, s, p, **kw)
        p = tmap(lambda a, b: a + b, p, u)
        out.append("%.2E" % float(np.sum(p["x"] ** 2)))
    return out


DOCSTRINGS = {  # optax 0.2.8's docstring examples: the printed objective values
    "adabelief(0.003)": (adabelief(0.003), "1.40E+01 1.39E+01 1.39E+01 1.38E+01 1.38E+01"),
    "adadelta(10.0)": (adadelta(10.0), "1.36E+01 1.32E+01 1.29E+01 1.25E+01 1.21E+01"),
    "adan(0.1)": (adan(0.1), "1.28E+01 1.17E+01 1.07E+01 9.68E+00 8.76E+00"),
    "amsgrad(0.003)": (amsgrad(0.003), "1.40E+01 1.39E+01 1.39E+01 1.39E+01 1.38E+01"),
    "fromage(0.003)": (fromage(0.003), "1.39E+01 1.38E+01 1.37E+01 1.37E+01 1.36E+01"),
    "lars(0.003)": (lars(0.003), "1.40E+01 1.40E+01 1.40E+01 1.40E+01 1.40E+01"),
    "sign_sgd(0.003)": (sign_sgd(0.003), "1.40E+01 1.39E+01 1.39E+01 1.39E+01 1.38E+01"),
    "novograd(0.003)": (novograd(0.003), "1.40E+01 1.39E+01 1.39E+01 1.38E+01 1.37E+01"),
    "optimistic_gradient_descent(0.003)": (
        optimistic_gradient_descent(0.003), "1.38E+01 1.37E+01 1.35E+01 1.33E+01 1.32E+01"),
    "radam(0.003)": (radam(0.003), "1.38E+01 1.37E+01 1.35E+01 1.33E+01 1.32E+01"),
    "sm3(0.003)": (sm3(0.003), "1.40E+01 1.40E+01 1.40E+01 1.40E+01 1.40E+01"),
    "yogi(0.002)": (yogi(0.002), "1.40E+01 1.40E+01 1.39E+01 1.39E+01 1.39E+01"),
    "adamax(0.003)": (adamax(0.003), "1.40E+01 1.39E+01 1.39E+01 1.39E+01 1.38E+01"),
    "adamaxw(0.003)": (adamaxw(0.003), "1.40E+01 1.39E+01 1.39E+01 1.39E+01 1.38E+01"),
    "rprop(0.003)": (rprop(0.003), "1.40E+01 1.40E+01 1.39E+01 1.39E+01 1.38E+01"),
}

# The test problem of the trajectories: f = 0.5 * sum(A * p**2) over the leaves, grad = A * p.
P0 = {"b": np.array([0.5, -1.5, 2.0]), "w": np.array([[1.0, -2.0, 0.5], [0.25, 3.0, -1.0]])}
A = {"b": np.array([1.0, 0.5, 2.0]), "w": np.array([[1.0, 2.0, 3.0], [0.5, 1.5, 4.0]])}


def trajectory(tx, steps=3, extra=False):
    init, update = tx
    p = P0
    s = init(p)
    out = []
    for _ in range(steps):
        g = tmap(lambda a, x: a * x, A, p)
        kw = {"value": 0.5 * vdot(A, tmap(lambda x: x * x, p))} if extra else {}
        u, s = update(g, s, p, **kw)
        p = tmap(lambda a, b: a + b, p, u)
        out.append(np.concatenate([p["b"].ravel(), p["w"].ravel()]))
    return out


TRAJECTORIES = {  # name -> (the C++ call it stands for, the reference transformation)
    "adabelief": ("adabelief(0.1)", adabelief(0.1)),
    "adabelief nesterov": ("adabelief(0.1, 0.8, 0.99, 1e-8, 1e-10, true)",
                           adabelief(0.1, b1=0.8, b2=0.99, eps=1e-8, eps_root=1e-10,
                                     nesterov=True)),
    "adadelta": ("adadelta(0.5, 0.8, 1e-4, 0.01)", adadelta(0.5, 0.8, 1e-4, 0.01)),
    "adadelta no lr": ("adadelta()", adadelta()),
    "adamax": ("adamax(0.1)", adamax(0.1)),
    "adamaxw": ("adamaxw(0.1, 0.9, 0.99, 1e-8, 0.05)", adamaxw(0.1, 0.9, 0.99, 1e-8, 0.05)),
    "adan": ("adan(0.1)", adan(0.1)),
    "adan wd": ("adan(0.05, 0.9, 0.9, 0.95, 1e-6, 1e-6, 0.02)",
                adan(0.05, 0.9, 0.9, 0.95, 1e-6, 1e-6, 0.02)),
    "amsgrad": ("amsgrad(0.1)", amsgrad(0.1)),
    "amsgrad no bias correction": (
        "amsgrad(0.1, 0.9, 0.99, 1e-8, 0.0, std::nullopt, false, false)",
        amsgrad(0.1, b2=0.99, bc_mu=False, bc_nu=False)),
    "novograd": ("novograd(0.1)", novograd(0.1)),
    "novograd wd": ("novograd(0.1, 0.8, 0.5, 1e-6, 0.0, 0.1)", novograd(0.1, 0.8, 0.5, 1e-6, 0.0,
                                                                       0.1)),
    "radam": ("radam(0.1)", radam(0.1)),
    # 7 steps: ro, the SMA length, first reaches the threshold 5 at step 6.
    "radam rectified": ("radam(0.01), 7 steps", radam(0.01), 7),
    "radam nesterov": ("radam(0.01, 0.9, 0.999, 1e-8, 0.0, 5.0, true), 7 steps",
                       radam(0.01, nesterov=True), 7),
    "yogi": ("yogi(0.1)", yogi(0.1)),
    "sm3": ("sm3(0.1)", sm3(0.1)),
    "sign_sgd": ("sign_sgd(0.1)", sign_sgd(0.1)),
    "signum": ("signum(0.1)", signum(0.1)),
    "fromage": ("fromage(0.1)", fromage(0.1)),
    "lars": ("lars(0.1, 0.01, true, 0.5)", lars(0.1, 0.01, 0.5)),
    "lars nesterov": ("lars(0.1, 0.0, true, 0.001, 0.0, true, 0.9, true)",
                      lars(0.1, nesterov=True)),
    "rprop": ("rprop(0.1)", rprop(0.1)),
    "optimistic_gradient_descent": ("optimistic_gradient_descent(0.1, 0.5, 2.0)",
                                    optimistic_gradient_descent(0.1, 0.5, 2.0)),
    "optimistic_adam": ("optimistic_adam(0.1, 0.5)", optimistic_adam(0.1, 0.5)),
    "optimistic_adam_v2": ("optimistic_adam_v2(0.1, 0.5, 2.0)", optimistic_adam_v2(0.1, 0.5, 2.0)),
}


def rosenbrock(p):
    x = p["x"]
    return float(np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2))


def rosenbrock_grad(p):
    x = p["x"]
    g = np.zeros_like(x)
    g[:-1] += -400.0 * x[:-1] * (x[1:] - x[:-1] ** 2) - 2.0 * (1.0 - x[:-1])
    g[1:] += 200.0 * (x[1:] - x[:-1] ** 2)
    return {"x": g}


def fmt(v):
    return ", ".join("%.17g" % x for x in v)


def main():
    for name, (tx, want) in DOCSTRINGS.items():
        got = " ".join(docstring(tx))
        assert got == want, (name, got, want)
    got = docstring(polyak_sgd(), extra=True)  # the docstring applies updates as new params
    print("docstrings: %d optimizers match optax's printed values" % len(DOCSTRINGS))

    for name, (call, tx, *steps) in TRAJECTORIES.items():
        print("// %s: %s" % (name, call))
        for x in trajectory(tx, *steps):
            print("{%s}," % fmt(x))
    print("// polyak_sgd(): polyak_sgd(1.0, 1.0, 0.0, 0.0, 'sps')")
    for x in trajectory(polyak_sgd(), extra=True):
        print("{%s}," % fmt(x))
    print("// polyak_sgd(0.3, 0.5, 1.0, 0.0, 'sps+')")
    for x in trajectory(polyak_sgd(0.3, 0.5, 1.0, 0.0, "sps+"), extra=True):
        print("{%s}," % fmt(x))

    x0 = {"x": np.array([-1.2, 1.0, 0.8])}
    print("// lbfgs() on the 3-d Rosenbrock function from [-1.2, 1, 0.8]: params, stepsize, steps")
    for x, t, n in lbfgs_run(rosenbrock, rosenbrock_grad, x0, 8):
        print("{{%s}, %.17g, %d}," % (fmt(x["x"]), t, n))
    print("// lbfgs(nullopt, 3) memory 3, on the same problem")
    for x, t, n in lbfgs_run(rosenbrock, rosenbrock_grad, x0, 8, memory_size=3):
        print("{{%s}, %.17g, %d}," % (fmt(x["x"]), t, n))
    x2 = {"x": np.array([-1.2, 1.0])}
    print("// lbfgs() on the 2-d Rosenbrock function from [-1.2, 1]: params, stepsize, steps")
    for x, t, n in lbfgs_run(rosenbrock, rosenbrock_grad, x2, 12):
        print("{{%s}, %.17g, %d}," % (fmt(x["x"]), t, n))
    quad = lambda p: 0.5 * vdot(A, tmap(lambda x: x * x, p))
    quad_grad = lambda p: tmap(lambda a, x: a * x, A, p)
    print("// sgd(1) + scale_by_backtracking_linesearch(15) on the trajectory problem")
    for x, t, n in backtracking_run(quad, quad_grad, P0, 4):
        print("{{%s}, %.17g, %d}," % (fmt(np.concatenate([x["b"], x["w"].ravel()])), t, n))
    print("// lbfgs() docstring: f = sum(x**2) from [1, 2, 3]")
    sq = lambda p: float(np.sum(p["x"] ** 2))
    for x, t, n in lbfgs_run(sq, lambda p: {"x": 2 * p["x"]}, {"x": np.array([1.0, 2.0, 3.0])},
                             2):
        print("%.2E (stepsize %.17g, %d steps)" % (sq(x), t, n))


if __name__ == "__main__":
    main()
