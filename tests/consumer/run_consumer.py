#!/usr/bin/env python3
"""Configures, builds and runs tests/consumer/project with linum copied in as a subproject."""
import os
import shutil
import subprocess
import sys
import tempfile

src_root, = sys.argv[1:]
with tempfile.TemporaryDirectory(prefix="linum-consumer-") as tmp:
    proj = os.path.join(tmp, "project")
    shutil.copytree(os.path.join(src_root, "tests", "consumer", "project"), proj)
    # The linum sources as a user would vendor them: every tracked folder, no build trees.
    dest = os.path.join(proj, "subprojects", "linum")
    ignore = shutil.ignore_patterns("build*", ".git", "subprojects", "tests", "bench")
    shutil.copytree(src_root, dest, symlinks=True, ignore=ignore)
    env = dict(os.environ)
    for var in ("ASAN_OPTIONS", "UBSAN_OPTIONS"):
        env.pop(var, None)
    build = os.path.join(tmp, "build")
    for cmd in (["meson", "setup", build, proj, "-Dlinum:tests=false", "-Dlinum:bench=false",
                 "-Dlinum:native=false"],
                ["ninja", "-C", build, "-j2"],
                [os.path.join(build, "consumer")]):
        print("+", " ".join(cmd), flush=True)
        r = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        print(r.stdout[-4000:])
        if r.returncode != 0:
            sys.exit(f"consumer step failed ({r.returncode}): {' '.join(cmd)}")
print("consumer project built and ran against linum as a subproject")
