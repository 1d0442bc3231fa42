#!/usr/bin/env python3
"""Compile-fail checks: each snippet is misuse that must not compile, and the first `error:` line
the compiler prints must name the mistake (contain the text after `// expected-error:` in it).

Usage: check_first_error.py [-I DIR]... SNIPPET... -- COMPILER [FLAG...]
Each snippet is only parsed and instantiated (-fsyntax-only), two at a time.
"""
import concurrent.futures
import re
import subprocess
import sys


def expected_text(path):
    with open(path, encoding="utf-8") as f:
        m = re.search(r"//\s*expected-error:\s*(.+)", f.read())
    if not m:
        raise SystemExit(f"{path}: no `// expected-error: <text>` comment")
    return m.group(1).strip()


def check(path, compiler, includes):
    cmd = compiler + ["-fsyntax-only", "-fdiagnostics-color=never"] + includes + [path]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    want = expected_text(path)
    if run.returncode == 0:
        return f"FAIL {path}: compiled, but it must not"
    errors = [l for l in (run.stdout + run.stderr).splitlines() if "error:" in l]
    if not errors:
        return f"FAIL {path}: the compiler failed without an `error:` line:\n{run.stderr[-2000:]}"
    if want not in errors[0]:
        return f"FAIL {path}: the first error line\n  {errors[0]}\ndoes not contain\n  {want}"
    return f"ok   {path}: {errors[0].split('error:', 1)[1].strip()[:120]}"


def main(argv):
    if "--" not in argv:
        raise SystemExit(__doc__)
    split = argv.index("--")
    ours, compiler = argv[:split], argv[split + 1:]
    includes = [a for a in ours if a.startswith("-I")]
    snippets = [a for a in ours if not a.startswith("-I")]
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(lambda p: check(p, compiler, includes), snippets))
    for r in results:
        print(r)
    return 1 if any(r.startswith("FAIL") for r in results) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
