#!/usr/bin/env python3
"""Builds and runs the consumer projects of tests/consumer the way a user would, one per call:

  run_consumer.py install    --src S --build B   meson install of build B: the layout, and every
                                                  public header compiling alone against it
  run_consumer.py cmake      --src S --build B   find_package(linum) in tests/consumer/cmake
  run_consumer.py pkgconfig  --src S --build B   `pkg-config linum` in tests/consumer/pkgconfig
  run_consumer.py meson      --src S --build B   dependency('linum') in tests/consumer/meson
  run_consumer.py cmake      --src S --prefix P  the same against an installed linum (.deb: /usr)
  run_consumer.py subproject --src S             the meson project with linum under subprojects/
  run_consumer.py readme     --src S             README.md shows each project's build file as it is

With --build, the build is installed into a temporary folder (meson install --destdir, no rebuild)
and the consumer uses it from there. Each consumer builds app.cpp (and distributed_app.cpp) and
runs it: it trains a few steps and saves a checkpoint.
"""
import argparse
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAMS = ("app.cpp", "distributed_app.cpp")


def run(cmd, cwd=None, env=None):
    print("+", " ".join(cmd), flush=True)
    r = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True)
    print(r.stdout[-4000:], end="", flush=True)
    if r.returncode != 0:
        sys.exit(f"consumer step failed ({r.returncode}): {' '.join(cmd)}")
    return r.stdout


def user_env():
    env = dict(os.environ)
    for var in ("ASAN_OPTIONS", "UBSAN_OPTIONS", "LD_LIBRARY_PATH", "PKG_CONFIG_PATH"):
        env.pop(var, None)
    return env


def project(kind, tmp):
    """The consumer project folder as a user has it: the build file and the programs."""
    proj = os.path.join(tmp, kind)
    shutil.copytree(os.path.join(HERE, kind), proj)
    for p in PROGRAMS:
        shutil.copy(os.path.join(HERE, p), proj)
    return proj


def introspect(build, what):
    return json.loads(subprocess.check_output(["meson", "introspect", what, build], text=True))


class Install:
    """`meson install` of a build into tmp/stage: where its pieces landed."""

    def __init__(self, build, tmp):
        opts = {o["name"]: o["value"] for o in introspect(build, "--buildoptions")}
        self.build = os.path.realpath(build)
        self.version = introspect(build, "--projectinfo")["version"]
        self.default_library = opts["default_library"]
        self.debug = opts["debug"]
        stage = os.path.join(tmp, "stage")
        run(["meson", "install", "-C", build, "--no-rebuild", "--quiet", "--destdir", stage])
        self.configured_prefix = opts["prefix"]
        self.prefix = stage + opts["prefix"]
        self.libdir = os.path.join(self.prefix, opts["libdir"])
        self.includedir = os.path.join(self.prefix, opts["includedir"])


def pkg_env(prefix_libdir):
    env = user_env()
    env["PKG_CONFIG_PATH"] = os.path.join(prefix_libdir, "pkgconfig")
    return env


