#!/usr/bin/env python3
"""Known answers for tests/optim/test_contrib_*.cpp: an independent NumPy implementation of
optax 0.2.8's contrib optimizers (written from optax/contrib/_{schedule_free,muon,adopt,
ademamix,dadapt_adamw,prodigy,dog,cocob,mechanic,madgrad,acprop}.py at tag v0.2.8), on the trajectory problem of
reference_optax.py. Sophia, reduce_on_plateau, SAM, MoMo and GaLore are in
reference_optax_contrib_more.py.

  /usr/bin/python3 tests/optim/reference_optax_contrib.py

It first replays the docstring examples of schedule_free_adamw, adopt and dowg (f(x) =
sum(x**2) from [1, 2, 3], five steps) and asserts that the printed objective values match the ones optax's docs
show. Then it prints, in float64 with 17 significant digits, the 3-step trajectories that the
C++ tests embed (params b then w, row-major), and the extra values named in each section.
"""
import math

import numpy as np

from reference_optax import (A, P0, add_decayed_weights, bc, chain, fmt, lr, scale, scale_by_adam,
                             sgd, stateless, tmap, trajectory, vdot, zeros)

# ---- schedule_free (optax/contrib/_schedule_free.py) ---------------------------------------------


def schedule_free(base, learning_rate, b1=0.9, weight_lr_power=2.0):
    """State: (b1, weight_sum, step_count (from 1), max_lr, base_state, z)."""
    binit, bupdate = base

    def init(p):
        return (b1, 0.0, 1, 0.0, binit(p), tmap(np.copy, p))

    def update(g, s, p, **e):
        sb1, wsum, step, max_lr, bs, z = s
        rate = learning_rate(step) if callable(learning_rate) else learning_rate
        max_lr = max(max_lr, rate)
        weight = max_lr**weight_lr_power
        total = wsum + weight
        ck = 0.0 if total == 0 else weight / total  # nan_to_num(0 / 0) = 0
        bu, bs = bupdate(g, bs, p, **e)
        z2 = tmap(lambda a, b: a + b, z, bu)
        prev_x = tmap(lambda y, zi: (y - (1.0 - b1) * zi) / b1, p, z)
        x = tmap(lambda xi, zi: (1.0 - ck) * xi + ck * zi, prev_x, z2)
        new_p = tmap(lambda xi, zi: b1 * xi + (1.0 - b1) * zi, x, z2)
        return tmap(lambda a, b: a - b, new_p, p), (sb1, total, step + 1, max_lr, bs, z2)

    return init, update


def eval_params(s, p):
    b1, z = s[0], s[5]
    return tmap(lambda y, zi: (y - (1.0 - b1) * zi) / b1, p, z)


def warmup_constant(peak, warmup_steps):
    return lambda t: peak * min(t, warmup_steps) / warmup_steps


def scale_by_rms_debiased(decay, eps):
    """scale_by_rms(eps_in_sqrt=False, bias_correction=True): g / (sqrt(nu_hat) + eps)."""

    def update(g, s, p, **e):
        c, nu = s
        nu = tmap(lambda x, v: (1 - decay) * x * x + decay * v, g, nu)
        c += 1
        return tmap(lambda x, v: x / (np.sqrt(bc(v, decay, c)) + eps), g, nu), (c, nu)

    return (lambda p: (0, zeros(p))), update


def schedule_free_sgd(learning_rate=1.0, warmup_steps=None, b1=0.9, weight_decay=None,
                      weight_lr_power=2.0):
    if warmup_steps is not None:
        learning_rate = warmup_constant(learning_rate, warmup_steps)
    opt = sgd(learning_rate)
    if weight_decay is not None:
        opt = chain(add_decayed_weights(weight_decay), opt)
    return schedule_free(opt, learning_rate, b1, weight_lr_power)


def schedule_free_adamw(learning_rate=0.0025, warmup_steps=None, b1=0.9, b2=0.999, eps=1e-8,
                        weight_decay=0.0, weight_lr_power=2.0):
    if warmup_steps is not None:
        learning_rate = warmup_constant(learning_rate, warmup_steps)
    opt = chain(scale_by_rms_debiased(b2, eps), add_decayed_weights(weight_decay), lr(learning_rate))
    return schedule_free(opt, learning_rate, b1, weight_lr_power)


