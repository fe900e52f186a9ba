#!/usr/bin/env bash
# Errors: damaged .bson files, archives and compressed streams, existing
# destinations, Ctrl-C and bad command lines. Every failure must end with
# exactly one "remodel: error: " line that says where (file, namespace,
# document, byte) and why, a clean non-zero status, and nothing at the
# destination, not even a temporary file (.NAME.remodel-PID-N).
#   REMODEL=build/remodel bash tests/cli/test_errors.sh
. "$(dirname "$0")/lib.sh"

BD=$MT/bsondump/testdata
A=$MT/mongorestore/testdata/dump-w-oplog.archive
W=$T/w             # the directory every destination goes into
BG=""              # background processes to kill on the way out
SLOW=1             # time bounds are multiplied by this
[ -n "${REMODEL_SANITIZE:-}" ] && SLOW=3
cleanup() {
    local p
    for p in $BG; do kill -KILL "$p" 2>/dev/null; done
    rm -rf "$T"
}
trap '[ "$BASHPID" != "$$" ] || cleanup' EXIT

# fresh_w: an empty destination directory.
fresh_w() { rm -rf "$W"; mkdir "$W"; }

# temps DIR...: the temporary names left in the directories.
temps() { local d; for d in "$@"; do ls -A "$d" 2>/dev/null; done | grep -- '\.remodel-' || true; }

# expect_failed NAME: after run_rm, a clean failure: not 0, not a crash.
expect_failed() {
    if [ "$rc" -ge 1 ] && [ "$rc" -le 125 ]; then pass "$1-status"
    else fail "$1-status" "exit status $rc (want 1..125): $(head -c 600 "$T/err")"; fi
}

# expect_one_error NAME STRING...: stderr is exactly one line, it starts with
# "remodel: error: " and holds every STRING.
expect_one_error() {
    local n=$1 s missing=""; shift
    if [ "$(wc -l <"$T/err")" -eq 1 ] && [ "$(head -c 16 "$T/err")" == "remodel: error: " ]; then
        pass "$n-one-error-line"
    else
        fail "$n-one-error-line" "stderr: $(head -c 600 "$T/err")"
    fi
    for s in "$@"; do grep -qF -- "$s" "$T/err" || missing="$missing [$s]"; done
    if [ -z "$missing" ]; then pass "$n-message"
    else fail "$n-message" "missing$missing in: $(head -c 600 "$T/err")"; fi
}


# expect_nothing_written NAME: $W is empty and no temporary name is left in $T.
expect_nothing_written() {
    local left; left=$(ls -A "$W")
    if [ -z "$left" ]; then pass "$1-nothing-written"
    else fail "$1-nothing-written" "left in the destination directory: $left"; fi
    left=$(temps "$T" "$W")
    if [ -z "$left" ]; then pass "$1-no-temp"
    else fail "$1-no-temp" "temporary files left: $left"; fi
}

# bad_input NAME SRC DST STRING...: inspect SRC and convert SRC DST (in $W)
# both fail with one error line holding every STRING, and write nothing.
bad_input() {
    local n=$1 src=$2 dst=$3; shift 3
    fresh_w
    run_rm inspect "$src"
    expect_failed "$n-inspect"
    expect_one_error "$n-inspect" "$src" "$@"
    run_rm convert "$src" "$W/$dst"
    expect_failed "$n-convert"
    expect_one_error "$n-convert" "$src" "$@"
    expect_nothing_written "$n-convert"
}

# poke FILE OFFSET HEX: sets one byte.
poke() { printf "\\x$3" | dd of="$1" bs=1 seek="$2" conv=notrunc status=none; }

# docs_in DUMP: documents in all namespaces, by inspect --json.
docs_in() {
    "$REMODEL" inspect --json "$1" 2>/dev/null |
        python3 -c 'import json,sys; print(sum(n["documents"] for n in json.load(sys.stdin)["namespaces"]))'
}

# wait_gone PID SECONDS: true once PID has exited, false after SECONDS.
wait_gone() {
    local i
    for ((i = 0; i < $2 * 10; i++)); do
        kill -0 "$1" 2>/dev/null || return 0
        sleep 0.1
    done
    return 1
}

