#!/usr/bin/env python3
"""Known answers for tests/optim/test_contrib_{sophia,reduce_on_plateau,sam,momo,galore}.cpp
and test_assignment.cpp: an independent NumPy implementation of optax 0.2.8's contrib optimizers
sophia, reduce_on_plateau, sam, momo, momo_adam and galore (written from
optax/contrib/_{sophia,reduce_on_plateau,sam,momo,galore}.py at tag v0.2.8) and of its two
Hungarian algorithms (optax/assignment/_hungarian_algorithm.py), on the trajectory problem of
reference_optax.py.

  /usr/bin/python3 tests/optim/reference_optax_contrib_more.py

It first replays the docstring examples of momo, momo_adam, galore and the Hungarian algorithms
and asserts that the printed values match the ones optax's docs show. Then it prints, in float64
with 17 significant digits, the trajectories that the C++ tests embed (params b then w,
row-major), and the assignments of the tie-breaking matrices.
"""
import itertools

import numpy as np

from reference_optax import (A, P0, add_decayed_weights, bc, chain, fmt, lr, scale_by_adam,
                             sgd, tmap, vdot, zeros)

EPS64 = np.finfo(float).eps  # jnp.finfo(float).eps: momo's "no step" threshold


def quad_value(p):
    return 0.5 * vdot(A, tmap(lambda x: x * x, p))


def run(tx, steps=3, p0=P0, **fixed):
    """Steps on f = 0.5 sum(A p**2): each update gets value=f(p) (and the extra keywords)."""
    init, update = tx
    p, s, out = p0, init(p0), []
    for _ in range(steps):
        g = tmap(lambda a, x: a * x, A, p)
        u, s = update(g, s, p, value=quad_value(p), **fixed)
        p = tmap(lambda a, b: a + b, p, u)
        out.append(np.concatenate([p["b"].ravel(), p["w"].ravel()]))
    return out


def global_norm(t):
    return float(np.sqrt(sum(float(np.sum(x * x)) for x in t.values())))


# ---- sophia (optax/contrib/_sophia.py) -----------------------------------------------------------


def scale_by_sophia(b1=0.965, b2=0.99, eps=1e-8, gamma=0.01, clip_threshold=1.0,
                    update_interval=10):
    """State: (count, mu, nu). The Hessian diagonal is Hutchinson's estimate (H r) * r, which on
    the trajectory problem (Hessian diag(A)) is A itself, whatever the signs r."""

    def update(g, s, p, **e):
        c, mu, nu = s
        mu = tmap(lambda x, m: (1 - b1) * x + b1 * m, g, mu)
        u = tmap(lambda m, h: bc(m, b1, c + 1) / np.maximum(gamma * h, eps), mu, nu)
        if clip_threshold is not None:
            u = tmap(lambda x: np.clip(x, -clip_threshold, clip_threshold), u)
        if c % update_interval == 0:
            nu = tmap(lambda h, n: (1 - b2) * h + b2 * n, A, nu)
        return u, (c + 1, mu, nu)

    return (lambda p: (0, zeros(p), zeros(p))), update


def sophia(lr_, b1=0.965, b2=0.99, eps=1e-8, wd=1e-4, gamma=0.01, clip_threshold=1.0,
           update_interval=10):
    return chain(scale_by_sophia(b1, b2, eps, gamma, clip_threshold, update_interval),
                 add_decayed_weights(wd), lr(lr_))


# ---- reduce_on_plateau (optax/contrib/_reduce_on_plateau.py) ------------------------------------


def reduce_on_plateau(factor=0.1, patience=10, rtol=1e-4, atol=0.0, cooldown=0,
                      accumulation_size=1, min_scale=0.0):
    """State: (scale, best_value, plateau_count, cooldown_count, count, avg_value)."""

    def update_scale(s):
        scale, best, plateau, cool, count, avg = s
        improved = avg < (1 - rtol) * best - atol
        best = avg if improved else best
        curr = 0 if improved else plateau + 1
        if cool > 0:
            return (scale, best, 0, cool - 1, 0, 0.0)
        hit = curr == patience
        return (max(scale * factor if hit else scale, min_scale), best, 0 if hit else curr,
                cooldown if hit else 0, 0, 0.0)

    def update(g, s, p, value, **e):
        scale, best, plateau, cool, count, avg = s
        avg = (count * avg + value) / (count + 1)
        s = (scale, best, plateau, cool, count + 1, avg)
        if count + 1 == accumulation_size:
            s = update_scale(s)
        return tmap(lambda x: s[0] * x, g), s

    return (lambda p: (1.0, np.inf, 0, 0, 0, 0.0)), update


