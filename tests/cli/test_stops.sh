#!/usr/bin/env bash
# Hard stops and cut inputs: SIGTERM and SIGINT stop every output format
# (while reading, and while a tar is compressed at the end) with exit 130
# and no output left; after SIGKILL the next run removes what the killed one
# left (and only that); a tar cut anywhere, even between members, is
# truncated; the 16 MiB document limit holds on every input; pzstd's
# multi-frame zstd is read.
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

# stopped NAME SIGNAL ARGS...: started in the background, signalled once its
# temporary output exists (plus a moment), it ends within 10 s with 130 and
# leaves nothing in $W.
# With --feed first, the command's standard input is the trickling feeder.
stopped() {
    local n=$1 sig=$2 pid i gone="" feeder=""; shift 2
    rm -rf "$W"; mkdir "$W"
    if [ "$1" == --feed ]; then
        shift
        rm -f "$T/fifo"; mkfifo "$T/fifo"
        python3 "$T/feed.py" "$T/big.archive" >"$T/fifo" &
        feeder=$!
        "$@" <"$T/fifo" 2>"$T/err" &
    else
        "$@" 2>"$T/err" &
    fi
    pid=$!
    for i in $(seq 1 200); do
        ls -A "$W" | grep -q 'remodel-' && break
        sleep 0.05
    done
    sleep 0.3
    kill -"$sig" "$pid" 2>/dev/null
    for i in $(seq 1 200); do
        kill -0 "$pid" 2>/dev/null || { gone=1; break; }
        sleep 0.05
    done
    [ -z "$gone" ] && kill -KILL "$pid" 2>/dev/null
    wait "$pid"; rc=$?
    [ -n "$feeder" ] && { kill "$feeder" 2>/dev/null; wait "$feeder" 2>/dev/null; }
    expect_eq "$n: ends within 10 s of SIG$sig" "$gone" 1
    expect_eq "$n: exit 130" "$rc" 130
    expect_eq "$n: nothing left" "$(ls -A "$W")" ""
}
for out in o.archive o.archive.gz o.archive.zst odir odir-gz o.tar o.tar.gz o.tar.zst o.bson o.bson.gz; do
    args=("$W/$out")
    [ "$out" == odir-gz ] && args=("$W/$out" --compress gzip)
    stopped "reading, writing $out (TERM)" TERM --feed "$REMODEL" convert -q - "${args[@]}"
done
stopped "reading, writing o.tar.gz (INT)" INT --feed "$REMODEL" convert -q - "$W/o.tar.gz"
# A tar is compressed at the end, from its staged files: stop it there
# (documents of random text, which compress slowly at the top levels).
python3 - "$T/rnd/db" <<'PY'
import bson, os, sys
os.makedirs(sys.argv[1], exist_ok=True)
with open(sys.argv[1] + "/r.bson", "wb") as f:
    for i in range(20000):
        f.write(bson.encode({"_id": i, "t": os.urandom(1500).hex()}))
PY
"$REMODEL" convert -q "$T/rnd" "$T/rnd.archive"
for out in o.tar.gz o.tar.zst; do
    codec=gzip:9; [ "$out" == o.tar.zst ] && codec=zstd:19
    stopped "compressing $out at the end (TERM)" TERM "$REMODEL" convert -q "$T/rnd.archive" "$W/$out" --compress "$codec" \
        --threads 1
done
echo '{"remodel": 1, "steps": [{"set": {"in": "db.c", "fields": {"x": 1}}}]}' >"$T/set.json"
stopped "run --to o.tar.gz (TERM)" TERM "$REMODEL" run -q "$T/set.json" --from "$T/big.archive" --to "$W/o.tar.gz" --tmp "$W"

# --- after SIGKILL, the next run sweeps -------------------------------------------
rm -rf "$W"; mkdir -p "$W/tmp"
rm -f "$T/fifo"; mkfifo "$T/fifo"
python3 "$T/feed.py" "$T/big.archive" >"$T/fifo" &
feeder=$!
"$REMODEL" run -q "$T/set.json" --from - --to "$W/o.archive" --tmp "$W/tmp" --batch <"$T/fifo" &
pid=$!
for i in $(seq 1 200); do ls -A "$W/tmp" | grep -q remodel- && break; sleep 0.05; done
sleep 0.2
kill -KILL "$pid"; wait "$pid" 2>/dev/null
kill "$feeder" 2>/dev/null; wait "$feeder" 2>/dev/null
left=$( (ls -A "$W"; ls -A "$W/tmp") | grep -c "remodel-$pid-")
[ "$left" -ge 2 ] && pass "SIGKILL leaves its temporary files ($left)" || fail "SIGKILL leaves its temporary files" "$(ls -A "$W" "$W/tmp")"
# A name whose PID is alive (this shell's) is not another run's leftover.
touch "$W/.keep.remodel-$$-0" "$W/tmp/.remodel-store.remodel-$$-7"
"$REMODEL" run "$T/set.json" --from "$ROOT/dumps/sample" --to "$W/o2.archive" --tmp "$W/tmp" --nsInclude 'crm.*' 2>"$T/err" >/dev/null
expect_eq "the next run: its own error (the plan's namespace is excluded)" "$(grep -c 'db.c is not in the input' "$T/err")" 1
expect_eq "the next run: the killed run's files are gone" "$( (ls -A "$W"; ls -A "$W/tmp") | grep -c "remodel-$pid-")" 0
expect_eq "the next run: says so, for both places" "$(grep -c 'temporary file(s) left in .* by remodel runs that were killed' "$T/err")" 2
expect_eq "a live PID's files stay" "$(ls -A "$W" "$W/tmp" | grep -c "remodel-$$-")" 2
"$REMODEL" convert -q "$ROOT/dumps/sample" "$W/o3.archive" 2>"$T/err"
expect_eq "--quiet: no note" "$(wc -c <"$T/err")" 0

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
