#!/usr/bin/env bash
# Hard stops and cut inputs: SIGTERM and SIGINT stop every output format
# (archive, directory, tar, .bson, each plain, gzip, zstd; standard output)
# while reading, and a tar while it is packed at the end, with exit 130 and
# no output left; after SIGKILL the next run removes what the killed one
# left (and only that: remodel's exact names, beside its destination and in
# its --tmp, whose PID no process has), with one note; a tar cut anywhere,
# even between members, is truncated; one document limit, 16 MiB (oplog
# entries 16 MiB + 16 KiB, not in an archive), on every input and writer;
# pzstd's skippable and multiple frames are read.
#   REMODEL=build/remodel bash tests/cli/test_stops.sh
. "$(dirname "$0")/lib.sh"

W=$T/w
mkdir -p "$W" "$T/src/db"
# ~60 MB of real documents: the logging sample, 400 times.
python3 -c 'import sys; open(sys.argv[2], "wb").write(open(sys.argv[1], "rb").read() * 400)' \
    "$ROOT/dumps/sample/logging/logmsg.bson" "$T/src/db/c.bson"
"$REMODEL" convert -q "$T/src" "$T/big.archive"
# A feeder that trickles the archive (about 4 MB/s), so every run is still
# reading when the signal comes.
cat >"$T/feed.py" <<'PY'
import sys, time
data = open(sys.argv[1], 'rb').read()
try:
    for i in range(0, len(data), 1 << 18):
        sys.stdout.buffer.write(data[i:i + (1 << 18)]); sys.stdout.buffer.flush(); time.sleep(0.06)
except BrokenPipeError:
    pass
PY

# stopped NAME SIGNAL WAIT ARGS...: started in the background, signalled as
# soon as its output shows (WAIT: "temp", any temporary name in $W; "file",
# a temporary regular file there, which a tar only gets when it is packed
# from its staged files at the end; "stdout", bytes on the pipe its
# standard output goes to), it ends within 10 s with 130 and leaves nothing
# in $W (nor in $W/tmp, its --tmp). With --feed after WAIT, the command's
# standard input is the trickling feeder. $AFTER: seconds more before the
# signal (0 unless set).
stopped() {
    local n=$1 sig=$2 wait=$3 pid i gone="" feeder="" reader="" out=/dev/null seen=""; shift 3
    rm -rf "$W"; mkdir -p "$W/tmp"
    rm -f "$T/fifo" "$T/ofifo" "$T/stdout.bytes"
    if [ "$wait" == stdout ]; then
        mkfifo "$T/ofifo"
        cat "$T/ofifo" >"$T/stdout.bytes" &
        reader=$!
        out=$T/ofifo
    fi
    if [ "$1" == --feed ]; then
        shift
        mkfifo "$T/fifo"
        python3 "$T/feed.py" "$T/big.archive" >"$T/fifo" &
        feeder=$!
        "$@" <"$T/fifo" >"$out" 2>"$T/err" &
    else
        "$@" >"$out" 2>"$T/err" &
    fi
    pid=$!
    for i in $(seq 1 1000); do
        case $wait in
        temp) ls -A "$W" | grep -q 'remodel-' && seen=1 ;;
        file) [ -n "$(find "$W" -maxdepth 1 -type f -name '.*.remodel-*')" ] && seen=1 ;;
        stdout) [ -s "$T/stdout.bytes" ] && seen=1 ;;
        esac
        [ -n "$seen" ] && break
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.02
    done
    sleep "${AFTER:-0}"
    kill -"$sig" "$pid" 2>/dev/null
    for i in $(seq 1 200); do
        kill -0 "$pid" 2>/dev/null || { gone=1; break; }
        sleep 0.05
    done
    [ -z "$gone" ] && kill -KILL "$pid" 2>/dev/null
    wait "$pid"; rc=$?
    [ -n "$feeder" ] && { kill "$feeder" 2>/dev/null; wait "$feeder" 2>/dev/null; }
    [ -n "$reader" ] && wait "$reader" 2>/dev/null
    expect_eq "$n: its output showed before the signal" "$seen" 1
    expect_eq "$n: ends within 10 s of SIG$sig" "$gone" 1
    expect_eq "$n: exit 130" "$rc" 130
    expect_eq "$n: says interrupted" "$(cat "$T/err")" "remodel: error: interrupted"
    expect_eq "$n: nothing left" "$(ls -A "$W" "$W/tmp" | grep -v -e '^$' -e ':$' -e '^tmp$')" ""
}
# Every output format, while the (trickled) input is read.
for out in o.archive o.archive.gz o.archive.zst odir odir-gz o.tar o.tar.gz o.tar.zst o.bson o.bson.gz o.bson.zst; do
    args=("$W/$out")
    [ "$out" == odir-gz ] && args=("$W/$out" --compress gzip)
    stopped "reading, writing $out (TERM)" TERM temp --feed "$REMODEL" convert -q - "${args[@]}"