# ============================================================================
# 1. The bad .bson files of mongo-tools' bsondump tests. Offsets by layout:
#    documents of 82, 82, 48 and 71 bytes start at 0, 82, 164 and 212.

# Document 1: the key "b" (element at byte 32) runs on over its NUL (0x01)
# to byte 36, so the string length read at byte 37 is nonsense.
bad_input bad_cstring "$BD/bad_cstring.bson" out.bson \
    "document 1 at byte 0: string length 541655040 for field" "runs past the end of its document" \
    "(at byte 37 of the document)"
# Document 1: element type 0xaa at byte 21.
bad_input bad_type "$BD/bad_type.bson" out.bson \
    "document 1 at byte 0: unknown element type 0xaa for field \"a\" (at byte 21 of the document)"
# 177 bytes: the third document (48 bytes at 164) has only 13.
bad_input partial_file "$BD/partial_file.bson" out.bson \
    "document 3 at byte 164: truncated" "length is 48 bytes but the input ends after 13"
# The first four bytes, 20 2b e1 60, read as a length.
bad_input random_bytes "$BD/random_bytes.bson" out.bson \
    "document 1 at byte 0: bad document length 1625369376"
# Four valid documents (the "a.d" key is legal BSON), then one byte 0x0a.
bad_input invalid_field_name "$BD/invalid_field_name.bson" out.bson \
    "document 5 at byte 283: truncated: 1 stray byte(s)"

# broken_array: document 12 has an array keyed "0", "1", "9", "3": out of
# sequence but valid BSON, so it is read and its bytes are kept.
fresh_w
run_rm inspect "$BD/broken_array.bson"
expect_eq broken_array-inspect-status "$rc" 0
run_rm convert "$BD/broken_array.bson" "$W/out.bson"
expect_eq broken_array-convert-status "$rc" 0
check broken_array-bytes-kept cmp -s "$W/out.bson" "$BD/broken_array.bson"
expect_eq broken_array-documents "$(docs_in "$W/out.bson")" 20
expect_eq broken_array-no-temp "$(temps "$T" "$W")" ""

# ============================================================================
# 2. Damaged copies of dump-w-oplog.archive (4506 bytes). Its layout:
#      0 magic; 4 header (113); 117, 302, 363 prelude entries (test.foo,
#      oplog, admin.system.version); 572 terminator;
#      576 admin.system.version segment, 645 its document, 704 terminator,
#      708 its EOF block, 777 terminator;
#      781 test.foo header, 838 + 29*k its 25 documents, 1563 terminator,
#      1567 its EOF block, 1624 terminator;
#      1628 oplog header, 1683.. its 18 documents, 4443 terminator,
#      4447 its EOF block, 4502 terminator, 4506 end.
expect_eq archive-fixture-size "$(wc -c <"$A")" 4506
D=$T/damaged
mkdir "$D"
cut_at() { head -c "$1" "$A" >"$D/cut$1.archive"; }
for n in 2 50 200 572 781 960 1070 4447 4502; do cut_at "$n"; done

# Inside the magic: not an archive any more, read as a .bson file.
bad_input cut-in-magic "$D/cut2.archive" out.archive \
    "document 1 at byte 0: truncated: 2 stray byte(s)"
bad_input cut-in-header "$D/cut50.archive" out.archive \
    "archive header" "document 1 at byte 4: truncated" "length is 113 bytes but the input ends after 46"
bad_input cut-in-prelude-entry "$D/cut200.archive" out.archive \
    "archive prelude" "document 1 at byte 117: truncated" "length is 185 bytes but the input ends after 83"
bad_input cut-before-prelude-end "$D/cut572.archive" out.archive \
    "truncated archive: it ends inside the prelude at byte 572"
bad_input cut-between-segments "$D/cut781.archive" out.archive \
    "test.foo: truncated archive: it ends at byte 781 before the namespace's EOF block" \
    "2 namespace(s) left open"
bad_input cut-in-document "$D/cut960.archive" out.archive \
    "test.foo: document 5 at byte 954: truncated" "length is 29 bytes but the input ends after 6"