def check_layout(inst, src):
    """Libraries with versioned sonames, pkg-config files, the CMake package, exactly the public
    headers; nothing that names the build, the source tree or the prefix (the install can move)."""
    problems = []
    major = inst.version.split(".")[0]
    for name in ("linum", "linum_distributed"):
        real = f"lib{name}.so.{inst.version}"
        if inst.default_library != "static":
            soname = f"lib{name}.so.{major}"
            for link, target in ((soname, real), (f"lib{name}.so", soname)):
                path = os.path.join(inst.libdir, link)
                if not os.path.islink(path) or os.readlink(path) != target:
                    problems.append(f"{link} is not a link to {target}")
            path = os.path.join(inst.libdir, real)
            if not os.path.isfile(path):
                problems.append(f"{real} is missing")
            else:
                dyn = subprocess.check_output(["readelf", "-d", path], text=True)
                if f"[{soname}]" not in dyn:
                    problems.append(f"{real}: soname is not {soname}")
        if inst.default_library != "shared" and not os.path.isfile(
                os.path.join(inst.libdir, f"lib{name}.a")):
            problems.append(f"lib{name}.a is missing (default_library={inst.default_library})")
    for rel in ("pkgconfig/linum.pc", "pkgconfig/linum-distributed.pc",
                "cmake/linum/linumConfig.cmake", "cmake/linum/linumConfigVersion.cmake"):
        if not os.path.isfile(os.path.join(inst.libdir, rel)):
            problems.append(f"{rel} is missing under the libdir")

    sys.dont_write_bytecode = True  # no __pycache__ in the source tree
    sys.path.insert(0, os.path.join(src, "include"))
    from public_headers import public_headers
    want = set(public_headers(os.path.join(src, "include")))
    have = set()
    for dirpath, _, files in os.walk(os.path.join(inst.includedir, "linum")):
        have.update(os.path.relpath(os.path.join(dirpath, f), inst.includedir) for f in files)
    for h in sorted(want - have):
        problems.append(f"public header {h} is not installed (a header added since `meson setup`?"
                        " run `meson setup --reconfigure`)")
    for h in sorted(have - want):
        problems.append(f"{h} is installed but is not a public header")
    for h in sorted(have & want):
        text = open(os.path.join(inst.includedir, h)).read()
        for inc in re.findall(r"#\s*include\s*<(linum/[^>]+)>", text):
            if inc not in have:
                problems.append(f"installed {h} includes {inc}, which is not installed (private in"
                                " include/public_headers.py?)")

    # Nothing names the source or build folder, nor the configured prefix (scripts/package moves
    # a /usr/local install to /usr) unless that is /usr, which system paths (the OpenBLAS rpath)
    # start with.
    needles = {os.path.realpath(src), inst.build}
    if inst.configured_prefix not in ("/", "/usr"):
        needles.add(inst.configured_prefix + "/")
    needles = {n.encode() for n in needles}
    for dirpath, _, files in os.walk(inst.prefix):
        for f in files:
            path = os.path.join(dirpath, f)
            name = os.path.relpath(path, inst.prefix)
            if os.path.islink(path):
                if os.path.isabs(os.readlink(path)):
                    problems.append(f"{name} links to an absolute path")
                continue
            data = open(path, "rb").read()
            if inst.debug and data.startswith((b"\x7fELF", b"!<arch>")):
                # Debug info names the build folder by design; the dynamic section must not.
                data = b"" if data.startswith(b"!<arch>") else subprocess.check_output(
                    ["readelf", "-d", path])
            for n in needles:
                if n in data:
                    problems.append(f"{name} names {n.decode()}")
    return problems, sorted(want)