done
for out in o.tar.gz o.archive.zst odir; do
    stopped "reading, writing $out (INT)" INT temp --feed "$REMODEL" convert -q - "$W/$out"
done
# Standard output: an archive, plain and compressed, into a pipe.
stopped "reading, writing an archive to stdout (TERM)" TERM stdout --feed "$REMODEL" convert -q - -
stopped "reading, writing an archive to stdout (INT)" INT stdout --feed "$REMODEL" convert -q - -
stopped "reading, writing a gzip archive to stdout (TERM)" TERM stdout --feed "$REMODEL" convert -q - - --compress gzip
stopped "reading, writing a .bson stream to stdout (TERM)" TERM stdout --feed "$REMODEL" convert -q - - --format bson
# A tar is packed and compressed at the end, from its staged files, after the
# last read (the input side, the only one that heard signals before, is done
# then): stop it there. Documents of random text compress slowly enough at
# the top levels; the signal comes once the tar file itself exists.
python3 - "$T/rnd/db" <<'PY2'
import bson, os, sys
os.makedirs(sys.argv[1], exist_ok=True)
with open(sys.argv[1] + "/r.bson", "wb") as f:
    for i in range(20000):
        f.write(bson.encode({"_id": i, "t": os.urandom(1500).hex()}))
PY2
"$REMODEL" convert -q "$T/rnd" "$T/rnd.archive"
for out in o.tar.gz o.tar.zst; do
    codec=gzip:9; [ "$out" == o.tar.zst ] && codec=zstd:19
    stopped "packing $out at the end (TERM)" TERM file "$REMODEL" convert -q "$T/rnd.archive" "$W/$out" --compress "$codec" \
        --threads 1
    stopped "packing $out at the end (INT)" INT file "$REMODEL" convert -q "$T/rnd.archive" "$W/$out" --compress "$codec" \
        --threads 1
done
# zstd with workers at a high level: the codec's calls wait for whole jobs,
# which must stay small enough for the signal to be heard (default jobs of
# 32 MiB at level 19 kept it unheard for over a minute, once the input was
# read: hence the second's wait).
for out in o.archive.zst o.bson.zst; do
    AFTER=1.5 stopped "zstd:19 on two workers, $out (TERM)" TERM temp "$REMODEL" convert -q "$T/rnd.archive" "$W/$out" \
        --compress zstd:19 --threads 2