# ---- sam (optax/contrib/_sam.py) -----------------------------------------------------------------


def normalize():
    def update(g, s, p, **e):
        n = global_norm(g)
        return tmap(lambda x: x / n, g), s

    return (lambda p: None), update


def sam(opt, adv, sync_period=2, reset_state=True, opaque_mode=False):
    """State: [steps_since_sync, opt_state, adv_state, cache]; optax's pick_one is an if here
    (cond * a + (1 - cond) * b is a or b exactly for finite values)."""
    (oinit, oupdate), (ainit, aupdate) = opt, adv

    def init(p):
        return (0, oinit(p), ainit(p), None if opaque_mode else p)

    def transparent(g, s, p, **e):
        steps, os_, as_, cache = s
        first, last = steps == 0, steps == sync_period - 1
        au, as2 = aupdate(g, as_, p)
        au = tmap(lambda x: -x, au)
        ou, os2 = oupdate(g, os_, cache)
        ou = tmap(lambda c, q, u: c - q + u, cache, p, ou)
        cache = p if first else cache
        u = ou if last else au
        if last:
            as2 = ainit(p) if reset_state else as_
        os2 = os2 if last else os_
        return u, ((steps + 1) % sync_period, os2, as2, cache)

    def opaque(g, s, p, grad_fn, **e):
        steps, os_, as_, cache = s
        adv_p, adv_u = p, g
        for i in range(sync_period - 1):
            adv_u, as_ = aupdate(adv_u, as_, adv_p)
            adv_u = tmap(lambda x: -x, adv_u)
            adv_p = tmap(lambda a, b: a + b, adv_p, adv_u)
            adv_u = grad_fn(adv_p, i)
        if reset_state:
            as_ = ainit(p)
        u, os_ = oupdate(adv_u, os_, p)
        return u, (0, os_, as_, None)

    return init, opaque if opaque_mode else transparent


def quad_grad(p, _=None):
    return tmap(lambda a, x: a * x, A, p)


# ---- momo (optax/contrib/_momo.py) ---------------------------------------------------------------


def momo(lr_=1.0, beta=0.9, lower_bound=0.0, wd=0.0, adapt_lower_bound=False):
    """State: (exp_avg, barf, gamma, lb, count)."""

    def update(g, s, p, value, **e):
        ea, barf, gam, lb, c = s
        bt = 0.0 if c == 0 else beta
        barf = bt * barf + (1 - bt) * value
        ea = tmap(lambda m, x: bt * m + (1 - bt) * x, ea, g)
        gam = bt * gam + (1 - bt) * vdot(g, p)
        norm = vdot(ea, ea)
        iprod = vdot(ea, p)
        alpha = lr_(c) if callable(lr_) else lr_
        k = 1 + alpha * wd
        this_lb = lb
        if adapt_lower_bound:
            cap = k * (barf - gam) + iprod
            this_lb = max(cap / (2 * k), lower_bound) if cap < k * lb else lb
        t1 = max(k * (barf - this_lb - gam) + iprod, 0.0) / norm
        t1 = 0.0 if norm <= EPS64 else t1
        tau = min(alpha, t1)
        u = tmap(lambda m, q: -(alpha * wd) / k * q - tau * m, ea, p)
        if adapt_lower_bound:
            lb = max((barf + iprod - gam) - 0.5 * tau * norm, lower_bound)
        return u, (ea, barf, gam, lb, c + 1)

    return (lambda p: (zeros(p), 0.0, 0.0, lower_bound, 0)), update


