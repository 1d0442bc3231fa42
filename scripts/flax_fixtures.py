#!/usr/bin/env python3
"""Writes linum's fidelity fixtures with the real Flax (tests/fidelity/, the meson suite 'fidelity').

Needs jax, flax and optax (the reference versions are Flax 0.12 / JAX 0.11 / optax 0.2.8) plus
msgpack and numpy; run from anywhere:  python3 scripts/flax_fixtures.py [--out DIR]

For each model of MODELS and OPTIMIZERS and each threefry mode ('partitionable' =
jax_threefry_partitionable on, 'original' = off) it writes, in tests/fidelity/fixtures/:
  <model>.<mode>.msgpack       flax.serialization.to_bytes(model.init(jax.random.PRNGKey(0), ...))
  <model>.<mode>.case.msgpack  flax.serialization.msgpack_serialize of {'header', 'model',
                               'threefry_partitionable', 'inputs': {'0', ...}, 'output'
                               [, 'intermediates'], 'cotangent', 'grads'} (grads = jax.grad of
                               sum(output * cotangent) with respect to the variables;
                               intermediates = to_state_dict of the collection captured by
                               apply(..., capture_intermediates=True), for the models
                               derive_fixtures.INTERMEDIATES names); an optimizer's case has 'output'
                               (the loss before each step) and 'trajectory' {'1'..'4': variables}.
These replace the files tests/fidelity/derive_fixtures.py derived from Flax's source: same names,
same format, same inputs (its ramps), the header saying which versions wrote them. EXTRA_MODELS
and EXTRA_OPTIMIZERS are written by this script only (the derivation does not cover them), and
for the models of TABULATE it writes <model>.tabulate.txt, the text of module.tabulate(key, ...). Afterwards it
prints every leaf where the derived values differ from Flax's (run it before overwriting to see
what the derivation got wrong, or with --check to only compare).
"""
import argparse
import os
import sys

import jax
import jax.numpy as jnp
import numpy as np
import flax
import flax.linen as nn
import optax
from flax import serialization
from flax.training import train_state

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "fidelity"))
import derive_fixtures as derived  # noqa: E402  (inputs, cotangents, the derived values)

MODES = derived.MODES
OUT_DIR = [None]  # where main() writes (tabulate texts are written from run_model)


class MLP(nn.Module):
    @nn.compact
    def __call__(self, x):
        x = nn.Dense(5)(x)
        x = nn.relu(x)
        return nn.Dense(3)(x)


class DropoutMLP(nn.Module):
    @nn.compact
    def __call__(self, x):
        x = nn.relu(nn.Dense(5)(x))
        x = nn.Dropout(0.5, deterministic=False)(x)
        return nn.Dense(3)(x)


class RematDense(nn.Module):
    @nn.compact
    def __call__(self, x):
        return nn.remat(nn.Dense)(3)(x)


class JitDense(nn.Module):
    @nn.compact
    def __call__(self, x):
        return nn.jit(nn.Dense)(3)(x)


class VmapDense(nn.Module):
    @nn.compact
    def __call__(self, x):
        return nn.vmap(nn.Dense, variable_axes={"params": 0}, split_rngs={"params": True},
                       in_axes=0)(3)(x)


class ResidualBlock(nn.Module):
    @nn.compact
    def __call__(self, c, _):
        return c + nn.relu(nn.Dense(4)(c)), None


class ScanResidual(nn.Module):
    @nn.compact
    def __call__(self, x):
        block = nn.scan(ResidualBlock, variable_axes={"params": 0}, split_rngs={"params": True},
                        length=3)
        return block()(x, None)[0]


class RNNModel(nn.Module):
    cell_type: type

    @nn.compact
    def __call__(self, x):
        return nn.RNN(self.cell_type(4))(x)


class ScanLSTM(nn.Module):
    @nn.compact
    def __call__(self, x):
        lstm = nn.scan(nn.LSTMCell, variable_broadcast="params", split_rngs={"params": False},
                       in_axes=1, out_axes=1)(4)
        carry = lstm.initialize_carry(jax.random.PRNGKey(0), x[:, 0].shape)
        return lstm(carry, x)[1]


class BidirectionalModel(nn.Module):
    @nn.compact
    def __call__(self, x):
        return nn.Bidirectional(nn.RNN(nn.LSTMCell(4)), nn.RNN(nn.GRUCell(5)))(x)