done
# The commands of the report: from a regular file, at the default level.
stopped "convert big.archive o.tar.gz, packing (TERM)" TERM file "$REMODEL" convert -q "$T/rnd.archive" "$W/o.tar.gz"
echo '{"remodel": 1, "steps": [{"set": {"in": "db.c", "fields": {"x": 1}}}]}' >"$T/set.json"
echo '{"remodel": 1, "steps": [{"set": {"in": "db.r", "fields": {"x": 1}}}]}' >"$T/setr.json"
stopped "run --to o.tar.gz, packing (TERM)" TERM file "$REMODEL" run -q "$T/setr.json" --from "$T/rnd.archive" --to "$W/o.tar.gz" --tmp "$W/tmp"
stopped "run --to o.tar.gz, reading (TERM)" TERM temp --feed "$REMODEL" run -q "$T/set.json" --from - --to "$W/o.tar.gz" --tmp "$W/tmp"
stopped "run --to o.bson.zst, reading (INT)" INT temp --feed "$REMODEL" run -q "$T/set.json" --from - --to "$W/o.bson.zst" --tmp "$W/tmp"

# --- after SIGKILL, the next run sweeps -------------------------------------------
# killed NAME ARGS...: started on the trickled input, killed with SIGKILL
# once it has a temporary name in $W or $W/tmp; $pid is its PID.
killed() {
    local i; shift
    rm -f "$T/fifo"; mkfifo "$T/fifo"
    python3 "$T/feed.py" "$T/big.archive" >"$T/fifo" &
    feeder=$!
    "$@" <"$T/fifo" 2>/dev/null &
    pid=$!
    for i in $(seq 1 500); do (ls -A "$W"; ls -A "$W/tmp") | grep -q "remodel-$pid-" && break; sleep 0.02; done
    sleep 0.2
    kill -KILL "$pid"; wait "$pid" 2>/dev/null
    kill "$feeder" 2>/dev/null; wait "$feeder" 2>/dev/null
}
rm -rf "$W"; mkdir -p "$W/tmp" "$W/other"
killed run "$REMODEL" run -q "$T/set.json" --from - --to "$W/o.archive" --tmp "$W/tmp" --batch
left=$( (ls -A "$W"; ls -A "$W/tmp") | grep -c "remodel-$pid-")
[ "$left" -ge 2 ] && pass "SIGKILL leaves its temporary files ($left)" || fail "SIGKILL leaves its temporary files" "$(ls -A "$W" "$W/tmp")"
# A PID no process has (a child reaped), in names that are not remodel's exact
# pattern, and in a directory the next run neither writes to nor uses: kept.
sh -c 'exit 0' & dead=$!; wait $dead
touch "$W/.x.remodel-$dead-1.bak" "$W/x.remodel-$dead-1" "$W/.remodel-$dead-1" "$W/other/.o.archive.remodel-$dead-0"
# A name whose PID is alive (this shell's) is not another run's leftover.
touch "$W/.keep.remodel-$$-0" "$W/tmp/.remodel-store.remodel-$$-7"
"$REMODEL" run "$T/set.json" --from "$ROOT/dumps/sample" --to "$W/o2.archive" --tmp "$W/tmp" --nsInclude 'crm.*' 2>"$T/err" >/dev/null
expect_eq "the next run: its own error (the plan's namespace is excluded)" "$(grep -c 'db.c is not in the input' "$T/err")" 1
expect_eq "the next run: the killed run's files are gone" "$( (ls -A "$W"; ls -A "$W/tmp") | grep -c "remodel-$pid-")" 0
expect_eq "the next run: says so, once, with the count" \
    "$(grep -c "^remodel: removed $left stale temporary file(s) of killed remodel runs from $W/tmp and $W\$" "$T/err")" 1
