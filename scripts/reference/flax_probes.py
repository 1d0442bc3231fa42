#!/usr/bin/env python3
"""Behaviours of the real Flax that linum's tests assert, printed as JSON (one probe per line).

Each probe names the linum test that checks the same thing; run where flax is installed:
  python3 scripts/reference/flax_probes.py
"""
import json
import os
import sys

import jax
import jax.numpy as jnp
import flax
import flax.linen as nn
from flax.core import FrozenDict

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from flax_fixtures import RematDense, ScanResidual, VmapDense  # noqa: E402  (the zoo's own)

KEY = jax.random.PRNGKey(0)


def shapes(tree):
    """{'/a/b': [shape...]} of a pytree of arrays (tuples become '0', '1', ... as in Flax)."""
    out = {}
    for path, leaf in jax.tree_util.tree_flatten_with_path(tree)[0]:
        name = "".join("/" + str(getattr(p, "key", getattr(p, "idx", p))) for p in path)
        out[name] = list(jnp.shape(leaf))
    return out


def probe(name, fn):
    try:
        value = fn()
    except Exception as e:  # the error itself is often what is probed
        value = {"raised": type(e).__name__, "message": str(e)[:400]}
    print(json.dumps({"probe": name, "value": value}, default=str))


# tests/nn/test_transforms_lifting.cpp "two nn::remat methods share their setup child".
COUNT = [0]


class A33(nn.Module):
    def setup(self):
        COUNT[0] += 1
        self.d = nn.Dense(2)

    @nn.remat
    def foo(self, x):
        return self.d(x)

    @nn.remat
    def bar(self, x):
        return self.d(x)

    def __call__(self, x):
        return self.foo(x)


class B33(nn.Module):
    def setup(self):
        self.a = A33()

    def __call__(self, x):
        return self.a.foo(x), self.a.bar(x)


class Inner(nn.Module):
    def setup(self):
        COUNT[0] += 1
        self.d = nn.Dense(2)

    def __call__(self, x):
        return self.d(x)


def wrapped(transform):
    class Outer(nn.Module):
        @nn.compact
        def __call__(self, x):
            return transform(Inner)()(x)
    return Outer()


def setup_counts(module, x):
    COUNT[0] = 0
    v = module.init(KEY, x)
    init = COUNT[0]
    COUNT[0] = 0
    module.apply(v, x)
    apply = COUNT[0]
    COUNT[0] = 0
    jax.grad(lambda v: jnp.sum(jnp.asarray(jax.tree.leaves(module.apply(v, x))[0])))(v)
    return {"init": init, "apply": apply, "grad": COUNT[0]}


X2 = jnp.ones((1, 2))
probe("setup count: B33 (two remat methods share a setup child)",
      lambda: setup_counts(B33(), X2))
probe("setup count: plain Inner", lambda: setup_counts(Inner(), X2))
probe("setup count: remat(Inner)", lambda: setup_counts(wrapped(nn.remat), X2))
probe("setup count: remat(remat(Inner))",
      lambda: setup_counts(wrapped(lambda m: nn.remat(nn.remat(m))), X2))
probe("setup count: jit(Inner)", lambda: setup_counts(wrapped(nn.jit), X2))
probe("setup count: vmap(Inner)", lambda: setup_counts(wrapped(
    lambda m: nn.vmap(m, variable_axes={"params": 0}, split_rngs={"params": True})),
    jnp.ones((3, 1, 2))))


# linum's spelling of a transformed method is Flax's function form inside a plain method
# (tests/nn/test_transforms_lifting.cpp, "setup runs once per module instance ..."): Flax's
# test_nested_setup_calls_count and test_multimethod_setup_calls written that way.
class A33Fn(nn.Module):
    def setup(self):
        COUNT[0] += 1
        self.d = nn.Dense(2)

    def foo(self, x):
        return nn.remat(lambda m, x: m.d(x))(self, x)

    def bar(self, x):
        return nn.remat(lambda m, x: m.d(x))(self, x)


