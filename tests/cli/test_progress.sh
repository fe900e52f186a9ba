# Progress on a terminal: a slow source read through a pseudo-terminal
# (script(1)) shows bytes, documents, docs/s and MB/s; --quiet and a
# non-terminal show nothing.
. "$(dirname "$0")/lib.sh"
command -v script >/dev/null || { fail "script(1) is needed (bsdutils)"; exit 0; }

"$REMODEL" convert -q "$ROOT/dumps/sample/iot/readings.bson" "$T/r.bson"
# A feeder that trickles 16 copies of the readings (~2.2 MB, 25,600
# documents) in 32 KiB pieces over about two seconds.
cat >"$T/feed.py" <<'PY'
import sys, time
data = open(sys.argv[1], 'rb').read() * 16
for i in range(0, len(data), 32768):
    sys.stdout.buffer.write(data[i:i+32768]); sys.stdout.buffer.flush(); time.sleep(0.03)
PY
script -qec "python3 $T/feed.py $T/r.bson | $REMODEL convert - $T/out.bson" /dev/null >"$T/tty" 2>&1
grep -a -q "docs/s" "$T/tty" && grep -a -q "MB/s\|KB/s" "$T/tty"
expect_eq "progress meter on a terminal" "$?" 0
expect_eq "the summary counts every document" "$(grep -a -c 'wrote .*25600 document' "$T/tty")" 1
script -qec "python3 $T/feed.py $T/r.bson | $REMODEL convert --quiet - $T/out2.bson" /dev/null >"$T/tty2" 2>&1
expect_eq "--quiet prints nothing" "$(wc -c <"$T/tty2")" 0
python3 "$T/feed.py" "$T/r.bson" | "$REMODEL" convert - "$T/out3.bson" 2>"$T/err3"
expect_eq "no meter when stderr is not a terminal" "$(grep -c 'docs/s' "$T/err3")" 0
# With a known size the meter shows a percentage and an ETA. The meter
# draws at most 4 times a second, so the copy must last well over 0.25 s on
# any machine: 41 MB through one gzip -9 thread takes seconds.
python3 -c 'import sys; open(sys.argv[2], "wb").write(open(sys.argv[1], "rb").read() * 300)' "$T/r.bson" "$T/big.bson"
script -qec "$REMODEL convert --compress gzip:9 --threads 1 $T/big.bson $T/big.bson.gz" /dev/null >"$T/tty4" 2>&1
if grep -a -q "ETA" "$T/tty4"; then pass "ETA when the size is known"
else fail "ETA when the size is known" "$(tr '\r' '\n' <"$T/tty4" | tail -3)"; fi

# make install puts the command, library and headers under PREFIX.
if [ -z "${REMODEL_SANITIZE:-}" ]; then
    make -s -C "$ROOT" install PREFIX="$T/prefix" >/dev/null 2>&1
    check "make install: command" test -x "$T/prefix/bin/remodel"
    check "make install: library and headers" test -f "$T/prefix/lib/libremodel.a" -a -f "$T/prefix/include/remodel/dump.h"
    expect_eq "installed command runs" "$("$T/prefix/bin/remodel" --version)" "remodel 0.1.0"
fi