expect_eq "a live PID's files stay" "$(ls -A "$W" "$W/tmp" | grep -c "remodel-$$-")" 2
expect_eq "names not of remodel's pattern stay" "$(ls -A "$W" | grep -c "remodel-$dead-")" 3
expect_eq "another directory is not swept" "$(ls -A "$W/other")" ".o.archive.remodel-$dead-0"
# A tar's staging directory, from a convert killed while reading.
killed convert env TMPDIR="$W/tmp" "$REMODEL" convert -q - "$W/o.tar"
expect_eq "SIGKILL while writing a tar leaves its staging directory" "$(find "$W" -maxdepth 1 -type d -name ".o.tar.remodel-$pid-*" | wc -l)" 1
touch "$W/.o3.archive.remodel-$dead-0"
TMPDIR=$W/tmp "$REMODEL" convert -q "$ROOT/dumps/sample" "$W/o3.archive" 2>"$T/err"
expect_eq "--quiet: swept, no note" "$(wc -c <"$T/err"):$(ls -A "$W" | grep -c -e "remodel-$dead-0" -e "remodel-$pid-")" "0:0"
touch "$W/.o4.archive.remodel-$dead-0"
TMPDIR=$W/tmp "$REMODEL" convert "$ROOT/dumps/sample" "$W/o4.archive" 2>"$T/err" >/dev/null
expect_eq "convert: says so" "$(grep -c "^remodel: removed 1 stale temporary file(s) of killed remodel runs from $W\$" "$T/err")" 1

