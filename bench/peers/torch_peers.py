#!/usr/bin/python3
"""The peer side of README's Performance workloads W1, W2, W4, W5, in PyTorch (python3-torch 1.13).

Usage: /usr/bin/python3 bench/peers/torch_peers.py --threads N [--workloads W1,W2,W2_b128,W4,W5]
           [--repetitions R] [--min-time S]
Prints one JSON object per line and workload: {"workload", "threads", "median_ms",
"reps_ms", ...}; W4 adds ns per source line and per primitive. Each repetition times enough
iterations to last --min-time seconds (as Google Benchmark does) after a warm-up; the median
over repetitions is reported. The same shapes, dtype (float32), loss and optimizer as bench/.
"""
import argparse
import json
import os
import statistics
import sys
import time


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--threads", type=int, required=True)
    p.add_argument("--workloads", default="W1,W2,W4,W5")
    p.add_argument("--repetitions", type=int, default=9)
    p.add_argument("--min-time", type=float, default=0.5)
    return p.parse_args()


ARGS = parse_args()
# Debian's torch does its GEMMs in OpenBLAS (pthread build), whose own pool ignores
# torch.set_num_threads: pin both before torch loads. OpenMP threads that spin after each
# parallel region starve OpenBLAS's threads when the threads fill the CPUs (W1 at 2 threads on 2
# cores: 105 ms instead of 12 under load), so they sleep instead; with CPUs to spare, OpenMP's
# default policy, as linum's kernels run.
for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = str(ARGS.threads)
if ARGS.threads >= len(os.sched_getaffinity(0)):
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

try:
    import torch
    import torch.nn.functional as F
except ImportError:
    print(json.dumps({"error": f"no torch in {sys.executable}: apt-get install -y python3-torch "
                      "and run this with /usr/bin/python3"}))
    sys.exit(3)

torch.set_num_threads(ARGS.threads)
torch.manual_seed(0)


def normal(shape, scale):
    return torch.randn(*shape, dtype=torch.float32) * scale


def measure(step):
    """Median over repetitions of the mean wall time (ms) of one call to `step`."""
    for _ in range(3):  # warm-up: allocator caches, OpenBLAS buffers, autograd graph cache
        step()
    t0, n = time.perf_counter(), 0
    while time.perf_counter() - t0 < 0.1 or n < 1:  # calibrate the iteration count
        step()
        n += 1
    per_iter = (time.perf_counter() - t0) / n
    iters = max(1, int(ARGS.min_time / per_iter))
    reps = []
    for _ in range(ARGS.repetitions):
        t0 = time.perf_counter()
        for _ in range(iters):
            step()
        reps.append((time.perf_counter() - t0) / iters * 1e3)
    return statistics.median(reps), reps, iters


# ---- W1: grad of mean softmax cross-entropy of a 784-512-512-10 ReLU MLP, batch 128 -----------
def w1():
    sizes = [784, 512, 512, 10]
    params = []
    for i, o in zip(sizes, sizes[1:]):
        params += [normal((i, o), i**-0.5).requires_grad_(), torch.zeros(o, requires_grad=True)]
    x = normal((128, 784), 1.0)
    labels = torch.tensor([(i * 7) % 10 for i in range(128)])

    def step():
        w1_, b1, w2, b2, w3, b3 = params
        h = torch.relu(x @ w1_ + b1)
        h = torch.relu(h @ w2 + b2)
        loss = F.cross_entropy(h @ w3 + b3, labels)
        return torch.autograd.grad(loss, params)

    return measure(step)