bad_input cut-between-documents "$D/cut1070.archive" out.archive \
    "test.foo: truncated archive: it ends inside a data segment after document 8, at byte 1070"
bad_input cut-before-last-eof "$D/cut4447.archive" out.archive \
    "oplog: truncated archive: it ends at byte 4447 before the namespace's EOF block" \
    "1 namespace(s) left open"
bad_input cut-before-last-terminator "$D/cut4502.archive" out.archive \
    "oplog: no terminator after the EOF block (byte 4502)"

# test.foo documents are {_id: ObjectId, a: int32}: 954 is document 5,
# its ObjectId at 963..974 (no strings there; an ObjectId byte keeps the
# BSON valid just the same), the type of "a" at 975.
cp "$A" "$D/flip.archive" && chmod u+w "$D/flip.archive"
poke "$D/flip.archive" 964 00
bad_input flipped-byte-crc "$D/flip.archive" out.archive \
    "test.foo: CRC mismatch at the EOF block at byte 1567" \
    "the archive says 9cc6a0e47a6d6d82, the 25 document(s) read give"
cp "$A" "$D/fliptype.archive" && chmod u+w "$D/fliptype.archive"
poke "$D/fliptype.archive" 975 ee
bad_input flipped-type-byte "$D/fliptype.archive" out.archive \
    "test.foo: document 5 at byte 954: unknown element type 0xee for field \"a\" (at byte 21 of the document)"

# Bad magic: 6c e2 99 81 is no archive; as a .bson it is a huge length.
cp "$A" "$D/badmagic.archive" && chmod u+w "$D/badmagic.archive"
poke "$D/badmagic.archive" 0 6c
bad_input bad-magic "$D/badmagic.archive" out.archive \
    "document 1 at byte 0: bad document length 2174345836"

# An extra int32 "extra" at the end of test.foo's first namespace header
# (781): mongorestore rejects any key but db, collection, EOF and CRC.
python3 - "$A" "$D/extra.archive" <<'EOF'
import struct, sys
d = open(sys.argv[1], 'rb').read()
h = d[781:781 + 57]
body = h[4:-1] + b'\x10extra\x00' + struct.pack('<i', 1) + b'\x00'
open(sys.argv[2], 'wb').write(d[:781] + struct.pack('<i', len(body) + 4) + body + d[781 + 57:])
EOF
bad_input extra-header-field "$D/extra.archive" out.archive \
    "bad namespace header at byte 781: unexpected field \"extra\"" "test.foo"

# ============================================================================
# 3. Compressed archives, truncated or with a byte changed halfway through.
gzip -n -c "$A" >"$D/a.archive.gz"
head -c $(($(wc -c <"$D/a.archive.gz") / 2)) "$D/a.archive.gz" >"$D/cut.archive.gz"
bad_input gzip-truncated "$D/cut.archive.gz" out.archive "truncated gzip stream"

# flip FILE OUT: OUT is FILE with its middle byte xor 0x55.
flip() {
    python3 -c 'import sys; d = bytearray(open(sys.argv[1], "rb").read()); d[len(d) // 2] ^= 0x55; open(sys.argv[2], "wb").write(d)' "$1" "$2"
}
flip "$D/a.archive.gz" "$D/bad.archive.gz"
bad_input gzip-corrupt "$D/bad.archive.gz" out.archive "gzip"
grep -qE 'corrupt gzip data|truncated gzip stream' "$T/err"
expect_eq gzip-corrupt-says-corrupt "$?" 0