# ---- muon (optax/contrib/_muon.py) ---------------------------------------------------------------

STANDARD = [(3.4445, -4.7750, 2.0315)]
DION = [(4.0848, -6.8946, 2.9270), (3.9505, -6.3029, 2.6377), (3.7418, -5.5913, 2.3037),
        (2.8769, -3.1427, 1.2046), (2.8366, -3.0525, 1.2012)]


def newton_schulz(x, coeffs, ns_steps=5, preconditioning="frobenius", eps=1e-8):
    """orthogonalize_via_newton_schulz on one matrix; coeffs: one row (repeated ns_steps
    times) or a list of rows (one per iteration)."""
    rows = coeffs * ns_steps if len(coeffs) == 1 else coeffs
    transposed = x.shape[0] > x.shape[1]
    if transposed:
        x = x.T
    if preconditioning == "frobenius":
        x = x / (np.linalg.norm(x, "fro") + eps)
    elif preconditioning == "spectral":
        x = x / (np.linalg.norm(x, 2) + eps)
    for i, (c0, c1, c2) in enumerate(rows):
        a = x @ x.T
        if i == 0 and preconditioning == "aol":
            s = (1.0 / np.sqrt(np.maximum(np.abs(a).sum(axis=-1), eps)))[:, None]
            x, a = x * s, a * s * s.T
        elif i == 0 and preconditioning == "schatten":
            s = 1.0 / math.sqrt(max(np.linalg.norm(a, "fro"), eps))
            x, a = x * s, a * s * s
        x = c0 * x + (c1 * a + c2 * a @ a) @ x
    return x.T if transposed else x


def scale_by_muon(coeffs=STANDARD, ns_steps=5, beta=0.95, eps=1e-8, nesterov=True,
                  adaptive=False, preconditioning="frobenius"):
    if len(coeffs) > 1:
        coeffs = coeffs[-ns_steps:]

    def update(g, s, p, **e):
        c, mu = s
        mu = tmap(lambda x, m: (1 - beta) * x + beta * m, g, mu)
        c += 1
        if nesterov:
            mh = tmap(lambda m, x: beta * bc(m, beta, c + 1) + (1 - beta) * bc(x, beta, c), mu, g)
        else:
            mh = tmap(lambda m: bc(m, beta, c), mu)
        u = tmap(lambda m: newton_schulz(m, coeffs, ns_steps, preconditioning, eps), mh)
        if adaptive:
            u = tmap(lambda m, y: np.sum(m * y) * y, mh, u)
        return u, (c, mu)

    return (lambda p: (0, zeros(p))), update


def scale_by_shape(consistent_rms=None):
    def f(u):
        fan_in, fan_out = u.shape[0], u.shape[1]
        if consistent_rms is None:
            return math.sqrt(max(1, fan_out / fan_in)) * u
        return math.sqrt(max(fan_in, fan_out)) * consistent_rms * u

    return (lambda p: None), (lambda g, s, p, **e: (tmap(f, g), s))


def muon(lr_, coeffs=STANDARD, ns_steps=5, beta=0.95, eps=1e-8, weight_decay=0.0, nesterov=True,
         adaptive=False, preconditioning="frobenius", adam_b1=0.9, adam_b2=0.999,
         adam_eps_root=0.0, adam_weight_decay=0.0, adam_lr=None, consistent_rms=None):
    """partition: 2-D leaves (here only w) through the muon chain, the others through adamw."""
    adam_lr = lr_ if adam_lr is None else adam_lr
    mu_init, mu_update = chain(
        scale_by_muon(coeffs, ns_steps, beta, eps, nesterov, adaptive, preconditioning),
        scale_by_shape(consistent_rms), add_decayed_weights(weight_decay), lr(lr_))
    ad_init, ad_update = chain(
        scale_by_adam(adam_b1, adam_b2, eps, adam_eps_root, nesterov),
        add_decayed_weights(adam_weight_decay), lr(adam_lr))
    sub = lambda t, two_d: {k: v for k, v in t.items() if (v.ndim == 2) == two_d}

    def init(p):
        return mu_init(sub(p, True)), ad_init(sub(p, False))

    def update(g, s, p, **e):
        um, sm = mu_update(sub(g, True), s[0], sub(p, True))
        ua, sa = ad_update(sub(g, False), s[1], sub(p, False))
        return {**um, **ua}, (sm, sa)

    return init, update