# ---- W2: a train step of examples/seed_models.hpp's CNN, batch 32, value_and_grad + Adam ----
class CNN(torch.nn.Module):
    def __init__(self):
        super().__init__()
        # SAME padding of a 3x3 stride-1 conv is padding=1.
        self.conv1 = torch.nn.Conv2d(1, 32, 3, padding=1)
        self.conv2 = torch.nn.Conv2d(32, 64, 3, padding=1)
        self.dense1 = torch.nn.Linear(7 * 7 * 64, 256)
        self.dense2 = torch.nn.Linear(256, 10)

    def forward(self, x):
        x = F.avg_pool2d(torch.relu(self.conv1(x)), 2)
        x = F.avg_pool2d(torch.relu(self.conv2(x)), 2)
        x = torch.relu(self.dense1(x.flatten(1)))
        return F.log_softmax(self.dense2(x), dim=1)


def w2_at(batch):
    model = CNN()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = normal((batch, 1, 28, 28), 1.0)  # NCHW, PyTorch's native layout (linum's is NHWC)
    labels = torch.tensor([(i * 7) % 10 for i in range(batch)])

    def step():
        opt.zero_grad(set_to_none=True)
        loss = F.nll_loss(model(x), labels)
        loss.backward()
        opt.step()
        return loss

    return measure(step)


def w2():
    return w2_at(32)


# W2 at batch 128: the step large enough to show how the kernels scale with threads.
def w2_b128():
    return w2_at(128)


# ---- W4: tape overhead, 10,000 x `x = sin(x)*1.0001 + 0.5*x`, grad w.r.t. the input -----------
W4_LINES = 10000


def w4():
    x0 = torch.tensor(0.3, requires_grad=True)

    def step():
        x = x0
        for _ in range(W4_LINES):
            x = torch.sin(x) * 1.0001 + 0.5 * x
        return torch.autograd.grad(x, x0)

    return measure(step)


# ---- W5: LSTM cell (hidden 128, input 64) over 100 steps, batch 16, loss = sum(last h) -------
def w5_params():
    return [
        normal((64, 512), 64**-0.5).requires_grad_(),
        normal((128, 512), 128**-0.5).requires_grad_(),
        torch.zeros(512, requires_grad=True),
    ]


def w5():
    wx, wh, b = params = w5_params()
    xs = normal((100, 16, 64), 1.0)

    def step():
        h = c = torch.zeros(16, 128)
        for t in range(100):  # the cell as bench_transforms.cpp writes it: gates i, f, g, o
            i, f, g, o = (xs[t] @ wx + h @ wh + b).chunk(4, dim=1)
            c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
            h = torch.sigmoid(o) * torch.tanh(c)
        return torch.autograd.grad(h.sum(), params)

    return measure(step)


# W5 with torch's fused nn.LSTM (one call for all 100 steps): PyTorch's best, for reference.
def w5_nn_lstm():
    lstm = torch.nn.LSTM(64, 128)
    xs = normal((100, 16, 64), 1.0)
    params = list(lstm.parameters())

    def step():
        out, _ = lstm(xs)
        return torch.autograd.grad(out[-1].sum(), params)

    return measure(step)


WORKLOADS = {"W1": w1, "W2": w2, "W2_b128": w2_b128, "W4": w4, "W5": w5, "W5_nn_lstm": w5_nn_lstm}


def main():
    for name in ARGS.workloads.split(","):
        if name == "W5":
            names = ["W5", "W5_nn_lstm"]
        else:
            names = [name]
        for n in names:
            if n not in WORKLOADS:
                sys.exit(f"torch_peers.py: unknown workload {n!r} (known: {', '.join(WORKLOADS)})")
            med, reps, iters = WORKLOADS[n]()
            rec = {
                "workload": n,
                "threads": ARGS.threads,
                "torch": torch.__version__,
                "torch_threads": torch.get_num_threads(),
                "median_ms": med,
                "reps_ms": [round(r, 4) for r in reps],
                "iterations": iters,
            }
            if n == "W4":
                rec["ns_per_line"] = med * 1e6 / W4_LINES
                rec["ns_per_primitive"] = med * 1e6 / (4 * W4_LINES)
            print(json.dumps(rec), flush=True)


if __name__ == "__main__":
    main()