def momo_adam(lr_=1e-2, b1=0.9, b2=0.999, eps=1e-8, lower_bound=0.0, wd=0.0,
              adapt_lower_bound=False):
    """State: (exp_avg, exp_avg_sq, barf, gamma, lb, count)."""

    def update(g, s, p, value, **e):
        ea, eas, barf, gam, lb, c = s
        ci = c + 1
        barf = b1 * barf + (1 - b1) * value
        ea = tmap(lambda m, x: b1 * m + (1 - b1) * x, ea, g)
        eas = tmap(lambda v, x: b2 * v + (1 - b2) * x * x, eas, g)
        bc2 = 1 - b2**ci
        prec = tmap(lambda v: eps + np.sqrt(v / bc2), eas)
        norm = vdot(ea, tmap(lambda m, q: m / q, ea, prec))
        gam = b1 * gam + (1 - b1) * vdot(g, p)
        iprod = vdot(ea, p)
        alpha = lr_(c) if callable(lr_) else lr_
        bc1 = 1 - b1**ci
        k = 1 + alpha * wd
        this_lb = lb
        if adapt_lower_bound:
            cap = k * (barf - gam) + iprod
            this_lb = max(cap / (2 * bc1 * k), lower_bound) if cap < k * bc1 * lb else lb
        t1 = max(k * (barf - bc1 * this_lb - gam) + iprod, 0.0) / norm
        t1 = 0.0 if norm <= EPS64 else t1
        tau = min(alpha / bc1, t1)
        u = tmap(lambda m, q, x: -(alpha * wd) / k * x - tau * m / q, ea, prec, p)
        if adapt_lower_bound:
            lb = max(((barf + iprod - gam) - 0.5 * tau * norm) / bc1, lower_bound)
        return u, (ea, eas, barf, gam, lb, ci)

    return (lambda p: (zeros(p), zeros(p), 0.0, 0.0, lower_bound, 0)), update


def momo_docstring(tx):
    """momo's docstrings assign the update to the params and print f = sum(x**2) (float32)."""
    init, update = tx
    x = np.array([1.0, 2.0, 3.0], np.float32)
    s = init({"x": x})
    out = []
    for _ in range(5):
        u, s = update({"x": 2 * x}, s, {"x": x}, value=float(np.sum(x**2)))
        x = u["x"].astype(np.float32)
        out.append(float(np.sum(x**2)))
    return out


# ---- galore (optax/contrib/_galore.py) -----------------------------------------------------------


def projector(g, rank):
    """The GaLore projector of one matrix gradient: the SVD runs in float32."""
    m, n = g.shape
    r = min(rank, m, n)
    u, _, vh = np.linalg.svd(g.astype(np.float32), full_matrices=False)
    return (u[:, :r] if m >= n else vh[:r, :].T).astype(g.dtype)


def scale_by_galore(rank=128, update_proj_gap=200, scale=1.0, base=None):
    """Projects the 2-D leaves (w here); the others pass through the base optimizer whole."""
    binit, bupdate = base if base is not None else scale_by_adam()

    def left(x):
        return x.shape[0] >= x.shape[1]

    def init(p):
        proxy = {}
        for k, x in p.items():
            if x.ndim == 2:
                r = min(rank, *x.shape)
                proxy[k] = np.zeros((r, x.shape[1]) if left(x) else (x.shape[0], r))
            else:
                proxy[k] = np.zeros_like(x)
        proj = {k: np.zeros((0, 0)) for k in p}
        return (0, binit(proxy), proj)

    def update(g, s, p, **e):
        c, bs, proj = s
        low, proj2 = {}, {}
        for k, x in g.items():
            if x.ndim != 2:
                low[k], proj2[k] = x, proj[k]
                continue
            q = projector(x, rank) if c % update_proj_gap == 0 else proj[k]
            low[k], proj2[k] = (q.T @ x if left(x) else x @ q), q
        lu, bs = bupdate(low, bs, None)
        out = {}
        for k, x in g.items():
            if x.ndim != 2:
                out[k] = lu[k]
            else:
                out[k] = scale * (proj2[k] @ lu[k] if left(x) else lu[k] @ proj2[k].T)
        return out, (c + 1, bs, proj2)

    return init, update


