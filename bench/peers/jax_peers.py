#!/usr/bin/env python3
"""The JAX side of README's Performance workloads W1, W2, W5, each step under jax.jit.

Usage: python3 bench/peers/jax_peers.py --threads N [--workloads W1,W2,W2_b128,W5]
           [--repetitions R] [--min-time S]
Prints one JSON object per line and workload, as torch_peers.py does: {"workload", "threads",
"median_ms", "reps_ms", ...}; a workload that fails prints {"workload", "error"} and the rest
still run. The same shapes, dtype (float32), loss and optimizer as bench/ and torch_peers.py;
W2 runs NHWC as linum does. Each call is timed to completion (block_until_ready), after the
compile and a warm-up.

Threads: XLA's CPU client sizes its thread pools from the CPUs the process may run on, and has
no documented flag for a count, so the process is pinned to N CPUs (sched_setaffinity, as
`taskset -c 0-(N-1)` would) before jax loads. XLA_FLAGS set by the caller are kept.
"""
import argparse
import functools
import json
import os
import statistics
import sys
import time


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--threads", type=int, required=True)
    p.add_argument("--workloads", default="W1,W2,W5")
    p.add_argument("--repetitions", type=int, default=9)
    p.add_argument("--min-time", type=float, default=0.5)
    return p.parse_args()


ARGS = parse_args()


def pin_to_cpus(n):
    """Restricts this process (and every thread it starts later) to n of its allowed CPUs."""
    allowed = sorted(os.sched_getaffinity(0))
    if n > len(allowed):
        print(json.dumps({"warning": f"--threads {n} but only {len(allowed)} CPUs allowed"}),
              file=sys.stderr)
    os.sched_setaffinity(0, set(allowed[:max(1, n)]))
    return sorted(os.sched_getaffinity(0))


CPUS = pin_to_cpus(ARGS.threads)
os.environ.setdefault("JAX_PLATFORMS", "cpu")
for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = str(ARGS.threads)

try:
    import jax
    import jax.numpy as jnp
    from jax import lax
except ImportError as e:
    print(json.dumps({"error": f"no jax in {sys.executable}: {e}"}))
    sys.exit(3)

try:
    import optax
except ImportError:
    optax = None

import numpy as np

RNG = np.random.default_rng(0)


def normal(shape, scale):
    return jnp.asarray(RNG.standard_normal(shape).astype(np.float32) * np.float32(scale))


def block(tree):
    return jax.tree_util.tree_map(lambda a: a.block_until_ready(), tree)


def measure(step):
    """Median over repetitions of the mean wall time (ms) of one call to `step` (blocked)."""
    for _ in range(3):  # compile, then warm-up
        block(step())
    t0, n = time.perf_counter(), 0
    while time.perf_counter() - t0 < 0.1 or n < 1:  # calibrate the iteration count
        block(step())
        n += 1
    per_iter = (time.perf_counter() - t0) / n
    iters = max(1, int(ARGS.min_time / per_iter))
    reps = []
    for _ in range(ARGS.repetitions):
        t0 = time.perf_counter()
        for _ in range(iters):
            out = step()
        block(out)  # jax dispatches asynchronously: the last result done means all are
        reps.append((time.perf_counter() - t0) / iters * 1e3)
    return statistics.median(reps), reps, iters


# ---- W1: grad of mean softmax cross-entropy of a 784-512-512-10 ReLU MLP, batch 128 -----------
def w1():
    sizes = [784, 512, 512, 10]
    params = []
    for i, o in zip(sizes, sizes[1:]):
        params += [normal((i, o), i**-0.5), jnp.zeros((o,), jnp.float32)]
    x = normal((128, 784), 1.0)
    labels = jax.nn.one_hot(jnp.array([(i * 7) % 10 for i in range(128)]), 10)

    def loss(p):
        w1_, b1, w2, b2, w3, b3 = p
        h = jax.nn.relu(x @ w1_ + b1)
        h = jax.nn.relu(h @ w2 + b2)
        return -jnp.mean(jnp.sum(labels * jax.nn.log_softmax(h @ w3 + b3), -1))

    g = jax.jit(jax.grad(loss))
    return measure(lambda: g(params))


# ---- W2: a train step of examples/seed_models.hpp's CNN, NHWC, value_and_grad + Adam ---------
def cnn_params():
    return {
        "conv1_w": normal((3, 3, 1, 32), 9**-0.5),  # HWIO, lecun_normal scale as linum's bench
        "conv1_b": jnp.zeros((32,), jnp.float32),
        "conv2_w": normal((3, 3, 32, 64), (9 * 32)**-0.5),
        "conv2_b": jnp.zeros((64,), jnp.float32),
        "dense1_w": normal((7 * 7 * 64, 256), (7 * 7 * 64)**-0.5),
        "dense1_b": jnp.zeros((256,), jnp.float32),
        "dense2_w": normal((256, 10), 256**-0.5),
        "dense2_b": jnp.zeros((10,), jnp.float32),
    }