if command -v zstd >/dev/null; then
    zstd -q -c "$A" >"$D/a.archive.zst"
    head -c $(($(wc -c <"$D/a.archive.zst") / 2)) "$D/a.archive.zst" >"$D/cut.archive.zst"
    bad_input zstd-truncated "$D/cut.archive.zst" out.archive "truncated zstd stream"
    flip "$D/a.archive.zst" "$D/bad.archive.zst"
    bad_input zstd-corrupt "$D/bad.archive.zst" out.archive "zstd"
    grep -qE 'corrupt zstd data|truncated zstd stream' "$T/err"
    expect_eq zstd-corrupt-says-corrupt "$?" 0
    # The codec does not say where it failed: the message names the span of
    # compressed bytes it was given, which must hold the flipped byte.
    span=$(sed -n 's/.*in compressed bytes \([0-9]*\)\.\.\([0-9]*\):.*/\1 \2/p' "$T/err")
    zsize=$(wc -c <"$D/bad.archive.zst")
    set -- $span
    if [ $# = 2 ] && [ "$1" -le $((zsize / 2)) ] && [ "$2" -gt $((zsize / 2)) ] && [ "$2" -le "$zsize" ]; then pass zstd-corrupt-offset
    else fail zstd-corrupt-offset "want a span of compressed bytes holding byte $((zsize / 2)): $(cat "$T/err")"; fi
else
    fail zstd-installed "the zstd command is needed to make the zstd cases"
fi

# ============================================================================
# 4. --skip-invalid=FILE: the bad first document of bad_type.bson (82 bytes)
# goes to FILE, the three others to the destination.
fresh_w
run_rm convert "$BD/bad_type.bson" "$W/ok.bson" --skip-invalid="$T/q.bson"
expect_eq skip-invalid-status "$rc" 0
expect_message skip-invalid-reported "1 invalid document(s) set aside"
expect_eq skip-invalid-documents "$(docs_in "$W/ok.bson")" 3
check skip-invalid-valid-bytes cmp -s "$W/ok.bson" <(tail -c +83 "$BD/bad_type.bson")
check skip-invalid-quarantine-bytes cmp -s "$T/q.bson" <(head -c 82 "$BD/bad_type.bson")
expect_eq skip-invalid-no-temp "$(temps "$T" "$W")" ""

run_rm inspect --skip-invalid "$BD/bad_type.bson"
expect_eq skip-invalid-inspect-status "$rc" 0
grep -qF "1 invalid document(s) set aside" "$T/out"
expect_eq skip-invalid-inspect-reported "$?" 0

# A refused run leaves an existing quarantine file alone.
echo "keep me" >"$T/q2.bson"
run_rm convert "$BD/bad_type.bson" "$W/ok.bson" --skip-invalid="$T/q2.bson"
expect_failed skip-invalid-refused
expect_eq skip-invalid-refused-keeps-quarantine "$(cat "$T/q2.bson")" "keep me"

# ============================================================================
# 5. Existing destinations: refused without --force, replaced with it.
fresh_w
run_rm convert "$A" "$T/ref.archive"
expect_eq reference-archive-status "$rc" 0
run_rm convert "$A" "$T/ref-dir" --format dir
expect_eq reference-dir-status "$rc" 0

echo "old contents" >"$W/x.archive"
run_rm convert "$A" "$W/x.archive"
expect_failed dst-file-exists
expect_one_error dst-file-exists "$W/x.archive" "already exists" "--force"
expect_eq dst-file-exists-unchanged "$(cat "$W/x.archive")" "old contents"
expect_eq dst-file-exists-no-temp "$(temps "$W")" ""

run_rm convert "$BD/partial_file.bson" "$W/x.archive" --force
expect_failed dst-file-force-bad-source
expect_eq dst-file-force-bad-source-unchanged "$(cat "$W/x.archive")" "old contents"
expect_eq dst-file-force-bad-source-no-temp "$(temps "$W")" ""

run_rm convert "$A" "$W/x.archive" --force
expect_eq dst-file-force-status "$rc" 0
check dst-file-force-replaced cmp -s "$W/x.archive" "$T/ref.archive"
expect_eq dst-file-force-no-temp "$(temps "$W")" ""

fresh_w
mkdir "$W/dd"
echo "old" >"$W/dd/sentinel"
run_rm convert "$A" "$W/dd" --format dir
expect_failed dst-dir-exists
expect_one_error dst-dir-exists "$W/dd" "already exists" "--force"
expect_eq dst-dir-exists-unchanged "$(ls -A "$W/dd")" sentinel
expect_eq dst-dir-exists-no-temp "$(temps "$W")" ""

run_rm convert "$BD/partial_file.bson" "$W/dd" --format dir --force
expect_failed dst-dir-force-bad-source
expect_eq dst-dir-force-bad-source-unchanged "$(ls -A "$W/dd")" sentinel
expect_eq dst-dir-force-bad-source-no-temp "$(temps "$W")" ""

run_rm convert "$A" "$W/dd" --format dir --force
expect_eq dst-dir-force-status "$rc" 0
check dst-dir-force-replaced diff -r "$W/dd" "$T/ref-dir"
expect_eq dst-dir-force-only-dd "$(ls -A "$W")" dd
expect_eq dst-dir-force-no-temp "$(temps "$W")" ""

# A destination under a file (its parent cannot be made): the message names
# the destination, not the temporary name it would have been written under.
# (A missing parent directory is made, as mongodump --out does:
# test_outputs.sh.)
fresh_w
touch "$W/afile"
run_rm convert "$A" "$W/afile/x.archive"
expect_failed dst-parent-is-a-file
expect_one_error dst-parent-is-a-file "$W/afile/x.archive"
if grep -qF ".remodel-" "$T/err"; then
    fail dst-parent-is-a-file-no-temp-name "the message shows the temporary name: $(head -1 "$T/err")"
else
    pass dst-parent-is-a-file-no-temp-name
fi
rm -f "$W/afile"
expect_nothing_written dst-parent-is-a-file

# ============================================================================
# 6. Ctrl-C while reading a pipe that stalls after 2000 bytes (inside the
# oplog's third document): the temporary file is there, then removed.
S=$T/sig
mkdir "$S"
mkfifo "$S/fifo"
{ head -c 2000 "$A"; exec sleep $((20 * SLOW)); } >"$S/fifo" 2>/dev/null &
wpid=$!
BG="$BG $wpid"
"$REMODEL" convert "$S/fifo" "$S/out.archive" >"$T/out" 2>"$T/err" &
rpid=$!
BG="$BG $rpid"
seen=
for ((i = 0; i < 50 * SLOW; i++)); do
    [ -n "$(temps "$S")" ] && { seen=1; break; }
    kill -0 "$rpid" 2>/dev/null || break
    sleep 0.1
done
if [ -n "$seen" ]; then pass sigint-temp-appeared
else fail sigint-temp-appeared "no temporary file in $S: $(ls -A "$S") $(cat "$T/err")"; fi
kill -INT "$rpid" 2>/dev/null
if wait_gone "$rpid" $((5 * SLOW)); then
    pass sigint-exited
    wait "$rpid"
    rc=$?
else
    fail sigint-exited "still running 5 s after SIGINT"
    kill -KILL "$rpid" 2>/dev/null
    wait "$rpid" 2>/dev/null
    rc=none
fi
kill "$wpid" 2>/dev/null
wait "$wpid" 2>/dev/null
if [ "$rc" != none ] && [ "$rc" -ne 0 ]; then pass sigint-status
else fail sigint-status "exit status $rc"; fi
expect_one_error sigint "interrupted"
if [ ! -e "$S/out.archive" ]; then pass sigint-no-output; else fail sigint-no-output "$S/out.archive exists"; fi
expect_eq sigint-no-temp "$(temps "$T" "$S")" ""

# ============================================================================
# 7. Usage errors: status 2 and a message.
# usage NAME STRING... -- ARGS...: remodel ARGS exits 2, stderr holds every STRING.
usage() {
    local n=$1 want=()
    shift
    while [ "$1" != "--" ]; do want+=("$1"); shift; done
    shift
    fresh_w
    (cd "$W" && "$REMODEL" "$@" >"$T/out" 2>"$T/err")
    rc=$?
    expect_eq "$n-status" "$rc" 2
    expect_message "$n-message" "remodel: error: " "${want[@]}"
    expect_eq "$n-nothing-written" "$(ls -A "$W")" ""
}
usage unknown-command 'unknown command "frob"' -- frob "$A"
usage unknown-option 'unknown option "--bogus"' -- convert --bogus "$A" out.archive
usage unknown-short-option '"-x"' -- convert -xq "$A" out.archive
usage option-missing-argument "--format" -- convert "$A" out.archive --format
if grep -qF "unknown option" "$T/err"; then
    fail option-missing-argument-not-unknown "--format is known, it lacks its argument: $(head -1 "$T/err")"
else
    pass option-missing-argument-not-unknown
fi
# An option a command does not take is refused, named as given (the
# option, not its value) with the command, never silently ignored.
usage inspect-threads '"--threads" is not one of remodel inspect'"'"'s' -- inspect "$A" --threads 3
usage inspect-force '"-f" is not one of remodel inspect'"'"'s' -- inspect -f "$A"
usage show-format '"--format" is not one of remodel show'"'"'s' -- show "$A" --format archive
usage diff-skip-invalid '"--skip-invalid" is not one of remodel diff'"'"'s' -- diff "$A" "$A" --skip-invalid
usage run-verbose '"-v" is not one of remodel run'"'"'s' -- run plan.json -v --from "$A" --to out.archive
usage check-compress '"--compress" is not one of remodel check'"'"'s' -- check plan.json --compress zstd
usage show-json '"--json" is not one of remodel show'"'"'s' -- show "$A" --json
# Exact names only (issue 25): getopt_long took an unambiguous prefix, so
# --form was --format and a typo could mean another option; now refused,
# naming the nearest option the command takes.
usage abbreviated-option 'unknown option "--form" (did you mean "--format"?)' -- run plan.json --form dir --to x
usage mistyped-option 'unknown option "--froce" (did you mean "--force"?)' -- convert "$A" out.archive --froce
usage flag-with-value 'option "--force" takes no value' -- convert "$A" out.archive --force=yes
usage convert-missing-arguments "missing arguments" -- convert "$A"
usage inspect-missing-arguments "missing arguments" -- inspect
usage too-many-arguments "too many arguments" -- convert "$A" a.archive b.archive
usage compress-brotli '--compress' 'brotli' -- convert "$A" out.archive --compress brotli
usage compress-bad-level '--compress' 'gzip:12' -- convert "$A" out.archive --compress gzip:12
usage format-unknown '--format' 'xml' -- convert "$A" out.archive --format xml
usage inspect-compress '--compress' -- inspect "$A" --compress gzip
usage threads-zero '--threads' -- convert "$A" out.archive --threads 0

fresh_w
"$REMODEL" >"$T/out" 2>"$T/err"
rc=$?
expect_eq no-command-status "$rc" 2
expect_message no-command-usage "usage: remodel COMMAND"

fresh_w
run_rm convert "$A" "$W/dd" --compress zstd --format dir
expect_failed dir-zstd
expect_one_error dir-zstd "$W/dd" "a directory dump can be gzipped per file" "not zstd"
expect_nothing_written dir-zstd

# ============================================================================
# 8. A .bson file holds one collection; dump-w-oplog.archive has three.
fresh_w
run_rm convert "$A" "$W/x.bson"
expect_failed bson-several-collections
expect_one_error bson-several-collections "$W/x.bson" \
    "a .bson file holds exactly one collection" "test.foo"
expect_nothing_written bson-several-collections

# ============================================================================
# 9. An input file cut short while it is read. A plain archive of 8 MiB or
#    more is mapped (common/dump/read_ahead.c), where read() saw the end;
#    the cut must still be one error naming the file, not a crash. The
#    output is a pipe that is not read until the cut, so the reading is
#    under way and held there. Cut far ahead: the read-ahead's next step
#    finds it (the message says both sizes); cut to nothing, under the
#    pages the main thread reads: SIGBUS, named too, and escaped (a
#    directory dump's file names are the dump's).
GEN=$(dirname "$REMODEL")/remodel-gen
[ -x "$GEN" ] || GEN=$ROOT/build/remodel-gen   # the sanitizer build has none
"$GEN" --out "$T/gen60" --scale 60 >/dev/null
"$REMODEL" convert "$T/gen60" "$T/big.archive" -q
big=$(stat -c %s "$T/big.archive")
for cut in $((40 << 20)) 0; do
    src=$T/cut.archive
    [ "$cut" == 0 ] && src=$T/cut$'\e'[31m.archive
    cp "$T/big.archive" "$src"
    { "$REMODEL" convert "$src" - -q 2>"$T/err"; echo $? >"$T/rc"; } |
        { head -c 65536 >/dev/null; truncate -s "$cut" "$src"; cat >/dev/null; }
    rc=$(cat "$T/rc")
    expect_eq "cut-$cut-status" "$rc" 1
    if [ "$cut" -gt 0 ]; then
        expect_one_error "cut-$cut" "$T/cut.archive: the file was cut short while it was read" \
            "now $cut bytes, $big when it was opened"
    else
        expect_one_error "cut-$cut" "$T/cut\\x1b[31m.archive: the file was cut short while it was read"
        expect_eq "cut-$cut-no-escape-byte" "$(tr -dc '\033' <"$T/err" | wc -c)" 0
    fi
done

# ============================================================================
# 10. A bad document amid a mapped archive's documents. convert copies the
#     documents the read-ahead has checked in runs (rm_reader_next_run); a
#     run must stop short of the bad one, which is then reported (or set
#     aside) as one document, its number and byte the same as read one by
#     one: found here by walking the archive's frames in Python.
python3 - "$T/big.archive" "$T/bad.archive" "$T/bad.want" >"$T/bad.where" <<'PYEOF'
import struct, sys
d = bytearray(open(sys.argv[1], "rb").read())
off, header, n = 4, True, 0  # after the magic; the first frame of a section is its header
while True:
    (ln,) = struct.unpack_from("<I", d, off)
    if ln == 0xFFFFFFFF:
        off, header, n = off + 4, True, 0
        continue
    if not header and off > len(d) // 2 and ln < 2000:
        break
    n += not header
    header = False
    off += ln
d[off + ln - 1] = 1  # the document's final 0x00
open(sys.argv[2], "wb").write(d)
open(sys.argv[3], "wb").write(d[off:off + ln])
print(n + 1, off)
PYEOF
read -r bad_n bad_at <"$T/bad.where"
run_rm convert "$T/bad.archive" "$T/bad-out.archive" -q
expect_eq bad-amid-runs-status "$rc" 1
expect_one_error bad-amid-runs "$T/bad.archive: " ": document $bad_n at byte $bad_at: document does not end with 0x00"
run_rm convert "$T/bad.archive" "$T/bad-out.archive" --skip-invalid="$T/bad.q"
expect_eq bad-amid-runs-skip-status "$rc" 0
check bad-amid-runs-quarantine cmp -s "$T/bad.q" "$T/bad.want"
total=$("$REMODEL" convert "$T/big.archive" "$T/all-out.archive" 2>&1 | sed -n 's/.*, \([0-9]*\) document(s).*/\1/p')
expect_message bad-amid-runs-count "$((total - 1)) document(s)"

# A metadata file is read in growing steps up to 64 MiB: one of 300 KiB
# (past the first steps) is read whole, byte for byte into the output;
# one past 64 MiB is refused, naming it, and nothing is written.
mkdir -p "$T/meta/crm"
cp "$ROOT/dumps/sample/crm/people.bson" "$T/meta/crm/"
python3 - "$ROOT/dumps/sample/crm/people.metadata.json" "$T/meta/crm/people.metadata.json" <<'PYEOF'
import sys
text = open(sys.argv[1]).read().rstrip()
open(sys.argv[2], "w").write(text[:-1] + " " * (300 << 10) + "}\n")
PYEOF
run_rm convert "$T/meta" "$W/meta-out" -q
expect_eq meta-300k-status "$rc" 0
check meta-300k-same-bytes cmp -s "$T/meta/crm/people.metadata.json" "$W/meta-out/crm/people.metadata.json"
head -c $(((64 << 20) + 1)) /dev/zero | tr '\0' ' ' >"$T/meta/crm/people.metadata.json"
run_rm convert "$T/meta" "$W/meta-big" -q
expect_eq meta-64m-status "$rc" 1
expect_one_error meta-64m "$T/meta/crm/people.metadata.json" "larger than 64 MiB: not a metadata file"
check meta-64m-nothing-written test ! -e "$W/meta-big"