def galore(lr_, rank=128, update_proj_gap=200, scale=1.0, base=None, wd=0.0):
    return chain(scale_by_galore(rank, update_proj_gap, scale, base), add_decayed_weights(wd),
                 lr(lr_))


def galore_docstring():
    """galore(0.01, rank=16) on f = sum(w**2), w = ones((100, 100)) (float32)."""
    init, update = galore(0.01, rank=16)
    p = {"b": np.ones(100, np.float32), "w": np.ones((100, 100), np.float32)}
    s = init(p)
    out = []
    for _ in range(5):
        g = {"b": np.zeros(100, np.float32), "w": 2 * p["w"]}
        u, s = update(g, s, p)
        p = tmap(lambda a, b: (a + b).astype(np.float32), p, u)
        out.append("%.2E" % float(np.sum(p["w"].astype(np.float32) ** 2)))
    return " ".join(out)


# ---- the Hungarian algorithms (optax/assignment/_hungarian_algorithm.py) ------------------------


def base_hungarian(cost):
    """Crouse's shortest augmenting path, as optax's base_hungarian_algorithm (float32)."""
    cost = np.asarray(cost)
    if 0 in cost.shape:
        return np.zeros(0, int), np.zeros(0, int)
    transpose = cost.shape[1] < cost.shape[0]
    c = (cost.T if transpose else cost).astype(np.float32)
    nr, nc = c.shape
    u, v = np.zeros(nr, np.float32), np.zeros(nc, np.float32)
    path, col4row, row4col = np.full(nc, -1), np.full(nr, -1), np.full(nc, -1)
    for cur in range(nr):
        min_value = np.float32(0)
        remaining = list(range(nc))[::-1]
        num_remaining = nc
        sr, sc = np.zeros(nr, bool), np.zeros(nc, bool)
        spc = np.full(nc, np.inf, np.float32)
        sink, i = -1, cur
        while sink == -1:
            index, lowest = -1, np.float32(np.inf)
            sr[i] = True
            for it in range(num_remaining):
                j = remaining[it]
                r = min_value + c[i, j] - u[i] - v[j]
                if r < spc[j]:
                    path[j] = i
                spc[j] = min(spc[j], r)
                if spc[j] < lowest or (spc[j] == lowest and row4col[j] == -1):
                    index = it
                lowest = min(lowest, spc[j])
            min_value = lowest
            j = remaining[index]
            if row4col[j] == -1:
                sink = j
            else:
                i = row4col[j]
            sc[j] = True
            num_remaining -= 1
            remaining[index] = remaining[num_remaining]
        u[cur] += min_value
        mask = sr & (np.arange(nr) != cur)
        u = np.where(mask, u + min_value - spc[col4row], u).astype(np.float32)
        v = np.where(sc, v + spc - min_value, v).astype(np.float32)
        j = sink
        while True:
            i = path[j]
            row4col[j] = i
            col4row[i], j = j, col4row[i]
            if i == cur:
                break
    if transpose:
        order = np.argsort(col4row, kind="stable")
        return col4row[order], order
    return np.arange(nr), col4row


def hungarian(cost):
    """Scenic's version (optax's hungarian_algorithm), 1-based columns, float32 potentials."""
    cost = np.asarray(cost)
    if 0 in cost.shape:
        return np.zeros(0, int), np.zeros(0, int)
    transpose = cost.shape[0] > cost.shape[1]
    c = (cost.T if transpose else cost).astype(np.float32)
    rows, cols = c.shape
    u, v = np.zeros(rows + 2, np.float32), np.zeros(cols + 1, np.float32)
    parent = np.zeros(cols + 1, int)
    for row in range(rows):
        parent[0] = row + 1
        path, used = np.zeros(cols, int), np.zeros(cols + 1, bool)
        minv = np.full(cols, np.inf, np.float32)
        col = 0
        while parent[col] != 0:
            used[col] = True
            unused = ~used[1:]
            r = parent[col]
            cur = np.where(unused, c[r - 1, :] - u[r] - v[1:], np.inf).astype(np.float32)
            better = cur < minv
            path = np.where(better, col, path)
            minv = np.where(better, cur, minv)
            masked = np.where(unused, minv, np.inf)
            col = int(np.argmin(masked)) + 1
            delta = masked.min()
            np.add.at(u, np.where(used, parent, rows + 1), delta)
            v = np.where(used, v - delta, v).astype(np.float32)
            minv = np.where(unused, minv - delta, minv).astype(np.float32)
        while col != 0:
            new_col = path[col - 1]
            parent[col] = parent[new_col]
            col = new_col
    if rows == cols:
        par, idx = parent[1:], np.arange(rows)
    else:  # lax.top_k: the largest first, the lower index first among equals
        idx = np.argsort(-parent[1:], kind="stable")[:rows]
        par = parent[1:][idx]
    par = par - 1
    return (idx, par) if transpose else (par, idx)