# ---- adopt (optax/contrib/_adopt.py) -------------------------------------------------------------


def scale_by_adopt(b1=0.9, b2=0.9999, eps=1e-6, nesterov=False, use_clipping=True,
                   clip_value_fn=lambda x: x**0.25):
    def update(g, s, p, **e):
        c, mu, nu = s
        b2_ = b2 if c > 0 else 0.0
        b1_ = b1 if c > 0 else 1.0
        nu2 = tmap(lambda x, v: (1 - b2_) * x * x + b2_ * v, g, nu)
        mu_u = tmap(lambda x, v: x / np.maximum(np.sqrt(v), eps), g, nu)  # the previous nu
        if use_clipping:
            cv = clip_value_fn(float(c))
            mu_u = tmap(lambda x: np.clip(x, -cv, cv), mu_u)
        mu = tmap(lambda x, m: (1 - b1_) * x + b1_ * m, mu_u, mu)
        u = tmap(lambda x, m: (1 - b1_) * x + b1_ * m, mu_u, mu) if nesterov else mu
        return u, (c + 1, mu, nu2)

    return (lambda p: (0, zeros(p), zeros(p))), update


def adopt(lr_, b1=0.9, b2=0.9999, eps=1e-6, nesterov=False, use_clipping=True,
          clip_value_fn=lambda x: x**0.25):
    return chain(scale_by_adopt(b1, b2, eps, nesterov, use_clipping, clip_value_fn), lr(lr_))


# ---- ademamix (optax/contrib/_ademamix.py) -------------------------------------------------------


def scale_by_ademamix(b1=0.9, b2=0.999, b3=0.9999, alpha=6.0, eps=1e-8, eps_root=0.0):
    def update(g, s, p, **e):
        c, cm2, m1, m2, nu = s
        cb3 = b3(cm2) if callable(b3) else b3
        ca = alpha(cm2) if callable(alpha) else alpha
        m1 = tmap(lambda x, m: (1 - b1) * x + b1 * m, g, m1)
        m2 = tmap(lambda x, m: (1 - cb3) * x + cb3 * m, g, m2)
        nu = tmap(lambda x, v: (1 - b2) * x * x + b2 * v, g, nu)
        c, cm2 = c + 1, cm2 + 1
        u = tmap(lambda a, b, v: (bc(a, b1, c) + ca * b) / (np.sqrt(bc(v, b2, c) + eps_root) + eps),
                 m1, m2, nu)
        return u, (c, cm2, m1, m2, nu)

    return (lambda p: (0, 0, zeros(p), zeros(p), zeros(p))), update


def ademamix(lr_, b1=0.9, b2=0.999, b3=0.9999, alpha=5.0, eps=1e-8, eps_root=0.0, wd=0.0):
    return chain(scale_by_ademamix(b1, b2, b3, alpha, eps, eps_root), add_decayed_weights(wd),
                 lr(lr_))


def scale_by_simplified_ademamix(b1=0.99, b2=0.95, alpha=0.0, eps=1e-8, eps_root=0.0):
    def update(g, s, p, **e):
        t, m, n = s
        ca = alpha(t) if callable(alpha) else alpha
        m = tmap(lambda x, y: x + b1 * y, g, m)
        n = tmap(lambda x, y: x * x + b2 * (y - x * x), g, n)  # lerp(b2, g*g, n)
        t += 1
        u = tmap(lambda a, x, v: (a + ca * x) / (np.sqrt(bc(v, b2, t) + eps_root) + eps), m, g, n)
        return u, (t, m, n)

    return (lambda p: (0, zeros(p), zeros(p))), update


