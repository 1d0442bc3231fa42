#!/usr/bin/python3
"""Writes docs/ops.md: every public op declaration of the array headers, with its comment.

    doc_ops_index.py SOURCE_ROOT            print the page
    doc_ops_index.py SOURCE_ROOT --check    fail when docs/ops.md differs from what it would be

The page is generated so that it lists exactly what the headers declare; the docs test runs the
check, so a new op without a regenerated page fails the suite.
"""
import os
import re
import sys

HEADERS = [
        ("Creation and the Array type", "autodiff/array.hpp"),
        ("Elementwise math, comparisons, activations", "autodiff/ops/elementwise.hpp"),
        ("More elementwise math: trigonometry, rounding, integers and bits",
         "autodiff/ops/elementwise_math.hpp"),
        ("Special functions (jax.scipy.special, jax.scipy.stats.norm)", "autodiff/ops/special.hpp"),
        ("Reductions, softmax, one_hot", "autodiff/ops/reduction.hpp"),
        ("Statistics (std, quantiles, nan-reductions, cov)", "autodiff/ops/reduction_stats.hpp"),
        ("Shapes, joining, slicing, take", "autodiff/ops/shape.hpp"),
        ("Manipulation (pad, tile, flip, split, triangles, ...)", "autodiff/ops/manipulation.hpp"),
        ("Indexed updates and gather/scatter", "autodiff/ops/scatter.hpp"),
        ("Cumulative ops", "autodiff/ops/cumulative.hpp"),
        ("Sorting and searching", "autodiff/ops/sort.hpp"),
        ("Contractions, convolution, pooling", "autodiff/ops/linalg.hpp"),
        ("More contractions (tensordot, kron, vecdot, ...)", "autodiff/ops/contraction.hpp"),
        ("Polynomials and 1-D convolution", "autodiff/ops/polynomial.hpp"),
        ("Computed creation: windows, logspace, geomspace", "autodiff/ops/creation_math.hpp"),
        ("Linear algebra (jnp.linalg, lax.linalg, scipy.linalg)", "autodiff/ops/linalg_decomp.hpp"),
        ("FFT (jnp.fft)", "autodiff/ops/fft.hpp"),
        ("Complex numbers", "autodiff/ops/complex.hpp"),
        ("Set operations (unique_*, union1d, intersect1d, isin, ...)", "autodiff/ops/set_ops.hpp"),
        ("Index tricks and functional in-place writers (put, place, ...)",
         "autodiff/ops/index_tricks.hpp"),
        ("More shape helpers (broadcast_arrays, unstack, resize, block, ...)",
         "autodiff/ops/reshaping.hpp"),
        ("Differences (diff, gradient, unwrap) and cross", "autodiff/ops/differences.hpp"),
        ("Counting, histograms, interp", "autodiff/ops/histogram.hpp"),
        ("Functions over axes, indices and pieces (apply_along_axis, piecewise, ...)",
         "autodiff/ops/apply.hpp"),
        ("Polynomials from roots, division, fitting", "autodiff/ops/polynomial_solve.hpp"),
        ("Bit counting", "autodiff/ops/bits.hpp"),
        ("Dtype queries (finfo, iinfo, can_cast, isdtype, issubdtype)",
         "autodiff/ops/dtype_info.hpp"),
]

DECL = re.compile(r"^(template\b|requires\b|inline\b|[A-Za-z_][\w:<>, ]*[\s&*]+[a-z_][\w]*\()")


def declarations(text):
    """(namespace, comment lines, declaration) for each namespace-scope function outside detail."""
    out, ns, comment, i = [], [], [], 0
    lines = text.split("\n")
    while i < len(lines):
        line = lines[i]
        m = re.match(r"^namespace ([\w:]+) \{", line)
        if m:
            if m.group(1) == "detail" or m.group(1).endswith("::detail"):
                depth = 0  # skip the detail namespace
                while i < len(lines):
                    depth += lines[i].count("{") - lines[i].count("}")
                    i += 1
                    if depth <= 0:
                        break
                comment = []
                continue
            ns.append(m.group(1))
            comment = []
        elif re.match(r"^\}  // namespace", line):
            ns.pop()
            comment = []
        elif line.startswith("//"):
            comment.append(line[2:].strip())
        elif DECL.match(line) and not line.startswith(("class ", "struct ", "using ")):
            decl = [line]
            while not re.search(r"[;{}]\s*(//.*)?$", decl[-1]) and i + 1 < len(lines):
                i += 1
                decl.append(lines[i])
            text_decl = "\n".join(decl)
            if decl[-1].rstrip().endswith("}"):
                # A one-line inline definition: the signature without its body.
                text_decl = text_decl[:text_decl.index(" {")] + ";"
            elif "{" in decl[-1] and not decl[-1].rstrip().endswith(";"):
                # An inline definition: keep the signature, skip the body.
                depth = decl[-1].count("{") - decl[-1].count("}")
                text_decl = text_decl[:text_decl.rfind("{")].rstrip() + ";"
                while depth > 0 and i + 1 < len(lines):
                    i += 1
                    depth += lines[i].count("{") - lines[i].count("}")
            if "(" in text_decl:
                out.append(("::".join(n for n in ns if n != "linum"), comment, text_decl))
            comment = []
        else:  # a blank line, a type, a macro: the comment above was not a function's
            comment = []
        i += 1
    return out


def page(root):
    parts = ["<!-- Generated by scripts/doc_ops_index.py from the headers named below: do not edit. -->",
                      "# Op index: every declaration of the array headers",
                      "",
                      "The signature of every public op, with the comment the header gives it, in header order.",
                      "Namespaces other than `linum` are named (`linalg::`, `fft::`, `lax::`). The side-by-side",
                      "JAX names and examples are in [arrays.md](arrays.md). C++ scalars also work on either side",
                      "of `+ - * / < <= > >=` (weakly typed, as Python numbers in JAX); option structs",
                      "(`AtOptions`, `GatherDimensionNumbers`, `Slice`, ...) are declared in the headers named.", ""]
    for title, path in HEADERS:
        with open(os.path.join(root, path), encoding="utf-8") as f:
            decls = declarations(f.read())
        parts += [f"## {title}", "", f"`{path}`", "", "```text"]
        last_ns, seen = None, set()
        for ns, comment, decl in decls:
            # Out-of-line definitions repeat a declaration (or define a member): list each once.
            key = (ns, " ".join(decl.split()))
            if key in seen or re.search(r"\w::\w+\(", decl.split("(")[0] + "("):
                continue
            seen.add(key)
            if ns != last_ns:
                parts.append(f"// namespace linum{'::' + ns if ns else ''}")
                last_ns = ns
            parts += [f"// {c}" if c else "//" for c in comment]
            parts.append(decl)
        parts += ["```", ""]
    return "\n".join(parts)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    root = sys.argv[1]
    text = page(root)
    if len(sys.argv) == 3 and sys.argv[2] == "--check":
        with open(os.path.join(root, "docs", "ops.md"), encoding="utf-8") as f:
            if f.read() != text:
                sys.exit("docs/ops.md is out of date: run scripts/doc_ops_index.py . > docs/ops.md")
        print("docs/ops.md is current")
        return
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