def brute_force_cost(cost):
    cost = np.asarray(cost, float)
    n, m = cost.shape
    if n <= m:
        return min(sum(cost[i, p[i]] for i in range(n)) for p in itertools.permutations(range(m), n))
    return min(sum(cost[p[j], j] for j in range(m)) for p in itertools.permutations(range(n), m))


DOC_COST1 = [[8, 4, 7], [5, 2, 3], [9, 6, 7], [9, 4, 8]]
DOC_COST2 = [[90, 80, 75, 70], [35, 85, 55, 65], [125, 95, 90, 95], [45, 110, 95, 115],
             [50, 100, 90, 100]]
# Matrices with several optimal assignments: which one each algorithm returns is its tie-breaking.
TIES = {
    "zeros 3x3": np.zeros((3, 3)),
    "ones 2x4": np.ones((2, 4)),
    "ties 3x3": [[1, 1, 2], [1, 1, 2], [2, 2, 1]],
    "ties 4x3": [[0, 1, 1], [1, 0, 0], [1, 0, 0], [0, 1, 1]],
    "ties 3x5": [[2, 1, 1, 3, 1], [1, 2, 2, 1, 3], [3, 1, 1, 1, 2]],
    "checker 4x4": [[0, 1, 0, 1], [1, 0, 1, 0], [0, 1, 0, 1], [1, 0, 1, 0]],
}
# Small integer costs (many ties), from a fixed generator: printed with their assignments.
_ints = np.random.default_rng(7)
for _shape in ((4, 4), (5, 5), (3, 5), (5, 3), (6, 4)):
    TIES["ints %dx%d" % _shape] = _ints.integers(0, 3, size=_shape).tolist()


# ---- runs ----------------------------------------------------------------------------------------

TRAJECTORIES = {  # name -> (the C++ call it stands for, the reference transformation, steps, extra)
    "sophia": ("sophia(0.1)", sophia(0.1), 3, {}),
    "sophia every step": ("sophia(0.1, 0.9, 0.95, 1e-8, 1e-3, mask, 0.5, 1.0, 1)",
                          sophia(0.1, 0.9, 0.95, 1e-8, 1e-3, 0.5, 1.0, 1), 4, {}),
    # eps = 1: without clipping, the first step divides by max(gamma * 0, eps).
    "sophia no clip": ("sophia(0.05, 0.9, 0.9, 1.0, 0.0, mask, 2.0, nullopt, 2)",
                       sophia(0.05, 0.9, 0.9, 1.0, 0.0, 2.0, None, 2), 4, {}),
    "reduce_on_plateau": ("chain(sgd(0.1), reduce_on_plateau(0.5, 1, 0.3, 0.0, 1, 1))",
                          chain(sgd(0.1), reduce_on_plateau(0.5, 1, 0.3, 0.0, 1, 1)), 8, {}),
    "reduce_on_plateau accumulated": (
        "chain(sgd(0.2), reduce_on_plateau(0.2, 1, 0.1, 0.01, 0, 2, 0.05))",
        chain(sgd(0.2), reduce_on_plateau(0.2, 1, 0.1, 0.01, 0, 2, 0.05)), 10, {}),
    "sam": ("sam(sgd(0.1), chain(normalize(), sgd(0.05)))",
            sam(sgd(0.1), chain(normalize(), sgd(0.05))), 4, {}),
    "sam adam no reset": ("sam(adam(0.1), chain(normalize(), adam(0.02)), 3, false)",
                          sam(chain(scale_by_adam(), lr(0.1)),
                              chain(normalize(), scale_by_adam(), lr(0.02)), 3, False), 6, {}),
    "sam opaque": ("sam(sgd(0.1), chain(normalize(), sgd(0.05)), 3, true, true)",
                   sam(sgd(0.1), chain(normalize(), sgd(0.05)), 3, True, True), 3,
                   {"grad_fn": quad_grad}),
    "momo": ("momo()", momo(), 3, {}),
    "momo lr wd adapt": ("momo(lr(t) = 0.5 / (t + 1), 0.8, 0.1, 0.01, true)",
                         momo(lambda t: 0.5 / (t + 1), 0.8, 0.1, 0.01, True), 3, {}),
    "momo_adam": ("momo_adam(0.1)", momo_adam(0.1), 3, {}),
    "momo_adam wd adapt": ("momo_adam(0.5, 0.8, 0.99, 1e-6, 0.2, 0.05, true)",
                           momo_adam(0.5, 0.8, 0.99, 1e-6, 0.2, 0.05, True), 3, {}),
    "galore": ("galore(0.1, 1)", galore(0.1, 1), 3, {}),
    "galore gap wd": ("galore(0.05, 2, 2, 0.5, scale_by_adam(0.8, 0.99), 0.01)",
                      galore(0.05, 2, 2, 0.5, scale_by_adam(0.8, 0.99), 0.01), 3, {}),
}