def simplified_ademamix(lr_, b1=0.99, b2=0.95, alpha=0.0, eps=1e-8, eps_root=0.0, wd=0.0):
    return chain(scale_by_simplified_ademamix(b1, b2, alpha, eps, eps_root),
                 add_decayed_weights(wd), lr(lr_))


# ---- learning-rate-free (optax/contrib/_{dadapt_adamw,prodigy,dog,cocob}.py) -----------------------


def l1(t):
    return sum(float(np.sum(np.abs(x))) for x in t.values())


def sq_norm(t):
    return sum(float(np.sum(x * x)) for x in t.values())


def dadapt_adamw(lr_=1.0, betas=(0.9, 0.999), eps=1e-8, estim_lr0=1e-6, wd=0.0):
    """State: (exp_avg, exp_avg_sq, grad_sum, estim_lr, numerator_weighted, count)."""
    b1, b2 = betas
    sb2 = b2**0.5

    def init(p):
        return (zeros(p), zeros(p), zeros(p), estim_lr0, 0.0, 0)

    def update(g, s, p, **e):
        ea, eas, gs, d, nw, c = s
        sched = lr_(c) if callable(lr_) else lr_
        c += 1
        dlr = d * sched * (1 - b2**c) ** 0.5 / (1 - b1**c)
        acum = vdot(g, tmap(lambda x, v: x / (np.sqrt(v) + eps), gs, eas))
        ea = tmap(lambda m, x: b1 * m + (1 - b1) * dlr * x, ea, g)
        eas = tmap(lambda v, x: b2 * v + (1 - b2) * x * x, eas, g)
        gs = tmap(lambda m, x: sb2 * m + (1 - sb2) * dlr * x, gs, g)
        nw = sb2 * nw + (1 - sb2) * dlr * acum
        d = max(d, nw / ((1 - sb2) * l1(gs)))
        u = tmap(lambda m, v, x: -wd * dlr * x - m / (np.sqrt(v) + eps), ea, eas, p)
        return u, (ea, eas, gs, d, nw, c)

    return init, update


def prodigy(lr_=1.0, betas=(0.9, 0.999), beta3=None, eps=1e-8, estim_lr0=1e-6, coef=1.0, wd=0.0,
            safeguard_warmup=False):
    """State: (exp_avg, exp_avg_sq, grad_sum, params0, estim_lr, numerator_weighted, count)."""
    b1, b2 = betas
    b3 = b2**0.5 if beta3 is None else beta3

    def init(p):
        return (zeros(p), zeros(p), zeros(p), tmap(np.copy, p), estim_lr0, 0.0, 0)

    def update(g, s, p, **e):
        ea, eas, gs, p0, d, nw, c = s
        sched = lr_(c) if callable(lr_) else lr_
        c += 1
        dlr = d * sched * (1 - b2**c) ** 0.5 / (1 - b1**c)
        dg = tmap(lambda x: d * x, g)
        acum = vdot(g, tmap(lambda a, b: a - b, p0, p))
        ea = tmap(lambda m, x: b1 * m + (1 - b1) * x, ea, dg)
        eas = tmap(lambda v, x: b2 * v + (1 - b2) * x * x, eas, dg)
        w = d if safeguard_warmup else dlr
        gs = tmap(lambda m, x: b3 * m + w * x / estim_lr0, gs, dg)
        nw = b3 * nw + (d / estim_lr0) * dlr * acum
        d = max(d, coef * nw / l1(gs))
        u = tmap(lambda m, v, x: -wd * dlr * x - dlr * m / (np.sqrt(v) + d * eps), ea, eas, p)
        return u, (ea, eas, gs, p0, d, nw, c)

    return init, update


def scale_by_dog(init_step, eps=1e-8):
    """State: (is_init_step, init_params, max_dist, sum_sq_norm_grads)."""
    kind, value = init_step

    def init(p):
        r = {"distance": value, "learning_rate": 0.0,
             "heuristic": value * (1 + math.sqrt(sq_norm(p)))}[kind]
        return (True, tmap(np.copy, p), r, 0.0)

    def update(g, s, p, **e):
        first, p0, max_dist, ssq = s
        max_dist = max(max_dist, math.sqrt(sq_norm(tmap(lambda a, b: a - b, p0, p))))
        ssq += sq_norm(g)
        rate = max_dist / math.sqrt(ssq + eps)
        if kind == "learning_rate" and first:
            rate = value
        return tmap(lambda x: rate * x, g), (False, p0, max_dist, ssq)

    return init, update