class B33Fn(nn.Module):
    def setup(self):
        self.a = A33Fn()

    def __call__(self, x):
        return self.a.foo(x), self.a.bar(x)


CALLS = [0]


class CounterFn(nn.Module):
    def setup(self):
        COUNT[0] += 1
        self.dense = nn.Dense(2, use_bias=False)

    def __call__(self, x):
        def f(m, x):
            CALLS[0] += 1
            return m.dense(x)
        return nn.remat(f)(self, x)


def repeat_fn(mdl_def):
    class RepeatFn(nn.Module):
        def setup(self):
            self.lyrs = [mdl_def() for _ in range(4)]

        def __call__(self, x):
            def f(m, x):
                for lyr in m.lyrs:
                    lyr(x)
                return x
            return nn.remat(f)(self, x)
    return RepeatFn


def nested_counts():
    model = repeat_fn(repeat_fn(repeat_fn(CounterFn)))()
    x = jnp.ones((2,))
    out = {}
    COUNT[0] = CALLS[0] = 0
    v = model.init(KEY, x)
    out["init"] = [COUNT[0], CALLS[0]]
    COUNT[0] = CALLS[0] = 0
    model.apply(v, x)
    out["apply"] = [COUNT[0], CALLS[0]]
    return out


probe("setup count: B33 in function form", lambda: setup_counts(B33Fn(), X2))
probe("setup count: nested remat in function form (setups, calls)", nested_counts)

# capture_intermediates: what each lifted wrapper and an RNN with return_carry capture.
class RNNCarry(nn.Module):
    @nn.compact
    def __call__(self, x):
        return nn.RNN(nn.LSTMCell(4), return_carry=True)(x)


def captured(module, x):
    v = module.init(KEY, x)
    _, state = module.apply(v, x, capture_intermediates=True)
    return shapes(state["intermediates"])


probe("capture_intermediates: RNN(LSTMCell(4), return_carry=True), x (2, 5, 3)",
      lambda: captured(RNNCarry(), jnp.ones((2, 5, 3))))
probe("capture_intermediates: remat(Dense(3)), x (4, 5)",
      lambda: captured(RematDense(), jnp.ones((4, 5))))
probe("capture_intermediates: vmap(Dense(3)), x (2, 4, 5)",
      lambda: captured(VmapDense(), jnp.ones((2, 4, 5))))
probe("capture_intermediates: scan(block, length=3), x (2, 4)",
      lambda: captured(ScanResidual(), jnp.ones((2, 4))))


# Setup-time containers and module identity.
class DictKeys(nn.Module):
    def setup(self):
        self.a = {(1, 2): nn.Dense(2), "x": nn.Dense(2)}

    def __call__(self, x):
        return self.a[(1, 2)](x) + self.a["x"](x)


class Mixed(nn.Module):
    def setup(self):
        self.layers = [nn.Dense(3), nn.relu, nn.Dense(3)]

    def __call__(self, x):
        for f in self.layers:
            x = f(x)
        return x


probe("names: setup dict with a tuple key", lambda: shapes(DictKeys().init(KEY, X2)))
probe("names: setup list mixing modules and functions", lambda: shapes(Mixed().init(KEY, X2)))
probe("FrozenDict['a'] of a nested dict: type",
      lambda: type(FrozenDict({"a": {"b": 1}})["a"]).__name__)
probe(".path of an unbound module", lambda: nn.Dense(3).path)


class Holder(nn.Module):
    def setup(self):
        self.inner = nn.Dense(3)

    def __call__(self, x):
        return self.inner(x)


def unbind_equal():
    m = Holder()
    v = m.init(KEY, X2)
    bound = m.bind(v)
    unbound, _ = bound.unbind()
    return {"equal": unbound == m, "inner_is_field": "inner" in vars(unbound)}


probe("unbind() equals the unbound original", unbind_equal)
probe("versions", lambda: {"flax": flax.__version__, "jax": jax.__version__})