class SpectralDense(nn.Module):
    @nn.compact
    def __call__(self, x):
        return nn.SpectralNorm(nn.Dense(3))(x, update_stats=True)


class ConvLSTMModel(nn.Module):
    @nn.compact
    def __call__(self, x):
        return nn.RNN(nn.ConvLSTMCell(3, (3, 3)))(x)


class RematScanDense(nn.Module):
    # nn.remat inside nn.scan: the lifted transforms nested (params stacked by the scan).
    @nn.compact
    def __call__(self, x):
        return ScanResidual()(nn.remat(nn.Dense)(4)(x))


# name -> (module, apply keyword arguments); the names, inputs and shapes of derive_fixtures.MODELS.
MODELS = {
    "dense": (nn.Dense(3), {}),
    "mlp": (MLP(), {}),
    "conv": (nn.Conv(4, (3, 3)), {}),
    "conv_circular": (nn.Conv(3, (3, 3), padding="CIRCULAR"), {}),
    "embed": (nn.Embed(7, 3), {}),
    "layer_norm": (nn.LayerNorm(), {}),
    "sequential": (nn.Sequential([nn.Dense(5), nn.relu, nn.Dense(3)]), {}),
    "dropout_mlp": (DropoutMLP(), {"rngs": {"dropout": jax.random.PRNGKey(1)}}),
    "prelu": (nn.PReLU(), {}),
    "dense_general": (nn.DenseGeneral(features=(2, 5), axis=(-2, -1)), {}),
    "einsum": (nn.Einsum((4, 2, 3), "btc,cde->btde"), {}),
    "conv_transpose": (nn.ConvTranspose(3, (3, 3), strides=(2, 2)), {}),
    "group_norm": (nn.GroupNorm(num_groups=2), {}),
    "rms_norm": (nn.RMSNorm(), {}),
    "batch_norm": (nn.BatchNorm(use_running_average=False), {"mutable": ["batch_stats"]}),
    "remat_dense": (RematDense(), {}),
    "attention": (nn.MultiHeadDotProductAttention(num_heads=2, qkv_features=4), {}),
    "jit_dense": (JitDense(), {}),
    "vmap_dense": (VmapDense(), {}),
    "scan_residual": (ScanResidual(), {}),
    "rnn_lstm": (RNNModel(nn.LSTMCell), {}),
    "rnn_optimized_lstm": (RNNModel(nn.OptimizedLSTMCell), {}),
    "rnn_gru": (RNNModel(nn.GRUCell), {}),
    "rnn_simple": (RNNModel(nn.SimpleCell), {}),
    "bidirectional": (BidirectionalModel(), {}),
    "scan_lstm": (ScanLSTM(), {}),
}

# Layers the derivation does not cover: written by the real Flax only. name -> (module, apply
# keyword arguments, the inputs' shapes; each input is derive_fixtures.ramp(shape, salt)).
EXTRA_MODELS = {
    "conv_local": (nn.ConvLocal(3, (3, 3)), {}, [(2, 5, 5, 2)]),
    "conv_batch_dims": (nn.Conv(2, (3,)), {}, [(2, 3, 5, 2)]),
    "instance_norm": (nn.InstanceNorm(), {}, [(2, 4, 4, 3)]),
    "spectral_norm": (SpectralDense(), {"mutable": ["batch_stats"]}, [(4, 5)]),
    "weight_norm": (nn.WeightNorm(nn.Dense(3)), {}, [(4, 5)]),
    "rnn_mgu": (RNNModel(nn.MGUCell), {}, [(2, 5, 3)]),
    "conv_lstm": (ConvLSTMModel(), {}, [(2, 3, 4, 4, 2)]),
    "remat_scan_dense": (RematScanDense(), {}, [(2, 3)]),
}

# Models whose nn.tabulate text is written too (<model>.tabulate.txt, Flax's default console).
TABULATE = ["mlp", "rnn_lstm", "rnn_optimized_lstm", "bidirectional", "scan_lstm", "conv_lstm",
            "spectral_norm"]

OPTIMIZERS = {
    "optax_sgd_momentum": optax.sgd(0.1, momentum=0.9),
    "optax_adam": optax.adam(0.05),
    "optax_adamw": optax.adamw(0.05, weight_decay=0.1),
}

