#!/bin/bash
# Runs every script that needs the real JAX/Flax/optax (scripts/flax_fixtures.py and
# scripts/reference/*.py) on a machine that has them, writing to $1 (default: ./reference-out):
#   fixtures.tgz (the fidelity fixtures; unpack into tests/fidelity/fixtures/), fixtures_log.txt,
#   jax_random.txt, optax_trajectories.txt, flax_probes.txt.
# Compare the text files with tests/random/reference_samplers.py, tests/optim/reference_optax.py
# and the linum tests each probe names.
set -u
out=${1:-reference-out}
mkdir -p "$out"
export JAX_PLATFORMS=cpu PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
here=$(dirname "$0")
python3 -c "import sys, jax, flax, optax, numpy; print(sys.version, 'jax', jax.__version__, 'flax', flax.__version__, 'optax', optax.__version__, 'numpy', numpy.__version__)" >"$out/versions.txt" 2>&1
fx=$(mktemp -d)
(timeout 240 python3 "$here/../flax_fixtures.py" --out "$fx" >"$out/fixtures_log.txt" 2>&1
 echo "exit $?" >>"$out/fixtures_log.txt"; tar czf "$out/fixtures.tgz" -C "$fx" .) &
(timeout 200 python3 "$here/jax_random_values.py" >"$out/jax_random.txt" 2>&1; echo "// exit $?" >>"$out/jax_random.txt") &
(timeout 200 python3 "$here/optax_trajectories.py" >"$out/optax_trajectories.txt" 2>&1; echo "// exit $?" >>"$out/optax_trajectories.txt") &
(timeout 200 python3 "$here/flax_probes.py" >"$out/flax_probes.txt" 2>&1; echo "exit $?" >>"$out/flax_probes.txt") &
wait
cat "$out/versions.txt"; tail -n 30 "$out/fixtures_log.txt"; grep -c . "$out"/*.txt
