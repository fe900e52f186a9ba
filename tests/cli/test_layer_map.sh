#!/usr/bin/env bash
# shell-ext/README.md is the layer map of the online program (issue 52: the
# docs a newcomer opens first): under each "## `LAYER/`" heading, a table
# row per file of shell-ext/LAYER/. Every file has its row, and no row
# names a file that is gone, so the map stays the table of contents.
#   REMODEL=build/remodel bash tests/cli/test_layer_map.sh
. "$(dirname "$0")/lib.sh"

# map_check README DIR: prints one line per file without a row ("missing
# LAYER/FILE") and per row without a file ("gone LAYER/FILE"); nothing
# when the map and DIR agree.
map_check() {
    python3 - "$1" "$2" <<'EOF'
import os, re, sys
readme, top = sys.argv[1], sys.argv[2]
rows, layer = set(), None
for line in open(readme, encoding="utf-8"):
    m = re.match(r"^## `([a-z_]+)/`", line)
    if m:
        layer = m.group(1)
        continue
    if line.startswith("#"):
        layer = None
    m = re.match(r"^\| `([^`]+)` \|", line)
    if layer and m:
        rows.add(layer + "/" + m.group(1))
files = set()
for d in sorted(os.listdir(top)):
    if os.path.isdir(os.path.join(top, d)):
        for f in os.listdir(os.path.join(top, d)):
            if f.endswith((".c", ".h")):
                files.add(d + "/" + f)
for f in sorted(files - rows):
    print("missing", f)
for f in sorted(rows - files):
    print("gone", f)
EOF
}

out=$(map_check "$ROOT/shell-ext/README.md" "$ROOT/shell-ext")
expect_eq "shell-ext/README.md: a row for every file of shell-ext/*/, and a file for every row" "$out" ""

# The check itself: a file without a row, and a row whose file is gone.
mkdir -p "$T/map/conn"
: >"$T/map/conn/a.c"
: >"$T/map/conn/b.h"
printf '## `conn/`: plain tools\n\n| file | its job |\n|---|---|\n| `a.c` | a |\n| `c.c` | c |\n' >"$T/map/README.md"
expect_eq "a file without a row, and a row without a file, are both named" \
    "$(map_check "$T/map/README.md" "$T/map" | tr '\n' ' ')" "missing conn/b.h gone conn/c.c "
exit 0