# More of optax's alias.py on the same Dense regression, written by the real optax only.
# name -> a function making the optimizer (some names are newer than others: a missing one is
# reported and skipped).
EXTRA_OPTIMIZERS = {
    "optax_nesterov": lambda: optax.sgd(0.1, momentum=0.9, nesterov=True),
    "optax_nadam": lambda: optax.nadam(0.05),
    "optax_rmsprop": lambda: optax.rmsprop(0.05),
    "optax_rmsprop_centered": lambda: optax.rmsprop(0.05, centered=True, momentum=0.5),
    "optax_adagrad": lambda: optax.adagrad(0.1),
    "optax_lamb": lambda: optax.lamb(0.05),
    "optax_lion": lambda: optax.lion(0.01),
    "optax_adafactor": lambda: optax.adafactor(0.05),
    "optax_adabelief": lambda: optax.adabelief(0.05),
    "optax_adadelta": lambda: optax.adadelta(0.5),
    "optax_adamax": lambda: optax.adamax(0.05),
    "optax_adamaxw": lambda: optax.adamaxw(0.05),
    "optax_adan": lambda: optax.adan(0.05),
    "optax_amsgrad": lambda: optax.amsgrad(0.05),
    "optax_fromage": lambda: optax.fromage(0.05),
    "optax_lars": lambda: optax.lars(0.05),
    "optax_noisy_sgd": lambda: optax.noisy_sgd(0.05),
    "optax_novograd": lambda: optax.novograd(0.05),
    "optax_optimistic_gradient_descent": lambda: optax.optimistic_gradient_descent(0.05),
    "optax_radam": lambda: optax.radam(0.05),
    "optax_rprop": lambda: optax.rprop(0.05),
    "optax_sgd_schedule": lambda: optax.sgd(optax.warmup_cosine_decay_schedule(0.0, 0.1, 2, 4)),
    "optax_sign_sgd": lambda: optax.sign_sgd(0.05),
    "optax_sm3": lambda: optax.sm3(0.05),
    "optax_yogi": lambda: optax.yogi(0.05),
    "optax_chain_clip_adam": lambda: optax.chain(optax.clip_by_global_norm(0.5),
                                                 optax.adam(0.05)),
}


def header(name):
    return (f"WRITTEN by Flax {flax.__version__} / JAX {jax.__version__} / optax "
            f"{optax.__version__} (scripts/flax_fixtures.py); model {name}.")


def numpy_tree(t):
    return jax.tree.map(np.asarray, t)


def run_model(name, key):
    if name in EXTRA_MODELS:
        module, kwargs, shapes = EXTRA_MODELS[name]
        salt = 300 + 10 * sorted(EXTRA_MODELS).index(name)
        inputs = [derived.ramp(shape, salt + i) for i, shape in enumerate(shapes)]
        derived_variables, cotangent = None, None
    else:
        module, kwargs = MODELS[name]
        made = derived.MODELS[name](derived.rs.key(0))
        inputs, derived_variables, cotangent = made[0], made[1], made[3]

    def apply(variables):
        out = module.apply(variables, *inputs, **kwargs)
        return out[0] if kwargs.get("mutable") else out

    variables = module.init(key, *inputs)
    output = apply(variables)
    if cotangent is None:
        cotangent = derived.ramp(output.shape, 101)
    if name in TABULATE:
        text = module.tabulate(key, *inputs, **{k: v for k, v in kwargs.items() if k == "rngs"})
        with open(os.path.join(OUT_DIR[0], f"{name}.tabulate.txt"), "w") as f:
            f.write(text)
    grads = jax.grad(lambda v: jnp.sum(apply(v) * cotangent))(variables)
    case = {"inputs": {str(i): np.asarray(a) for i, a in enumerate(inputs)},
            "output": np.asarray(output)}
    if name in derived.INTERMEDIATES:
        _, state = module.apply(variables, *inputs, capture_intermediates=True, **kwargs)
        case["intermediates"] = numpy_tree(serialization.to_state_dict(state["intermediates"]))
    case.update(cotangent=np.asarray(cotangent, np.float32), grads=numpy_tree(grads))
    return variables, case, derived_variables


