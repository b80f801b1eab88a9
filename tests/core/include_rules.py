#!/usr/bin/env python3
"""Checks that every file of libpack includes only what libpack/README.md lets its folder include.

The folder table of libpack/README.md is the rule: for each folder, the libpack folders (by the path
prefix of a quoted include, "common/error.h") and the public headers (include/*.h, format/xpc_format.h)
it may include. A folder of libpack that the table does not list is an error too, so a new stage is
documented before it is used. Prints the line count of each folder and of the loader with what it
includes, then one line per violation; exits 1 on any."""
import os
import re
import sys

root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
libpack = os.path.join(root, "libpack")
public = set(os.listdir(os.path.join(libpack, "include"))) | {"xpc_format.h"}

rules = {}
with open(os.path.join(libpack, "README.md"), encoding="utf-8") as f:
    for line in f:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 5 or cells[0] in ("folder", "") or set(cells[0]) <= set("-"):
            continue
        folders = set() if cells[3] == "(none)" else set(cells[3].split())
        rules[cells[0]] = (folders, set(cells[4].split()))

problems = []
if not rules:
    problems.append("libpack/README.md: no folder table found")
for folder, (folders, headers) in rules.items():
    for name in folders - set(rules):
        problems.append(f"libpack/README.md: row {folder} lists folder {name}, which the table does not have")
    for name in headers - public:
        problems.append(f"libpack/README.md: row {folder} lists {name}, which is not a public header")

include = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
lines = {}
for folder in sorted(os.listdir(libpack)):
    path = os.path.join(libpack, folder)
    if not os.path.isdir(path) or folder == "include":
        continue
    sources = [n for n in sorted(os.listdir(path)) if n.endswith((".c", ".h"))]
    if not sources:
        continue
    if folder not in rules:
        problems.append(f"libpack/{folder}: a folder of sources that libpack/README.md's table does not list")
        continue
    folders, headers = rules[folder]
    lines[folder] = 0
    for name in sources:
        with open(os.path.join(path, name), encoding="utf-8") as f:
            for number, text in enumerate(f, 1):
                lines[folder] += 1
                m = include.match(text)
                if not m:
                    continue
                target = m.group(1)
                if "/" in target:
                    other = target.split("/", 1)[0]
                    if other != folder and other not in folders:
                        problems.append(f"libpack/{folder}/{name}:{number}: includes {target}: "
                                        f"{folder} may not include {other}/")
                    elif not os.path.isfile(os.path.join(libpack, target)):
                        problems.append(f"libpack/{folder}/{name}:{number}: includes {target}, which does not exist")
                elif target not in headers:
                    problems.append(f"libpack/{folder}/{name}:{number}: includes {target}: "
                                    f"not a public header {folder} may include")

for folder, count in lines.items():
    print(f"  {folder}: {count} lines")
if "loader" in rules and all(f in lines for f in ["loader", *rules["loader"][0]]):
    alone = sum(lines[f] for f in ["loader", *rules["loader"][0]])
    print(f"  the loader with what it includes ({' '.join(['loader', *sorted(rules['loader'][0])])}): "
          f"{alone} of {sum(lines.values())} lines")
for p in problems:
    print(p)
print(f"include_rules: {len(problems)} problem{'s' if len(problems) != 1 else ''}")
sys.exit(1 if problems else 0)