# --- a tar cut anywhere ------------------------------------------------------------
"$REMODEL" convert -q "$ROOT/dumps/sample" "$T/s.tar"
offsets=$(python3 -c '
import sys, tarfile
t = tarfile.open(sys.argv[1])
ends = [m.offset_data + (m.size + 511) // 512 * 512 for m in t.getmembers()]
print(" ".join(str(x) for x in [m.offset for m in t.getmembers()][1:6] + ends[-3:] + [ends[-1] + 512]))' "$T/s.tar")
for cut in 1536 $offsets; do
    head -c "$cut" "$T/s.tar" >"$T/cut.tar"
    rm -rf "$W"; mkdir "$W"
    run_rm convert "$T/cut.tar" "$W/out"
    expect_eq "tar cut at byte $cut: exit 1, nothing written" "$rc:$(ls -A "$W")" "1:"
    expect_message "tar cut at byte $cut: truncated" "runcated"
    gzip -c "$T/cut.tar" >"$T/cut.tar.gz"
    run_rm inspect "$T/cut.tar.gz"
    expect_eq "tar.gz cut at byte $cut: inspect exit 1" "$rc" 1
done
run_rm inspect "$T/s.tar"
expect_eq "the whole tar: exit 0" "$rc" 0

# --- one size limit, the server's ----------------------------------------------------
python3 - "$T" <<'PY'
import bson, os, sys
t = sys.argv[1]
for name, size in (("max", 16 * 1024 * 1024), ("over", 16 * 1024 * 1024 + 1)):
    d = bson.encode({"_id": 1, "x": "a" * (size - 22)})
    assert len(d) == size, len(d)
    os.makedirs("%s/lim/%s" % (t, name), exist_ok=True)
    open("%s/lim/%s/c.bson" % (t, name), "wb").write(d)
os.makedirs("%s/lim/op" % t, exist_ok=True)
open("%s/lim/op/oplog.bson" % t, "wb").write(bson.encode({"_id": 1, "x": "a" * (16 * 1024 * 1024 + 100 - 22)}))
PY
run_rm convert -q "$T/lim/max/c.bson" "$T/lim/max.bson"
expect_eq "a 16 MiB document: converts" "$rc" 0
run_rm inspect "$T/lim/max.bson"
expect_eq "a 16 MiB document: its output inspects" "$rc" 0
run_rm convert -q "$T/lim/over/c.bson" "$T/lim/over.bson"
expect_eq "16 MiB + 1: refused, nothing written" "$rc:$(test -e "$T/lim/over.bson" && echo written)" "1:"
expect_message "16 MiB + 1: says the limit" "bad document length 16777217 (the limit is 16777216)"
python3 - "$T/lim/over/c.bson" "$T/lim/over.tar" <<'PY'
import io, sys, tarfile
doc = open(sys.argv[1], "rb").read()
with tarfile.open(sys.argv[2], "w") as t:
    i = tarfile.TarInfo("dump/over/c.bson"); i.size = len(doc); t.addfile(i, io.BytesIO(doc))
PY
"$REMODEL" convert -q "$T/lim/max/c.bson" "$T/lim/max.archive"
python3 - "$T/lim/max.archive" "$T/lim/over.archive" <<'PY'
import sys
import struct
body = open(sys.argv[1], "rb").read()
i = body.index(b"\x02x\x00")      # the document's string field: one byte longer
# Lengthen the document by one byte: its length, the string's length, one 'a'.
start = body.rfind(struct.pack("<i", 16 * 1024 * 1024), 0, i)
s = struct.unpack("<i", body[i + 3:i + 7])[0]
new = body[:start] + struct.pack("<i", 16 * 1024 * 1024 + 1) + body[start + 4:i + 3] + \
      struct.pack("<i", s + 1) + b"a" + body[i + 7:]
open(sys.argv[2], "wb").write(new)
PY
run_rm inspect "$T/lim/over.archive"
expect_eq "16 MiB + 1 in an archive: refused" "$rc" 1
expect_message "16 MiB + 1 in an archive: says the limit" "the limit is 16777216"
run_rm inspect "$T/lim/over.tar"
expect_eq "16 MiB + 1 in a tar: refused" "$rc" 1
run_rm inspect "$T/lim/op/oplog.bson"
expect_eq "an oplog entry 100 bytes over 16 MiB: read (the oplog's 16 KiB margin)" "$rc" 0

# Both sides of the limit on every input: a directory (plain and gzip), a
# tar, standard input; the oplog's own limit, 16 MiB + 16 KiB, in a .bson
# file and a directory. What is read is written, and the output reads back.
python3 - "$T/lim" <<'PY'
import bson, gzip, io, os, sys, tarfile
lim, M = sys.argv[1], 16 * 1024 * 1024
def doc(n):
    d = bson.encode({"_id": 1, "x": "a" * (n - 22)}); assert len(d) == n, len(d); return d
for name, n in (("dmax", M), ("dover", M + 1)):
    os.makedirs("%s/%s/db" % (lim, name)); open("%s/%s/db/c.bson" % (lim, name), "wb").write(doc(n))
    os.makedirs("%s/%s-gz/db" % (lim, name)); open("%s/%s-gz/db/c.bson.gz" % (lim, name), "wb").write(gzip.compress(doc(n), 1))
    with tarfile.open("%s/%s.tar" % (lim, name), "w") as t:
        d = doc(n); i = tarfile.TarInfo("dump/db/c.bson"); i.size = len(d); t.addfile(i, io.BytesIO(d))
for name, n in (("omax", M + 16 * 1024), ("oover", M + 16 * 1024 + 1)):
    os.makedirs("%s/%s" % (lim, name)); open("%s/%s/oplog.bson" % (lim, name), "wb").write(doc(n))
# run's output: {"y": 1} added to a document of 16 MiB - 7 makes exactly
# 16 MiB; to one of 16 MiB - 6, one byte more.
for name, n in (("g0", M - 7), ("g1", M - 6)):
    os.makedirs("%s/%s/db" % (lim, name)); open("%s/%s/db/c.bson" % (lim, name), "wb").write(doc(n))
PY
for src in dmax dmax-gz dmax.tar; do
    rm -rf "$T/lim/out"; run_rm convert -q "$T/lim/$src" "$T/lim/out"
    expect_eq "16 MiB in $src: converts" "$rc" 0
    run_rm inspect "$T/lim/out"
    expect_eq "16 MiB in $src: the output inspects" "$rc" 0
done
for src in dover dover-gz dover.tar; do
    rm -rf "$T/lim/out"; run_rm convert -q "$T/lim/$src" "$T/lim/out"
    expect_eq "16 MiB + 1 in $src: refused, nothing written" "$rc:$(ls -A "$T/lim" | grep -c -e '^out$' -e 'remodel-')" "1:0"
    expect_message "16 MiB + 1 in $src: says the limit" "document 1 at byte 0: bad document length 16777217 (the limit is 16777216)"
done
run_rm convert -q - "$T/lim/stdin.bson" <"$T/lim/max/c.bson"
expect_eq "16 MiB on standard input: converts" "$rc" 0
run_rm convert -q - "$T/lim/stdin2.bson" <"$T/lim/over/c.bson"
expect_eq "16 MiB + 1 on standard input: refused" "$rc:$(test -e "$T/lim/stdin2.bson" && echo written)" "1:"
run_rm inspect "$T/lim/omax/oplog.bson"
expect_eq "an oplog entry of 16 MiB + 16 KiB in oplog.bson: read" "$rc" 0
run_rm inspect "$T/lim/omax"
expect_eq "an oplog entry of 16 MiB + 16 KiB in a directory: read" "$rc" 0
for src in oover/oplog.bson oover; do
    run_rm inspect "$T/lim/$src"
    expect_eq "an oplog entry of 16 MiB + 16 KiB + 1 ($src): refused" "$rc" 1
    expect_message "an oplog entry of 16 MiB + 16 KiB + 1 ($src): says the limit" "bad document length 16793601 (the limit is 16793600)"
done
# Writers: nothing is written past what its reader (and mongorestore) reads.
echo '{"remodel": 1, "steps": [{"set": {"in": "db.c", "fields": {"y": 1}}}]}' >"$T/sety.json"
for out in o.archive odir o.tar o.bson; do
    rm -rf "$W"; mkdir "$W"
    run_rm run -q "$T/sety.json" --from "$T/lim/g0" --to "$W/$out"
    expect_eq "run writing a 16 MiB document to $out: exit 0" "$rc" 0
    run_rm inspect "$W/$out"
    expect_eq "run writing a 16 MiB document to $out: the output inspects" "$rc" 0
    rm -rf "$W"; mkdir "$W"
    run_rm run -q "$T/sety.json" --from "$T/lim/g1" --to "$W/$out"
    expect_eq "run growing a document to 16 MiB + 1 in $out: refused, nothing written" "$rc:$(ls -A "$W")" "1:"
    expect_message "run growing a document to 16 MiB + 1 in $out: says so" "would be 16777217 bytes, over the 16 MiB limit"
done
for out in odir o.tar oplog.bson; do
    rm -rf "$W"; mkdir "$W"
    run_rm convert -q "$T/lim/omax" "$W/$out"
    expect_eq "an oplog entry of 16 MiB + 16 KiB to $out: written" "$rc" 0
    run_rm inspect "$W/$out"
    expect_eq "an oplog entry of 16 MiB + 16 KiB to $out: the output inspects" "$rc" 0
done
for out in o.archive x.bson; do
    rm -rf "$W"; mkdir "$W"
    run_rm convert -q "$T/lim/omax" "$W/$out"
    expect_eq "an oplog entry of 16 MiB + 16 KiB to $out: refused, nothing written" "$rc:$(ls -A "$W")" "1:"
    expect_message "an oplog entry of 16 MiB + 16 KiB to $out: says the limit" \
        "$W/$out: oplog: document 1 is 16793600 bytes, over the limit of"
done
run_rm convert -q "$T/lim/omax" -
expect_eq "an oplog entry of 16 MiB + 16 KiB to an archive on stdout: refused" "$rc" 1

# --- pzstd: skippable frames and several zstd frames --------------------------------------
if command -v pzstd >/dev/null; then
    pzstd -q -p 2 -f "$T/big.archive" -o "$T/big.archive.pzst"
    expect_eq "pzstd output starts with a skippable frame" "$(head -c 4 "$T/big.archive.pzst" | od -An -tx1 | tr -d ' ')" "502a4d18"
    expect_eq "pzstd archive: the same documents" \
        "$("$REMODEL" inspect --json "$T/big.archive.pzst" | python3 -c 'import json,sys; print(json.load(sys.stdin)["namespaces"][0]["crc"])')" \
        "$("$REMODEL" inspect --json "$T/big.archive" | python3 -c 'import json,sys; print(json.load(sys.stdin)["namespaces"][0]["crc"])')"
    pzstd -q -p 2 -f "$T/src/db/c.bson" -o "$T/c.bson.zst"
    run_rm convert -q "$T/c.bson.zst" "$T/c2.bson"
    check "pzstd .bson: converts byte for byte" cmp -s "$T/c2.bson" "$T/src/db/c.bson"
    head -c $(($(wc -c <"$T/big.archive.pzst") / 2)) "$T/big.archive.pzst" >"$T/cut.pzst"
    run_rm inspect "$T/cut.pzst"
    expect_eq "pzstd archive cut: exit 1" "$rc" 1
else
    fail "pzstd installed" "pzstd not found (Debian package zstd)"
fi

# Hand-made frame sequences: skippable frames (the first and the last magic
# of their range, empty or not) first, between and after zstd frames: the
# same documents as the plain file, from a file and from standard input.
# Cut inside a skippable frame, or bytes after the last frame that are no
# frame: errors.
"$REMODEL" convert -q "$ROOT/dumps/sample" "$T/sf.archive"
"$REMODEL" convert -q "$ROOT/dumps/sample" "$T/sf.tar"
cp "$ROOT/dumps/sample/crm/people.bson" "$T/people.bson"
python3 - "$T" <<'PY'
import struct, subprocess, sys
t = sys.argv[1]
def z(b): return subprocess.run(["zstd", "-q", "-c", "-3"], input=b, capture_output=True, check=True).stdout
def skip(n, payload): return struct.pack("<II", 0x184D2A50 + n, len(payload)) + payload
for name in ("sf.archive", "sf.tar", "people.bson"):
    data = open("%s/%s" % (t, name), "rb").read()
    h = len(data) // 3
    seqs = {
        "lead": skip(0, b"\0\0\0\0") + z(data[:h]) + skip(15, b"between") + skip(7, b"") +
                z(data[h:2 * h]) + z(data[2 * h:]) + skip(15, b"end"),
        "mid": z(data[:h]) + skip(3, b"x" * 1000) + z(data[h:]),
        "cut": skip(0, b"abc") + z(data) + struct.pack("<II", 0x184D2A50, 100) + b"abc",
        "junk": skip(0, b"abc") + z(data) + b"garbage!",
    }
    for k, v in seqs.items():
        open("%s/%s.%s.zst" % (t, name, k), "wb").write(v)
PY
crcs() { python3 -c 'import json,sys; print([n["crc"] for n in json.load(sys.stdin)["namespaces"]])'; }
for name in sf.archive sf.tar people.bson; do
    want=$("$REMODEL" inspect --json "$T/$name" | crcs)
    for k in lead mid; do
        expect_eq "$name, frames $k: the same documents" "$("$REMODEL" inspect --json "$T/$name.$k.zst" | crcs)" "$want"
    done
    expect_eq "$name, frames lead, on standard input: the same documents" \
        "$("$REMODEL" inspect --json - <"$T/$name.lead.zst" | crcs)" "$want"
    # (A tar's zstd is libarchive's to decode: its own words.)
    run_rm inspect "$T/$name.cut.zst"
    expect_eq "$name, cut in a skippable frame: exit 1" "$rc" 1
    [ "$name" == sf.tar ] || expect_message "$name, cut in a skippable frame: truncated" "truncated zstd stream"
    run_rm inspect "$T/$name.junk.zst"
    expect_eq "$name, bytes after the last frame: exit 1" "$rc" 1
    [ "$name" == sf.tar ] || expect_message "$name, bytes after the last frame: corrupt" "corrupt zstd data"
done
run_rm convert -q "$T/people.bson.lead.zst" "$T/people2.bson"
check "people.bson, frames lead: converts byte for byte" cmp -s "$T/people2.bson" "$T/people.bson"
