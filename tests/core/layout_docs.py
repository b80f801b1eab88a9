#!/usr/bin/env python3
"""Checks that the folders of libpack, its libraries and the documents that describe them agree (issue 14:
"README's layout section and docs/INTEGRATION.md's library table match the tree").

The folder table of libpack/README.md names each folder's library. Then:
  - every folder of libpack/ with sources (include/ aside) has a row, and every row a folder;
  - libpack's CMake files define each row's library from sources in that folder only, and no other library;
  - README.md's Layout section names every folder ("et_adapter/");
  - docs/INTEGRATION.md's library table has a row "| `library` | `libpack/folder` |" for every folder, and
    no row for a library or folder that does not exist.
Prints one line per problem; exits 1 on any."""
import os
import re
import sys

root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
libpack = os.path.join(root, "libpack")


def read(*parts):
    with open(os.path.join(root, *parts), encoding="utf-8") as f:
        return f.read()


problems = []

table = {}  # folder -> library, from libpack/README.md
for line in read("libpack", "README.md").splitlines():
    cells = [c.strip() for c in line.strip().strip("|").split("|")]
    if len(cells) != 5 or cells[0] in ("folder", "") or set(cells[0]) <= set("-"):
        continue
    table[cells[0]] = cells[1]
if not table:
    problems.append("libpack/README.md: no folder table found")

folders = set()
for name in sorted(os.listdir(libpack)):
    path = os.path.join(libpack, name)
    if name != "include" and os.path.isdir(path) and any(n.endswith((".c", ".h")) for n in os.listdir(path)):
        folders.add(name)
for name in sorted(folders - set(table)):
    problems.append(f"libpack/{name}: a folder of sources that libpack/README.md's table does not list")
for name in sorted(set(table) - folders):
    problems.append(f"libpack/README.md: row {name} names no folder of sources")

# Libraries as CMake defines them: xpack_library(NAME SOURCES a/x.c b/y.c ... PUBLIC ...).
cmake_text = read("libpack", "CMakeLists.txt")
for name in sorted(os.listdir(libpack)):
    sources_cmake = os.path.join(libpack, name, "sources.cmake")
    if os.path.isfile(sources_cmake):
        cmake_text += "\n" + read("libpack", name, "sources.cmake")
libraries = {}  # library -> set of folders its sources are in
for m in re.finditer(r"xpack_library\(\s*(\w+)\s+SOURCES\s+(.*?)(?:\bPUBLIC\b|\bPRIVATE\b|\))", cmake_text, re.S):
    libraries[m.group(1)] = {s.split("/", 1)[0] for s in m.group(2).split()}
for folder, library in sorted(table.items()):
    if library not in libraries:
        problems.append(f"libpack/README.md: row {folder} names library {library}, which libpack's CMake does not define")
    elif libraries[library] != {folder}:
        problems.append(f"libpack CMake: {library} is built from {' '.join(sorted(libraries[library]))}/, "
                        f"libpack/README.md says {folder}/")
for library in sorted(set(libraries) - set(table.values())):
    problems.append(f"libpack CMake: library {library} has no row in libpack/README.md's table")

readme = read("README.md")
m = re.search(r"^## Layout\n(.*?)(?=^## |\Z)", readme, re.S | re.M)
if m is None:
    problems.append("README.md: no Layout section")
else:
    for folder in sorted(table):
        if not re.search(rf"(?<![\w/]){re.escape(folder)}/", m.group(1)):
            problems.append(f"README.md: the Layout section does not name libpack's folder {folder}/")

integration_rows = {}  # library -> folder, from docs/INTEGRATION.md's library table
for line in read("docs", "INTEGRATION.md").splitlines():
    row = re.match(r"\|\s*`(xpack_\w+)`\s*\|\s*`libpack/(\w+)`\s*\|", line)
    if row:
        integration_rows[row.group(1)] = row.group(2)
if not integration_rows:
    problems.append("docs/INTEGRATION.md: no library table found")
for folder, library in sorted(table.items()):
    if library not in integration_rows:
        problems.append(f"docs/INTEGRATION.md: the library table has no row for {library} (libpack/{folder})")
    elif integration_rows[library] != folder:
        problems.append(f"docs/INTEGRATION.md: {library} is in libpack/{integration_rows[library]}, "
                        f"libpack/README.md says libpack/{folder}")
for library in sorted(set(integration_rows) - set(table.values())):
    problems.append(f"docs/INTEGRATION.md: the library table has a row for {library}, which libpack does not build")

for p in problems:
    print(p)
print(f"layout_docs: {len(table)} folders, {len(problems)} problem{'s' if len(problems) != 1 else ''}")
sys.exit(1 if problems else 0)