def main():
    got = momo_docstring(momo())
    assert got == [3.5, 0.0, 0.0, 0.0, 0.0], got
    got = momo_docstring(momo_adam())
    # optax prints float32's 0.00029999594; float64 gives 0.00030000007 (the roundings of bc2).
    assert abs(got[0] - 0.00029999594) < 2e-5 * got[0] and got[1:] == [0.0] * 4, got
    got = galore_docstring()
    assert got == "9.98E+03 9.96E+03 9.94E+03 9.92E+03 9.90E+03", got
    for fn in (base_hungarian, hungarian):
        i, j = fn(np.array(DOC_COST1))
        assert np.array(DOC_COST1)[i, j].sum() == 15
        i, j = fn(np.array(DOC_COST2))
        assert np.array(DOC_COST2)[i, j].sum() == 265
    i, j = base_hungarian(np.array(DOC_COST1))
    assert list(i) == [0, 1, 3] and list(j) == [0, 2, 1], (i, j)
    i, j = base_hungarian(np.array(DOC_COST2))
    assert list(i) == [0, 1, 2, 3] and list(j) == [3, 2, 1, 0], (i, j)
    print("docstrings: momo, momo_adam, galore and the Hungarian algorithms match optax's")

    for name, (call, tx, steps, extra) in TRAJECTORIES.items():
        print("// %s: %s, %d steps" % (name, call, steps))
        for x in run(tx, steps, **extra):
            print("{%s}," % fmt(x))

    # Both algorithms reach the brute-force optimum on random matrices (normal, float32).
    rng = np.random.default_rng(0)
    for n, m in itertools.product(range(1, 6), repeat=2):
        for _ in range(3):
            c = rng.normal(size=(n, m)).astype(np.float32)
            best = brute_force_cost(c)
            for fn in (base_hungarian, hungarian):
                i, j = fn(c)
                assert abs(c[i, j].astype(float).sum() - best) < 1e-5, (fn, c)
    print("// assignments (i then j) of the tie-breaking matrices: base_hungarian, hungarian")
    for name, c in list(TIES.items()) + [("doc 4x3", DOC_COST1), ("doc 5x4", DOC_COST2)]:
        if name.startswith("ints"):
            print("// %s: {%s}" % (name, ", ".join("{%s}" % ", ".join(map(str, r)) for r in c)))
        c = np.array(c, float)
        for fn in (base_hungarian, hungarian):
            i, j = fn(c)
            assert abs(c[i, j].sum() - brute_force_cost(c)) < 1e-9
            print("// %s %s: {%s}, {%s}" % (name, fn.__name__, ", ".join(map(str, i)),
                                             ", ".join(map(str, j))))


if __name__ == "__main__":
    main()