def dog(lr_=1.0, init_step=("heuristic", 1e-6), eps=1e-8, wd=None):
    first = add_decayed_weights(wd) if wd is not None else stateless(lambda g, p: g)
    return chain(first, scale_by_dog(init_step, eps), lr(lr_))


def scale_by_dowg(init_estim_sq_dist=None, eps=1e-4):
    """State: (init_params, weighted_sq_norm_grads, estim_sq_dist)."""

    def init(p):
        return (tmap(np.copy, p), 0.0, eps if init_estim_sq_dist is None else init_estim_sq_dist)

    def update(g, s, p, **e):
        p0, wsq, d2 = s
        d2 = max(d2, sq_norm(tmap(lambda a, b: a - b, p0, p)))
        wsq = d2 * sq_norm(g) + wsq
        rate = d2 / (math.sqrt(wsq) + eps)
        return tmap(lambda x: rate * x, g), (p0, wsq, d2)

    return init, update


def dowg(lr_=1.0, init_estim_sq_dist=None, eps=1e-4, wd=None):
    first = add_decayed_weights(wd) if wd is not None else stateless(lambda g, p: g)
    return chain(first, scale_by_dowg(init_estim_sq_dist, eps), lr(lr_))


def scale_by_cocob(alpha=100.0, eps=1e-8):
    """State: (init_particles, cumulative_gradients, scale, subgradients, reward)."""

    def init(p):
        return (tmap(np.copy, p), zeros(p), tmap(lambda x: np.full_like(x, eps), p), zeros(p),
                zeros(p))

    def update(g, s, p, **e):
        p0, cg, sc, sg, r = s
        sc = tmap(lambda a, x: np.maximum(a, np.abs(x)), sc, g)
        sg = tmap(lambda a, x: a + np.abs(x), sg, g)
        r = tmap(lambda a, x, y, y0: np.maximum(a - x * (y - y0), 0), r, g, p, p0)
        cg = tmap(lambda a, x: a - x, cg, g)
        u = tmap(lambda y, y0, c, L, G, R: -y + (y0 + c / (L * np.maximum(G + L, alpha * L)) *
                                                 (L + R)), p, p0, cg, sc, sg, r)
        return u, (p0, cg, sc, sg, r)

    return init, update


def cocob(lr_=1.0, alpha=100.0, eps=1e-8, wd=0.0):
    return chain(add_decayed_weights(wd), scale(lr_), scale_by_cocob(alpha, eps))


def mechanize(base, weight_decay=1e-2, eps=1e-8, s_init=1e-6, num_betas=6):
    """State: (base_optimizer_state, count, r, m, v, s, x0)."""
    binit, bupdate = base
    betas = np.array([1.0 - 0.1**i for i in range(1, num_betas + 1)])

    def init(p):
        z = np.zeros(num_betas)
        return (binit(p), 0, z, z, z, np.full(num_betas, s_init), tmap(np.copy, p))

    def update(g, st, p, **e):
        bs, c, r, m, v, s, x0 = st
        neg, bs = bupdate(g, bs, p, **e)
        x0 = tmap(np.copy, p) if c == 0 else x0
        s_sum = float(np.sum(s))
        decay = weight_decay * s_sum * math.sqrt(sq_norm(g)) / (math.sqrt(sq_norm(p)) + eps)
        g = tmap(lambda x, y: x + decay * y, g, p)
        delta_prev = tmap(lambda y, y0: (y0 - y) / (s_sum + eps), p, x0)
        delta = tmap(lambda d, u: d - u, delta_prev, neg)
        h = vdot(g, delta_prev)
        clipped = np.clip(h, -m, m)
        m = np.maximum(betas * m, abs(h) + eps)
        v = betas**2 * v + h**2
        r = betas * r + clipped * s
        s = (s_init / num_betas * m + np.maximum(0.0, r)) / (np.sqrt(v) + eps)
        u = tmap(lambda y0, d, y: (y0 - np.sum(s) * d) - y, x0, delta, p)
        return u, (bs, c + 1, r, m, v, s, x0)

    return init, update

