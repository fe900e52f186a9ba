#!/usr/bin/env bash
# Every call remodel-online makes of a server goes through the table of
# operations, conn/online_ops.c (issue 53): a file of shell-ext/ that calls
# the driver itself (a find, a write, a command, a bulk, a cursor read) is
# one the table does not see, which a second implementation (a destination
# server, issue 54; a fault layer naming operations) would then miss. The
# files not ported yet are listed in scripts/ops-unported.txt, which may
# only shrink: a listed file that no longer calls the driver fails too.
#   REMODEL=build/remodel bash tests/cli/test_server_calls.sh
. "$(dirname "$0")/lib.sh"

# ops_check TOP LIST: one line per file of TOP/*/ that calls the driver
# and is not listed ("direct LAYER/FILE: LINE"), per listed file that does
# not ("ported LAYER/FILE: remove it from the list"), per listed file that
# is gone ("gone LAYER/FILE"); nothing when they agree. Handles
# (mongoc_collection_t, online_collection, _destroy, _get_name) are not
# calls of the server.
ops_check() {
    python3 - "$1" "$2" <<'PYEOF'
import os, re, sys
top, listing = sys.argv[1], sys.argv[2]
call = re.compile(r"\bmongoc_(collection_(?!destroy\b|get_name\b|t\b)[a-z_]+\s*\(|"
                  r"client_(command|read|write|get_collection)[a-z_]*\s*\(|"
                  r"database_[a-z_]+\s*\(|bulk_operation_[a-z_]+\s*\(|"
                  r"find_and_modify_[a-z_]+\s*\(|cursor_[a-z_]+\s*\(|change_stream_[a-z_]+\s*\()")
listed = [l.strip() for l in open(listing, encoding="utf-8") if l.strip() and not l.startswith("#")]
for f in sorted(set(listed)):
    if not os.path.exists(os.path.join(top, f)):
        print("gone", f)
for d in sorted(os.listdir(top)):
    if not os.path.isdir(os.path.join(top, d)):
        continue
    for name in sorted(os.listdir(os.path.join(top, d))):
        f = d + "/" + name
        if not name.endswith(".c") or re.match(r"conn/online_ops(_[a-z_]+)?\.c$", f):
            continue
        hits = []
        for n, line in enumerate(open(os.path.join(top, f), encoding="utf-8"), 1):
            if call.search(line) and not line.lstrip().startswith(("*", "/*", "//")):
                hits.append(n)
        if hits and f not in listed:
            print("direct %s: %d" % (f, hits[0]))
        if not hits and f in listed:
            print("ported %s: remove it from the list" % f)
PYEOF
}

list="$ROOT/scripts/ops-unported.txt"
echo "files still calling the driver themselves ($(grep -c '^[^#]' "$list")):" >&2
grep '^[^#]' "$list" | sed 's/^/  /' >&2
expect_eq "shell-ext/: the driver called only through conn/online_ops.c and the listed files" \
    "$(ops_check "$ROOT/shell-ext" "$list")" ""

# The check itself: a direct call in a file not listed, a listed file with
# none, a listed file gone; a handle and a comment are no calls.
mkdir -p "$T/ops/conn" "$T/ops/batch"
printf 'x = mongoc_collection_find_with_opts (c, f, NULL, NULL);\n' >"$T/ops/batch/a.c"
printf 'mongoc_collection_destroy (c);\n/* mongoc_cursor_next (cur) */\n' >"$T/ops/batch/b.c"
printf 'mongoc_cursor_next (cur, &d);\n' >"$T/ops/conn/online_ops.c"
printf 'batch/b.c\nbatch/c.c\n' >"$T/ops/list"
expect_eq "a direct call unlisted, a listed file ported, a listed file gone: each named" \
    "$(ops_check "$T/ops" "$T/ops/list" | tr '\n' ' ')" \
    "gone batch/c.c direct batch/a.c: 1 ported batch/b.c: remove it from the list "
exit 0
