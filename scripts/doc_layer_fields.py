#!/usr/bin/python3
"""Fails when a field of a layer's config or options struct (nn/*.hpp) is missing from the docs.

    doc_layer_fields.py SOURCE_ROOT

Every `struct ...Config` / `...Options` / `...Args` of nn/*.hpp has its fields named in
docs/layers.md or docs/nn.md, so a field added to a layer without documenting it fails the docs
suite.
"""
import glob
import os
import re
import sys


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    root = sys.argv[1]
    pages = ""
    for name in ("layers.md", "nn.md"):
        with open(os.path.join(root, "docs", name), encoding="utf-8") as f:
            pages += f.read()
    missing, checked = [], 0
    for header in sorted(glob.glob(os.path.join(root, "nn", "*.hpp"))):
        with open(header, encoding="utf-8") as f:
            text = f.read()
        for struct in re.finditer(r"^struct (\w+(?:Config|Options|Args))\s*\{(.*?)^\};", text,
                                  re.S | re.M):
            fields = re.findall(r"^\s+[\w:<>,\s]+?\s(\w+)(?:\s*=[^;]*)?;", struct.group(2), re.M)
            for field in fields:
                checked += 1
                if not re.search(r"\b" + re.escape(field) + r"\b", pages):
                    missing.append(f"{os.path.basename(header)}: {struct.group(1)}::{field}")
    if missing:
        sys.exit("fields missing from docs/layers.md and docs/nn.md:\n  " + "\n  ".join(missing))
    print(f"{checked} fields documented")


if __name__ == "__main__":
    main()