# ---- madgrad, acprop (optax/contrib/_{madgrad,acprop}.py) ------------------------------------------


def scale_by_madgrad(lr_, momentum=0.9, eps=1e-6):
    """State: (count, grad_sum_sq, s, x0)."""

    def init(p):
        return (0, zeros(p), zeros(p), tmap(np.copy, p))

    def update(g, st, p, **e):
        c, gss, s, x0 = st
        rate = lr_(c) if callable(lr_) else lr_
        lamb = (rate + eps) * math.sqrt(c + 1)
        gss = tmap(lambda a, x: a + lamb * x**2, gss, g)
        s = tmap(lambda a, x: a + lamb * x, s, g)
        z = tmap(lambda y0, a, b: y0 - a / (np.cbrt(b) + eps), x0, s, gss)
        u = tmap(lambda zi, y: (1 - momentum) * zi + momentum * y - y, z, p)
        return u, (c + 1, gss, s, x0)

    return init, update


def madgrad(lr_, momentum=0.9, wd=0.0, eps=1e-6):
    return chain(add_decayed_weights(wd), scale_by_madgrad(lr_, momentum, eps))


def scale_by_acprop(b1=0.9, b2=0.999, eps=1e-16, eps_root=1e-16):
    """State: ScaleByBeliefState (count, mu, nu)."""

    def update(g, st, p, **e):
        c, mu, nu = st
        mu2 = tmap(lambda x, m: (1 - b1) * x + b1 * m, g, mu)
        nu2 = tmap(lambda x, m, v: (1 - b2) * (x - m) ** 2 + b2 * v + eps_root, g, mu, nu)
        if c == 0:
            u = tmap(lambda x: x / (1.0 + eps), g)
        else:
            u = tmap(lambda x, v: x / (np.sqrt(bc(v, b2, c)) + eps), g, nu)
        return u, (c + 1, mu2, nu2)

    return (lambda p: (0, zeros(p), zeros(p))), update


def acprop(lr_, b1=0.9, b2=0.999, eps=1e-16, eps_root=1e-16, wd=0.0):
    return chain(scale_by_acprop(b1, b2, eps, eps_root), add_decayed_weights(wd), lr(lr_))

# ---- runs ----------------------------------------------------------------------------------------


def docstring_eval(tx, steps=5):
    """The schedule_free docstrings print f at schedule_free_eval_params after each step."""
    init, update = tx
    p = {"x": np.array([1.0, 2.0, 3.0])}
    s = init(p)
    out = []
    for _ in range(steps):
        u, s = update({"x": 2 * p["x"]}, s, p)
        p = tmap(lambda a, b: a + b, p, u)
        out.append("%.2E" % float(np.sum(eval_params(s, p)["x"] ** 2)))
    return out


def docstring_params(tx, steps=5):
    init, update = tx
    p = {"x": np.array([1.0, 2.0, 3.0])}
    s = init(p)
    out = []
    for _ in range(steps):
        u, s = update({"x": 2 * p["x"]}, s, p)
        p = tmap(lambda a, b: a + b, p, u)
        out.append(p)
    return out


DOWG_DOCSTRING = [13.925367, 13.872763, 13.775433, 13.596172, 13.268837]


def docstring(tx, steps=5):
    init, update = tx
    p = {"x": np.array([1.0, 2.0, 3.0])}
    s = init(p)
    out = []
    for _ in range(steps):
        u, s = update({"x": 2 * p["x"]}, s, p)
        p = tmap(lambda a, b: a + b, p, u)
        out.append("%.2E" % float(np.sum(p["x"] ** 2)))
    return out