def cnn(p, x):
    def conv(h, w):
        return lax.conv_general_dilated(h, w, (1, 1), "SAME",
                                        dimension_numbers=("NHWC", "HWIO", "NHWC"))

    def avg_pool2(h):  # 2x2 window, stride 2, as flax.linen.avg_pool
        s = lax.reduce_window(h, 0.0, lax.add, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
        return s / 4.0

    h = avg_pool2(jax.nn.relu(conv(x, p["conv1_w"]) + p["conv1_b"]))
    h = avg_pool2(jax.nn.relu(conv(h, p["conv2_w"]) + p["conv2_b"]))
    h = h.reshape((h.shape[0], -1))
    h = jax.nn.relu(h @ p["dense1_w"] + p["dense1_b"])
    return jax.nn.log_softmax(h @ p["dense2_w"] + p["dense2_b"])


def adam(lr=1e-3, b1=0.9, b2=0.999, eps=1e-8):
    """optax.adam(lr) when optax is importable, else the same update written out."""
    if optax is not None:
        return optax.adam(lr).init, optax.adam(lr).update, "optax"

    def init(params):
        zeros = jax.tree_util.tree_map(jnp.zeros_like, params)
        return (jnp.zeros((), jnp.int32), zeros, zeros)

    def update(grads, state, params=None):
        count, mu, nu = state
        count = count + 1
        mu = jax.tree_util.tree_map(lambda m, g: b1 * m + (1 - b1) * g, mu, grads)
        nu = jax.tree_util.tree_map(lambda v, g: b2 * v + (1 - b2) * g * g, nu, grads)
        c1 = 1 - b1**count.astype(jnp.float32)
        c2 = 1 - b2**count.astype(jnp.float32)
        updates = jax.tree_util.tree_map(
            lambda m, v: -lr * (m / c1) / (jnp.sqrt(v / c2) + eps), mu, nu)
        return updates, (count, mu, nu)

    return init, update, "by hand"


def w2_at(batch):
    init, update, adam_impl = adam()
    x = normal((batch, 28, 28, 1), 1.0)
    labels = jax.nn.one_hot(jnp.array([(i * 7) % 10 for i in range(batch)]), 10)

    def loss(p):
        return -jnp.mean(jnp.sum(labels * cnn(p, x), 1))

    # The old params and optimizer state are dead after each step: XLA may update them in place.
    @functools.partial(jax.jit, donate_argnums=(0, 1))
    def train_step(p, s):
        value, grads = jax.value_and_grad(loss)(p)
        updates, s = update(grads, s, p)
        p = jax.tree_util.tree_map(lambda a, u: a + u, p, updates)
        return p, s, value

    state = {"p": cnn_params()}
    state["s"] = init(state["p"])

    def step():
        state["p"], state["s"], value = train_step(state["p"], state["s"])
        return value

    med, reps, iters = measure(step)
    return med, reps, iters, {"adam": adam_impl}


def w2():
    return w2_at(32)


def w2_b128():
    return w2_at(128)


# ---- W5: LSTM cell (hidden 128, input 64) scanned over 100 steps, batch 16, loss = sum(last h) -
def w5():
    params = {"wx": normal((64, 512), 64**-0.5), "wh": normal((128, 512), 128**-0.5),
              "b": jnp.zeros((512,), jnp.float32)}
    xs = normal((100, 16, 64), 1.0)

    def loss(p, xs):
        def cell(carry, x):  # gates i, f, g, o as bench_transforms.cpp splits them
            h, c = carry
            i, f, g, o = jnp.split(x @ p["wx"] + h @ p["wh"] + p["b"], 4, axis=-1)
            c = jax.nn.sigmoid(f) * c + jax.nn.sigmoid(i) * jnp.tanh(g)
            h = jax.nn.sigmoid(o) * jnp.tanh(c)
            return (h, c), None

        zeros = jnp.zeros((16, 128), jnp.float32)
        (h, _), _ = lax.scan(cell, (zeros, zeros), xs)
        return jnp.sum(h)

    g = jax.jit(jax.grad(loss))
    return measure(lambda: g(params, xs))


WORKLOADS = {"W1": w1, "W2": w2, "W2_b128": w2_b128, "W5": w5}


def main():
    failed = False
    for name in ARGS.workloads.split(","):
        if name not in WORKLOADS:
            print(json.dumps({"workload": name, "threads": ARGS.threads,
                              "error": f"unknown workload (known: {', '.join(WORKLOADS)})"}),
                  flush=True)
            failed = True
            continue
        try:
            med, reps, iters, *extra = WORKLOADS[name]()
        except Exception as e:  # report it and go on with the other workloads
            print(json.dumps({"workload": name, "threads": ARGS.threads,
                              "error": f"{type(e).__name__}: {e}"[:2000]}), flush=True)
            failed = True
            continue
        rec = {
            "workload": name,
            "threads": ARGS.threads,
            "jax": jax.__version__,
            "cpus": CPUS,
            "devices": [str(d) for d in jax.devices()],
            "median_ms": med,
            "reps_ms": [round(r, 4) for r in reps],
            "iterations": iters,
        }
        for e in extra:
            rec.update(e)
        print(json.dumps(rec), flush=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
