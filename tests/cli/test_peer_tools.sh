#!/usr/bin/env bash
# The peer tools installed by tests/peers/install.sh work: bsondump decodes
# the mongo-tools fixtures, and a mongorestore -> server -> mongodump round
# trip through FerretDB keeps every document. Other suites rely on them.
. "$(dirname "$0")/lib.sh"

use_peers peers-installed || exit 0
pass peers-installed

# same_json A B: the two files hold the same JSON documents, line by line.
same_json() {
    python3 - "$1" "$2" <<'EOF'
import json, sys
a, b = ([json.loads(l) for l in open(p) if l.strip()] for p in sys.argv[1:3])
if a != b:
    sys.exit("documents differ:\n%r\n%r" % (a, b))
EOF
}

# --- bsondump ---------------------------------------------------------------
"$BSONDUMP" "$MT/bsondump/testdata/sample.bson" >"$T/sample.json" 2>"$T/err"
expect_eq bsondump-sample-status "$?" 0
expect_eq bsondump-sample-lines "$(wc -l <"$T/sample.json")" 4
check bsondump-sample-matches-json same_json "$T/sample.json" "$MT/bsondump/testdata/sample.json"
grep -q '4 objects found' "$T/err"
expect_eq bsondump-sample-reports-count "$?" 0

for f in partial_file random_bytes; do
    "$BSONDUMP" "$MT/bsondump/testdata/$f.bson" >/dev/null 2>&1
    [ $? -ne 0 ]; expect_eq "bsondump-rejects-$f" "$?" 0
done
"$BSONDUMP" --objcheck "$MT/bsondump/testdata/bad_type.bson" >/dev/null 2>&1
[ $? -ne 0 ]; expect_eq bsondump-objcheck-rejects-bad_type "$?" 0

# --- server round trip --------------------------------------------------------
# Document counts of the source archives' test.* collections, read
# independently of the tools (tests/peers/archive.py).
src_counts() {
    local a
    for a in "$@"; do python3 "$PEERS/archive.py" count "$a"; done | grep '^test\.' | sort
}
A1=$MT/mongorestore/testdata/test.bar.archive
A2=$MT/mongorestore/testdata/dump-w-oplog.archive
want=$(src_counts "$A1" "$A2")
expect_eq source-archive-counts "$want" "$(printf 'test.bar 1\ntest.foo 25')"

if ! uri=$(REMODEL_SERVER_OWNER=$$ "$SERVER" start "$SRV" 2>"$T/err"); then
    fail server-start "$(cat "$T/err")"
    exit 0
fi
pass server-start
case $uri in mongodb://127.0.0.1:[0-9]*/) pass server-uri-loopback ;;
    *) fail server-uri-loopback "uri [$uri]" ;; esac
expect_eq server-uri-file "$(cat "$SRV/uri")" "$uri"

for a in "$A1" "$A2"; do
    n=$(basename "$a" .archive)
    "$MONGORESTORE" --uri "$uri" --archive="$a" --nsInclude='test.*' \
        >"$T/restore-$n.log" 2>&1
    rc=$?
    expect_eq "mongorestore-$n" "$rc" 0
    [ $rc -eq 0 ] || sed 's/^/    /' "$T/restore-$n.log" >&2
    grep -q ' 0 document(s) failed to restore' "$T/restore-$n.log"
    expect_eq "mongorestore-$n-no-failures" "$?" 0
done

# Dump as an archive and count with the independent reader.
"$MONGODUMP" --uri "$uri" --db test --archive="$T/x.archive" >"$T/dump.log" 2>&1
expect_eq mongodump-archive "$?" 0
got=$(python3 "$PEERS/archive.py" count "$T/x.archive" | grep '^test\.' | sort)
expect_eq mongodump-archive-counts "$got" "$want"

# Dump as a directory; bsondump each collection and compare the documents
# with those in the source archives.
"$MONGODUMP" --uri "$uri" --db test --out "$T/dump" >"$T/dump2.log" 2>&1
expect_eq mongodump-dir "$?" 0
mkdir -p "$T/src"
python3 "$PEERS/archive.py" split "$A1" "$T/src" &&
    python3 "$PEERS/archive.py" split "$A2" "$T/src"
expect_eq source-archive-split "$?" 0
for c in bar foo; do
    "$BSONDUMP" --quiet "$T/dump/test/$c.bson" 2>/dev/null | sort >"$T/got-$c.json"
    "$BSONDUMP" --quiet "$T/src/test.$c.bson" 2>/dev/null | sort >"$T/want-$c.json"
    expect_eq "mongodump-dir-count-$c" "$(wc -l <"$T/got-$c.json")" \
        "$(echo "$want" | sed -n "s/^test\.$c //p")"
    check "round-trip-documents-$c" cmp -s "$T/got-$c.json" "$T/want-$c.json"
    [ -f "$T/dump/test/$c.metadata.json" ]; expect_eq "mongodump-dir-metadata-$c" "$?" 0
done

# --- stop ---------------------------------------------------------------------
pid=$(cat "$SRV/pid")
"$SERVER" stop "$SRV" 2>"$T/err"
expect_eq server-stop "$?" 0
kill -0 "$pid" 2>/dev/null && [ "$(sed 's/.*) //' "/proc/$pid/stat" 2>/dev/null | cut -d' ' -f1)" != Z ]
expect_eq server-stopped-process-gone "$?" 1
port=${uri#mongodb://127.0.0.1:}; port=${port%/}
(exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null
expect_eq server-stopped-port-closed "$?" 1
