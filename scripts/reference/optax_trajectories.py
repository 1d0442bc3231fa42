#!/usr/bin/env python3
"""tests/optim/reference_optax.py's trajectories, run by the real optax.

reference_optax.py re-derives optax's optimizers in numpy (its values are what
tests/optim/test_alias_*.cpp embed); this script runs the same problems with optax itself, in
float64, and prints them in the same format, so that

  diff <(python3 scripts/reference/optax_trajectories.py) <(/usr/bin/python3 tests/optim/reference_optax.py)

shows every value where the derivation is not optax (the last digits may differ by float64
rounding: compare numerically). Needs jax and optax.
"""
import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import optax  # noqa: E402

P0 = {"b": np.array([0.5, -1.5, 2.0]), "w": np.array([[1.0, -2.0, 0.5], [0.25, 3.0, -1.0]])}
A = {"b": np.array([1.0, 0.5, 2.0]), "w": np.array([[1.0, 2.0, 3.0], [0.5, 1.5, 4.0]])}


def loss(p):
    return 0.5 * sum(jnp.sum(A[k] * p[k] ** 2) for k in sorted(p))


def trajectory(tx, steps=3, extra=False):
    p = jax.tree.map(jnp.asarray, P0)
    s = tx.init(p)
    out = []
    for _ in range(steps):
        value, g = jax.value_and_grad(loss)(p)
        u, s = tx.update(g, s, p, value=value) if extra else tx.update(g, s, p)
        p = optax.apply_updates(p, u)
        out.append(np.concatenate([np.asarray(p["b"]).ravel(), np.asarray(p["w"]).ravel()]))
    return out


def contrib(name):
    return getattr(optax, name, None) or getattr(optax.contrib, name)


TRAJECTORIES = {  # the names and C++ calls of reference_optax.TRAJECTORIES
    "adabelief": ("adabelief(0.1)", lambda: optax.adabelief(0.1)),
    "adabelief nesterov": ("adabelief(0.1, 0.8, 0.99, 1e-8, 1e-10, true)",
                           lambda: optax.adabelief(0.1, b1=0.8, b2=0.99, eps=1e-8, eps_root=1e-10,
                                                   nesterov=True)),
    "adadelta": ("adadelta(0.5, 0.8, 1e-4, 0.01)",
                 lambda: optax.adadelta(0.5, rho=0.8, eps=1e-4, weight_decay=0.01)),
    "adadelta no lr": ("adadelta()", lambda: optax.adadelta()),
    "adamax": ("adamax(0.1)", lambda: optax.adamax(0.1)),
    "adamaxw": ("adamaxw(0.1, 0.9, 0.99, 1e-8, 0.05)",
                lambda: optax.adamaxw(0.1, b1=0.9, b2=0.99, eps=1e-8, weight_decay=0.05)),
    "adan": ("adan(0.1)", lambda: optax.adan(0.1)),
    "adan wd": ("adan(0.05, 0.9, 0.9, 0.95, 1e-6, 1e-6, 0.02)",
                lambda: optax.adan(0.05, b1=0.9, b2=0.9, b3=0.95, eps=1e-6, eps_root=1e-6,
                                   weight_decay=0.02)),
    "amsgrad": ("amsgrad(0.1)", lambda: optax.amsgrad(0.1)),
    "amsgrad no bias correction": (
        "amsgrad(0.1, 0.9, 0.99, 1e-8, 0.0, std::nullopt, false, false)",
        lambda: optax.chain(optax.scale_by_amsgrad(b2=0.99, bias_correction_mu=False,
                                                   bias_correction_nu=False),
                            optax.scale_by_learning_rate(0.1))),
    "novograd": ("novograd(0.1)", lambda: optax.novograd(0.1)),
    "novograd wd": ("novograd(0.1, 0.8, 0.5, 1e-6, 0.0, 0.1)",
                    lambda: optax.novograd(0.1, b1=0.8, b2=0.5, eps=1e-6, eps_root=0.0,
                                           weight_decay=0.1)),
    "radam": ("radam(0.1)", lambda: optax.radam(0.1)),
    "radam rectified": ("radam(0.01), 7 steps", lambda: optax.radam(0.01), 7),
    "radam nesterov": ("radam(0.01, 0.9, 0.999, 1e-8, 0.0, 5.0, true), 7 steps",
                       lambda: optax.radam(0.01, nesterov=True), 7),
    "yogi": ("yogi(0.1)", lambda: optax.yogi(0.1)),
    "sm3": ("sm3(0.1)", lambda: optax.sm3(0.1)),
    "sign_sgd": ("sign_sgd(0.1)", lambda: contrib("sign_sgd")(0.1)),
    "signum": ("signum(0.1)", lambda: contrib("signum")(0.1)),
    "fromage": ("fromage(0.1)", lambda: optax.fromage(0.1)),
    "lars": ("lars(0.1, 0.01, true, 0.5)",
             lambda: optax.lars(0.1, weight_decay=0.01, trust_coefficient=0.5)),
    "lars nesterov": ("lars(0.1, 0.0, true, 0.001, 0.0, true, 0.9, true)",
                      lambda: optax.lars(0.1, nesterov=True)),
    "rprop": ("rprop(0.1)", lambda: optax.rprop(0.1)),
    "optimistic_gradient_descent": ("optimistic_gradient_descent(0.1, 0.5, 2.0)",
                                    lambda: optax.optimistic_gradient_descent(0.1, 0.5, 2.0)),
    "optimistic_adam": ("optimistic_adam(0.1, 0.5)", lambda: optax.optimistic_adam(0.1, 0.5)),
    "optimistic_adam_v2": ("optimistic_adam_v2(0.1, 0.5, 2.0)",
                           lambda: optax.optimistic_adam_v2(0.1, 0.5, 2.0)),
}


def fmt(v):
    return ", ".join("%.17g" % x for x in v)


def main():
    print(f"// optax {optax.__version__}, jax {jax.__version__}")
    for name, (call, make, *steps) in TRAJECTORIES.items():
        print("// %s: %s" % (name, call))
        try:
            for x in trajectory(make(), *steps):
                print("{%s}," % fmt(x))
        except Exception as e:  # a renamed argument loses one entry, not the table
            print("// FAILED %s: %s: %s" % (name, type(e).__name__, e))
    for label, make in [
            ("polyak_sgd(): polyak_sgd(1.0, 1.0, 0.0, 0.0, 'sps')", lambda: optax.polyak_sgd()),
            ("polyak_sgd(0.3, 0.5, 1.0, 0.0, 'sps+')",
             lambda: optax.polyak_sgd(0.3, 0.5, 1.0, 0.0, variant="sps+"))]:
        print("// " + label)
        try:
            for x in trajectory(make(), extra=True):
                print("{%s}," % fmt(x))
        except Exception as e:
            print("// FAILED %s: %s: %s" % (label, type(e).__name__, e))


if __name__ == "__main__":
    main()