def run_optimizer(name, key):
    if name in EXTRA_OPTIMIZERS:
        tx = EXTRA_OPTIMIZERS[name]()
        (x, target), derived_variables = (derived.ramp((4, 4), 89), derived.ramp((4, 3), 97)), None
    else:
        tx = OPTIMIZERS[name]
        (x, target), derived_variables, _, _ = derived.OPTIMIZERS[name](derived.rs.key(0))
    dense = nn.Dense(3)
    variables = dense.init(key, x)

    def loss(v):
        return jnp.mean((dense.apply(v, x) - target) ** 2)

    v, state, losses, trajectory = variables, tx.init(variables), [], {}
    for step in range(1, 5):
        value, g = jax.value_and_grad(loss)(v)
        losses.append(value)
        updates, state = tx.update(g, state, v)
        v = optax.apply_updates(v, updates)
        trajectory[str(step)] = numpy_tree(v)
    case = {"inputs": {"0": np.asarray(x), "1": np.asarray(target)},
            "output": np.asarray(jnp.stack(losses)), "trajectory": trajectory}
    return variables, case, derived_variables


def run_train_state(name, key):
    # TrainState.create of nn.Dense(3)'s params with optax.adam(0.05): its checkpoint.
    inputs, derived_state = derived.TRAIN_STATES[name](derived.rs.key(0))
    dense = nn.Dense(3)
    params = dense.init(key, inputs[0])["params"]
    state = train_state.TrainState.create(apply_fn=dense.apply, params=params,
                                          tx=optax.adam(0.05))
    case = {"inputs": {str(i): np.asarray(a) for i, a in enumerate(inputs)}}
    return state, case, derived_state


def differences(flax_tree, derived_tree, path=""):
    """The leaves where the derived fixture's values are not Flax's, bit for bit."""
    if derived_tree is None:  # written by the real Flax only
        return []
    if not isinstance(flax_tree, dict):
        a, b = np.asarray(flax_tree), np.asarray(derived_tree)
        if a.shape != b.shape or a.dtype != b.dtype or a.tobytes() != b.tobytes():
            return [path]
        return []
    if list(flax_tree) != list(derived_tree):
        return [f"{path}: keys {list(flax_tree)} (Flax) != {list(derived_tree)} (derived)"]
    return [d for k in flax_tree for d in differences(flax_tree[k], derived_tree[k], f"{path}/{k}")]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.path.join(ROOT, "tests", "fidelity", "fixtures"))
    parser.add_argument("--check", action="store_true", help="compare with the derived values only")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    OUT_DIR[0] = args.out
    report, failed = [], []
    for mode, partitionable in MODES.items():
        jax.config.update("jax_threefry_partitionable", partitionable)
        derived.rs.Mode.partitionable = partitionable
        key = jax.random.PRNGKey(0)
        names = (list(MODELS) + list(EXTRA_MODELS) + list(OPTIMIZERS) + list(EXTRA_OPTIMIZERS) +
                 list(derived.TRAIN_STATES))
        for name in names:
            run = (run_model if name in MODELS or name in EXTRA_MODELS else
                   run_optimizer if name in OPTIMIZERS or name in EXTRA_OPTIMIZERS else
                   run_train_state)
            try:
                variables, case, derived_variables = run(name, key)
            except Exception as e:  # report and go on: one model's failure loses no other file
                failed.append(f"{name} ({mode}): {type(e).__name__}: {e}")
                continue
            case = {"header": header(name), "model": name, "threefry_partitionable": partitionable,
                    **case}
            report += [f"{name} ({mode}): {d}"
                       for d in differences(serialization.to_state_dict(variables), derived_variables)]
            if args.check:
                continue
            with open(os.path.join(args.out, f"{name}.{mode}.msgpack"), "wb") as f:
                f.write(serialization.to_bytes(variables))
            with open(os.path.join(args.out, f"{name}.{mode}.case.msgpack"), "wb") as f:
                # in_place: no tree_map copy, which would sort the keys Flax wrote in order.
                f.write(serialization.msgpack_serialize(case, in_place=True))
    print("derived init values differing from Flax's:" if report else
          "every derived init value is Flax's, bit for bit")
    for line in report:
        print("  " + line)
    for line in failed:
        print("FAILED " + line)


if __name__ == "__main__":
    main()
