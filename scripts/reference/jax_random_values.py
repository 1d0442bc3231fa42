#!/usr/bin/env python3
"""tests/random/reference_samplers.py's table, drawn by the real jax.random.

reference_samplers.py re-derives JAX's samplers in numpy (its values are what
tests/random/test_samplers.cpp embeds); this script draws the same table with jax.random itself and
prints it in the same format, so that

  diff <(python3 scripts/reference/jax_random_values.py) <(/usr/bin/python3 tests/random/reference_samplers.py)

shows every value where the derivation is not JAX. Needs jax (JAX_PLATFORMS=cpu is enough).
"""
import zlib

import jax
import jax.numpy as jnp
import numpy as np

jr = jax.random
F32 = np.float32


def cpp(values):
    vals = np.asarray(values).ravel()
    if vals.dtype == F32:
        return "{" + ", ".join(f"{float(v)!r}f".replace("inf", "INFINITY") for v in vals) + "}"
    return "{" + ", ".join(str(int(v)) for v in vals) + "}"


def adler_key(name):  # RandomValuesCase seeds: adler32(name + "threefry2x32")
    return jr.PRNGKey(zlib.adler32((name + "threefry2x32").encode()))


def key(seed):
    return jr.PRNGKey(seed)


def table():
    k = adler_key
    a6 = jnp.array([0.3, 1.0, 2.5, 7.0, 0.05, 40.0], jnp.float32)
    return [
        ("exponential", lambda: jr.exponential(k("exponential"), (5,))),
        ("laplace", lambda: jr.laplace(k("laplace"), (5,))),
        ("logistic", lambda: jr.logistic(k("logistic"), (5,))),
        ("cauchy", lambda: jr.cauchy(k("cauchy"), (5,))),
        ("rademacher", lambda: jr.rademacher(k("rademacher"), (5,))),
        ("maxwell", lambda: jr.maxwell(k("maxwell"), (5,))),
        ("double_sided_maxwell",
         lambda: jr.double_sided_maxwell(k("double_sided_maxwell"), 1.0, 2.0, (5,))),
        ("weibull_min", lambda: jr.weibull_min(k("weibull_min"), 1.0, 1.0, (5,))),
        ("pareto", lambda: jr.pareto(k("pareto"), 0.5, (5,))),
        ("gamma", lambda: jr.gamma(k("gamma"), 0.8, (5,))),
        ("loggamma", lambda: jr.loggamma(k("loggamma"), 0.8, (5,))),
        ("beta", lambda: jr.beta(k("beta"), 0.8, 0.9, (5,))),
        ("dirichlet", lambda: jr.dirichlet(k("dirichlet"), jnp.array([0.5, 0.6, 0.7]), (2,))),
        ("poisson", lambda: jr.poisson(k("poisson"), 5.0, (5,))),
        ("gamma_a", lambda: jr.gamma(key(3), a6)),
        ("loggamma_a", lambda: jr.loggamma(key(3), a6)),
        ("gamma_approx", lambda: jr.gamma(key(16), a6, method="approximate")),
        ("loggamma_approx", lambda: jr.loggamma(key(16), a6, method="approximate")),
        ("poisson_large", lambda: jr.poisson(key(4), 25.5, (6,))),
        ("poisson_small", lambda: jr.poisson(key(4), 0.7, (6,))),
        ("binomial_inv", lambda: jr.binomial(key(5), 20.0, 0.3, (6,))),
        ("binomial_btrs", lambda: jr.binomial(key(5), 200.0, 0.4, (6,))),
        ("binomial_flip", lambda: jr.binomial(key(5), 200.0, 0.8, (6,))),
        ("geometric", lambda: jr.geometric(key(6), 0.3, (6,))),
        ("rayleigh", lambda: jr.rayleigh(key(7), 2.0, (6,))),
        ("wald", lambda: jr.wald(key(8), 1.5, (6,))),
        ("triangular", lambda: jr.triangular(key(9), -1.0, 0.5, 2.0, (6,))),
        ("lognormal", lambda: jr.lognormal(key(10), 0.5, (6,))),
        ("t", lambda: jr.t(key(11), 3.0, (6,))),
        ("chisquare", lambda: jr.chisquare(key(12), 3.0, (6,))),
        ("f", lambda: jr.f(key(13), 3.0, 5.0, (6,))),
        ("generalized_normal", lambda: jr.generalized_normal(key(14), 1.5, (6,))),
        ("ball", lambda: jr.ball(key(15), 3, 2.0, (2,))),
    ]


def main():
    for partitionable in (False, True):
        jax.config.update("jax_threefry_partitionable", partitionable)
        print(f"// threefry_partitionable={partitionable}")
        for name, fn in table():
            try:
                print(f"{{\"{name}\", {cpp(fn())}}},")
            except Exception as e:  # a renamed argument loses one row, not the table
                print(f"// {name}: {type(e).__name__}: {e}")
    print("// implicit_gamma_grad(a, x)")
    for a, x in [(0.3, 0.05), (0.8, 0.7), (1.0, 1.0), (2.5, 1.2), (2.5, 6.0), (7.0, 4.0),
                 (7.0, 12.0), (40.0, 35.0), (0.05, 1e-6)]:
        g = jax.lax.random_gamma_grad(jnp.float32(a), jnp.float32(x))
        print(f"{{{a}, {x}, {float(g)!r}}},")
    # The matrix samplers, for tests/random/test_matrix_samplers.cpp (values depend on LAPACK's
    # last bits: compare to a few ulps).
    for partitionable in (False, True):
        jax.config.update("jax_threefry_partitionable", partitionable)
        print(f"// matrix samplers, threefry_partitionable={partitionable}")
        mean = jnp.array([1.0, -2.0, 0.5], jnp.float32)
        cov = jnp.array([[2.0, 0.3, 0.1], [0.3, 1.0, -0.2], [0.1, -0.2, 0.5]], jnp.float32)
        for method in ("cholesky", "eigh", "svd"):
            try:
                v = jr.multivariate_normal(key(17), mean, cov, (2,), method=method)
                print(f"{{\"multivariate_normal {method}\", {cpp(v)}}},")
            except Exception as e:
                print(f"// multivariate_normal {method}: {type(e).__name__}: {e}")
        try:
            print(f"{{\"orthogonal 3\", {cpp(jr.orthogonal(key(18), 3))}}},")
        except Exception as e:
            print(f"// orthogonal: {type(e).__name__}: {e}")


if __name__ == "__main__":
    main()