TRAJECTORIES = {  # name -> (the C++ call it stands for, the reference transformation)
    "schedule_free_sgd": ("schedule_free_sgd(0.1)", schedule_free_sgd(0.1)),
    "schedule_free_sgd warmup wd": ("schedule_free_sgd(0.2, 2, 0.8, 0.05, 1.5)",
                                    schedule_free_sgd(0.2, 2, 0.8, 0.05, 1.5)),
    "schedule_free_adamw": ("schedule_free_adamw(0.1)", schedule_free_adamw(0.1)),
    "schedule_free_adamw warmup wd": ("schedule_free_adamw(0.1, 2, 0.7, 0.99, 1e-6, 0.02)",
                                      schedule_free_adamw(0.1, 2, 0.7, 0.99, 1e-6, 0.02)),
    "muon": ("muon(0.1)", muon(0.1)),
    "muon dion wd": ("muon(0.05, dion, 5, 0.9, 1e-8, 0.1), adam_learning_rate 0.01",
                     muon(0.05, DION, 5, 0.9, weight_decay=0.1, adam_lr=0.01)),
    "muon aol adaptive": ("muon(0.1, standard, 4), aol, adaptive, no nesterov",
                          muon(0.1, STANDARD, 4, nesterov=False, adaptive=True,
                               preconditioning="aol")),
    "muon schatten rms": ("muon(0.1), schatten, consistent_rms 0.2",
                          muon(0.1, preconditioning="schatten", consistent_rms=0.2)),
    "muon spectral": ("muon(0.1), spectral", muon(0.1, preconditioning="spectral")),
    "adopt": ("adopt(0.1)", adopt(0.1)),
    "adopt nesterov no clipping": ("adopt(0.1, 0.8, 0.99, 1e-6, nullopt, true, false)",
                                   adopt(0.1, 0.8, 0.99, 1e-6, nesterov=True, use_clipping=False)),
    "ademamix": ("ademamix(0.1)", ademamix(0.1)),
    "ademamix schedules": ("ademamix(0.1, 0.8, 0.9, b3(t) = 0.9 + 0.01 t, alpha(t) = t + 1, "
                           "1e-6, 1e-8, wd 0.01)",
                           ademamix(0.1, 0.8, 0.9, lambda t: 0.9 + 0.01 * t, lambda t: t + 1.0,
                                    1e-6, 1e-8, 0.01)),
    "simplified_ademamix": ("simplified_ademamix(0.1)", simplified_ademamix(0.1)),
    "simplified_ademamix alpha wd": ("simplified_ademamix(0.05, 0.9, 0.8, 2.0, 1e-6, 0.0, 0.01)",
                                     simplified_ademamix(0.05, 0.9, 0.8, 2.0, 1e-6, 0.0, 0.01)),
    "dadapt_adamw": ("dadapt_adamw()", dadapt_adamw()),
    "dadapt_adamw schedule wd": ("dadapt_adamw(lr(t) = 1 / (t + 1), {0.8, 0.99}, 1e-6, 1e-3, 0.1)",
                                 dadapt_adamw(lambda t: 1.0 / (t + 1), (0.8, 0.99), 1e-6, 1e-3,
                                              0.1)),
    "prodigy": ("prodigy()", prodigy()),
    "prodigy beta3 coef wd safeguard": (
        "prodigy(lr(t) = 0.5 (t + 1), {0.8, 0.99}, 0.9, 1e-6, 1e-3, 2.0, 0.1, true)",
        prodigy(lambda t: 0.5 * (t + 1), (0.8, 0.99), 0.9, 1e-6, 1e-3, 2.0, 0.1, True)),
    "dog": ("dog()", dog()),
    "dog distance wd": ("dog(0.5, {distance, 0.1}, 1e-8, 0.01)",
                        dog(0.5, ("distance", 0.1), 1e-8, 0.01)),
    "dog learning_rate": ("dog(1.0, {learning_rate, 0.05})", dog(1.0, ("learning_rate", 0.05))),
    "dowg": ("dowg()", dowg()),
    "dowg init wd": ("dowg(0.5, 0.01, 1e-4, 0.01)", dowg(0.5, 0.01, 1e-4, 0.01)),
    "cocob": ("cocob()", cocob()),
    "cocob lr alpha wd": ("cocob(0.5, 10.0, 1e-8, 0.01)", cocob(0.5, 10.0, 1e-8, 0.01)),
    "mechanize sgd": ("mechanize(sgd(0.1))", mechanize(sgd(0.1))),
    "mechanize adam": ("mechanize(adam(0.1), 0.1, 1e-8, 1e-3, 3)",
                       mechanize(chain(scale_by_adam(), lr(0.1)), 0.1, 1e-8, 1e-3, 3)),
    "madgrad": ("madgrad(0.1)", madgrad(0.1)),
    "madgrad schedule wd": ("madgrad(lr(t) = 0.05 (t + 1), 0.5, 0.01, 1e-4)",
                            madgrad(lambda t: 0.05 * (t + 1), 0.5, 0.01, 1e-4)),
    "acprop": ("acprop(0.1)", acprop(0.1)),
    "acprop eps wd": ("acprop(0.05, 0.8, 0.99, 1e-6, 1e-8, 0.01)",
                      acprop(0.05, 0.8, 0.99, 1e-6, 1e-8, 0.01)),
}