def compile_alone(headers, cflags, cxx):
    """Each header in a translation unit of its own, with only the pkg-config flags."""
    def one(h):
        r = subprocess.run([cxx, "-std=c++20", *cflags, "-fsyntax-only", "-x", "c++", "-"],
                           input=f"#include <{h}>\n", text=True, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT)
        return h, r.returncode, r.stdout
    failed = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        for h, rc, out in pool.map(one, headers):
            if rc != 0:
                failed.append(f"<{h}> does not compile alone:\n{out[-2000:]}")
    return failed


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("kind", choices=["install", "cmake", "pkgconfig", "meson", "subproject",
                                     "readme"])
    ap.add_argument("--src", required=True, help="linum's source root")
    where = ap.add_mutually_exclusive_group()
    where.add_argument("--build", help="a configured and built linum build folder to install")
    where.add_argument("--prefix", help="an existing install prefix (e.g. /usr from the .deb)")
    args = ap.parse_args()
    src = os.path.realpath(args.src)
    cxx = os.environ.get("CXX", "c++")

    with tempfile.TemporaryDirectory(prefix=f"linum-consumer-{args.kind}-") as tmp:
        if args.kind == "subproject":
            subproject(src, tmp)
            return
        if args.kind == "readme":
            readme(src)
            return
        if args.build:
            inst = Install(args.build, tmp)
            prefix, libdir = inst.prefix, inst.libdir
        elif args.prefix:
            inst = None
            prefix = args.prefix
            multiarch = subprocess.check_output([cxx, "-print-multiarch"], text=True).strip()
            libdir = os.path.join(prefix, "lib", multiarch)
        else:
            sys.exit("--build or --prefix is required")

        if args.kind == "install":
            if inst is None:
                sys.exit("install needs --build")
            problems, headers = check_layout(inst, src)
            cflags = run(["pkg-config", "--cflags", "linum"], env=pkg_env(libdir)).split()
            problems += compile_alone(headers, cflags, cxx)
            if problems:
                sys.exit("\n".join(problems))
            print(f"installed layout complete; {len(headers)} public headers compile alone")
        elif args.kind == "cmake":
            proj = project("cmake", tmp)
            build = os.path.join(tmp, "build")
            cmd = ["cmake", "-S", proj, "-B", build, "-G", "Ninja"]
            if inst is not None or prefix != "/usr":
                cmd.append(f"-DCMAKE_PREFIX_PATH={prefix}")
            run(cmd, env=user_env())
            run(["cmake", "--build", build, "-j2"], env=user_env())
            run_programs(build, tmp, user_env())
            if os.path.exists(os.path.join(libdir, "liblinum.a")):
                # The static libraries, as linum_USE_STATIC_LIBS picks them (no PCH: one TU).
                static = os.path.join(tmp, "build-static")
                run(cmd[:4] + [static] + cmd[5:] + ["-Dlinum_USE_STATIC_LIBS=ON",
                                                    "-DCMAKE_DISABLE_PRECOMPILE_HEADERS=ON"],
                    env=user_env())
                run(["cmake", "--build", static, "-j2", "--target", "app"], env=user_env())
                needed = subprocess.check_output(["readelf", "-d", os.path.join(static, "app")],
                                                 text=True)
                if "liblinum" in needed:
                    sys.exit("the app built with linum_USE_STATIC_LIBS loads liblinum.so")
                run([os.path.join(static, "app"), os.path.join(tmp, "static.msgpack")],
                    env=user_env())
        elif args.kind == "pkgconfig":
            proj = project("pkgconfig", tmp)
            env = pkg_env(libdir)
            env["CXXFLAGS"] = "-O0"  # the Makefile adds -std=c++20 to the user's flags
            run(["make", "-j2"], cwd=proj, env=env)
            env["LD_LIBRARY_PATH"] = libdir
            run_programs(proj, tmp, env)
        elif args.kind == "meson":
            proj = project("meson", tmp)
            build = os.path.join(tmp, "build")
            env = pkg_env(libdir)
            # nofallback: linum must come from linum.pc, not be built as a subproject.
            run(["meson", "setup", build, proj, "--wrap-mode=nofallback", "--buildtype=plain"],
                env=env)
            run(["ninja", "-C", build, "-j2"], env=env)
            env["LD_LIBRARY_PATH"] = libdir
            run_programs(build, tmp, env)
    print(f"consumer {args.kind}: built and ran against the installed linum")


def run_programs(folder, tmp, env):
    run([os.path.join(folder, "app"), os.path.join(tmp, "checkpoint.msgpack")], env=env)
    if os.path.exists(os.path.join(folder, "distributed_app")):
        run([os.path.join(folder, "distributed_app")], env=env)


def readme(src):
    """README's "Using linum" shows each consumer's build file: the text these tests run."""
    # Every fenced block of the README, without its language tag.
    text = re.sub(r"```\w+\n", "```\n", open(os.path.join(src, "README.md")).read())
    missing = [f for f in ("cmake/CMakeLists.txt", "pkgconfig/Makefile", "meson/meson.build")
               if f"```\n{open(os.path.join(HERE, f)).read()}```" not in text]
    if missing:
        sys.exit("README.md does not show, as they are, tests/consumer/" + ", ".join(missing))


def subproject(src, tmp):
    """tests/consumer/meson with linum's sources under subprojects/linum, as a user vendors it."""
    proj = project("meson", tmp)
    dest = os.path.join(proj, "subprojects", "linum")
    ignore = shutil.ignore_patterns("build*", ".git", "subprojects", "tests", "bench")
    shutil.copytree(src, dest, symlinks=True, ignore=ignore)
    build = os.path.join(tmp, "build")
    # buildtype=plain (no -g, no -O): the fastest build of linum; only the app target is built.
    # force-fallback: the subproject, even where an installed linum.pc would be found.
    run(["meson", "setup", build, proj, "--buildtype=plain", "--force-fallback-for=linum",
         "-Dlinum:tests=false", "-Dlinum:bench=false", "-Dlinum:native=false"], env=user_env())
    run(["ninja", "-C", build, "-j2", "app"], env=user_env())
    run([os.path.join(build, "app"), os.path.join(tmp, "checkpoint.msgpack")], env=user_env())


if __name__ == "__main__":
    main()