DOCSTRINGS = {  # optax 0.2.8's docstring examples: the printed objective values
    "schedule_free_adamw(1.0)": (docstring_eval, schedule_free_adamw(1.0),
                                 "5.00E+00 3.05E+00 1.73E+00 8.94E-01 4.13E-01"),
    "adopt(0.003)": (docstring, adopt(0.003), "1.40E+01 1.40E+01 1.40E+01 1.40E+01 1.40E+01"),
}


def main():
    for name, (run, tx, want) in DOCSTRINGS.items():
        got = " ".join(run(tx))
        assert got == want, (name, got, want)
    # dowg's docstring prints the float32 objective itself: float64 agrees to float32 precision.
    got = [float(np.sum(p["x"] ** 2)) for p in docstring_params(dowg())]
    assert all(abs(a - b) < 1e-6 * b for a, b in zip(got, DOWG_DOCSTRING)), got
    print("docstrings: %d optimizers match optax's printed values" % (len(DOCSTRINGS) + 1))
    print("// schedule_free_sgd() docstring (float64):", " ".join(docstring_eval(
        schedule_free_sgd())))

    for name, (call, tx) in TRAJECTORIES.items():
        print("// %s: %s" % (name, call))
        for x in trajectory(tx):
            print("{%s}," % fmt(x))

    # schedule_free_eval_params after the 3 steps of schedule_free_sgd(0.1).
    init, update = schedule_free_sgd(0.1)
    p, s = P0, init(P0)
    for _ in range(3):
        u, s = update(tmap(lambda a, x: a * x, A, p), s, p)
        p = tmap(lambda a, b: a + b, p, u)
    e = eval_params(s, p)
    print("// schedule_free_eval_params after 3 steps of schedule_free_sgd(0.1)")
    print("{%s}," % fmt(np.concatenate([e["b"], e["w"].ravel()])))

    # The step-size estimates after 20 steps on the trajectory problem.
    for name, tx, field in (("dadapt_adamw()", dadapt_adamw(), 3), ("prodigy()", prodigy(), 4)):
        init, update = tx
        p, s = P0, init(P0)
        for _ in range(20):
            u, s = update(tmap(lambda a, x: a * x, A, p), s, p)
            p = tmap(lambda a, b: a + b, p, u)
        print("// estim_lr after 20 steps of %s: %.17g" % (name, s[field]))

    # One scale_by_muon() output on a fixed 4 x 6 matrix, and its singular values.
    g = np.array([[0.3, -1.2, 0.5, 2.0, -0.7, 0.1], [1.1, 0.4, -0.9, 0.2, 0.6, -1.5],
                  [-0.8, 0.9, 1.3, -0.4, 0.05, 0.7], [0.2, -0.3, 0.8, 1.6, -1.1, 0.9]])
    u = newton_schulz(g, STANDARD)  # the first step's mu_hat is g itself (nesterov or not)
    print("// scale_by_muon() on the 4 x 6 matrix: update, then its singular values")
    print("{%s}," % fmt(u.ravel()))
    print("{%s}," % fmt(np.linalg.svd(u, compute_uv=False)))


if __name__ == "__main__":
    main()
