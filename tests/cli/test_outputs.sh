#!/usr/bin/env bash
# What the commands write besides the destination, and how they say things:
# side outputs (--stats-json, --skip-invalid=FILE) that would overwrite an
# input or another output are refused before anything is written; bytes
# from a crafted dump reach the terminal escaped, one line per error;
# write errors on standard output are reported (a closed pipe ends
# quietly); sizes and counts in options are checked.
#   REMODEL=build/remodel bash tests/cli/test_outputs.sh
. "$(dirname "$0")/lib.sh"

PLAN=$ROOT/dumps/plans/embed-tasks.json
W=$T/w
mkdir -p "$W"
cp "$ROOT/dumps/sample/crm/tasks.bson" "$W/t.bson"
cp -r "$ROOT/dumps/sample" "$W/d"
cp "$PLAN" "$W/plan.json"
ln -s t.bson "$W/link.bson"
fingerprint() { (cd "$W" && find . -type f -o -type l | sort | xargs md5sum 2>/dev/null | md5sum); }

# refused NAME WHAT ARGS...: exit 2, one error line holding WHAT and
# "nothing written", and not a byte changed or added under $W.
refused() {
    local n=$1 what=$2 before; shift 2
    before=$(fingerprint)
    (cd "$W" && "$REMODEL" "$@" >"$T/out" 2>"$T/err"); rc=$?
    expect_eq "$n: exit status 2" "$rc" 2
    if [ "$(wc -l <"$T/err")" -eq 1 ] && grep -qF -- "$what" "$T/err" && grep -qF "nothing written" "$T/err"; then
        pass "$n: one line saying why"
    else
        fail "$n: one line saying why" "want [$what]: $(head -c 400 "$T/err")"
    fi
    expect_eq "$n: nothing created or changed" "$(fingerprint)" "$before"
}

# --- side outputs naming an input or another output --------------------------
refused "skip-invalid is the source" "is the same file as the source" convert t.bson out.bson --skip-invalid=t.bson
refused "skip-invalid is the source through a symlink" "is the same file as the source" convert t.bson out.bson --skip-invalid=link.bson
refused "skip-invalid is the source by another spelling" "is the same file as the source" inspect t.bson --skip-invalid=./d/../t.bson
refused "skip-invalid is the destination" "is the same file as --skip-invalid" convert t.bson out.bson --skip-invalid=out.bson
refused "destination is the source" "is the same file as the source" convert t.bson t.bson --force
refused "destination inside the source directory" "lies inside the directory read as the source" convert d d/x.archive
refused "destination directory holds the source" "is a directory that holds the source" convert d/crm/tasks.bson d --force
refused "stats-json inside the source directory" "lies inside the directory read as the source" \
    run plan.json --from d --to o.archive --stats-json d/crm/people.bson
refused "stats-json is the source file" "is the same file as the source" \
    run plan.json --from t.bson --to o.archive --stats-json t.bson
refused "stats-json is the destination" "is the same file as --stats-json" \
    run plan.json --from d --to o.archive --stats-json o.archive
refused "stats-json inside the destination directory" "lies inside the directory written as the destination" \
    run plan.json --from d --to odir --stats-json odir/s.json
refused "stats-json is the plan" "is the same file as the plan" \
    run plan.json --from d --to o.archive --stats-json plan.json
refused "stats-json is skip-invalid" "is the same file as --skip-invalid" \
    run plan.json --from d --dry-run --stats-json s.json --skip-invalid=s.json

# Allowed: side outputs elsewhere, and the stats file replaced whole.
(cd "$W" && "$REMODEL" run plan.json --from d --to o.archive -q --stats-json s.json); rc=$?
expect_eq "side outputs elsewhere: exit status 0" "$rc" 0
expect_eq "stats-json written as JSON" "$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["namespaces"]))' "$W/s.json")" 11
expect_eq "no temporary name left beside the stats" "$(ls -A "$W" | grep -c -- '\.remodel-')" 0

# --- bytes from the input are escaped in messages ----------------------------
# A namespace header whose field name holds a newline, and one holding an
# escape sequence (ESC [31m), both ten bytes like "collection".
"$REMODEL" convert -q "$W/t.bson" "$T/t.archive"
python3 - "$T/t.archive" "$T/nl.archive" "$T/esc.archive" <<'PY'
import re, sys
d = open(sys.argv[1], 'rb').read()
i = [m.start() for m in re.finditer(re.escape(b'\x02collection\x00'), d)][1]  # the first segment header
open(sys.argv[2], 'wb').write(d[:i] + b'\x02collect\non\x00' + d[i + 12:])
open(sys.argv[3], 'wb').write(d[:i] + b'\x02c\x1b[31mlion\x00' + d[i + 12:])
PY
for c in nl esc; do
    run_rm convert "$T/$c.archive" "$T/$c.out.archive"
    expect_eq "escaped $c: exit status 1" "$rc" 1
    expect_eq "escaped $c: one line" "$(wc -l <"$T/err")" 1
    expect_eq "escaped $c: no control byte reaches the terminal" \
        "$(LC_ALL=C tr -d '\n' <"$T/err" | LC_ALL=C grep -c '[[:cntrl:]]')" 0
done
run_rm convert "$T/nl.archive" "$T/x.archive"
expect_message "the newline shown as \\x0a" 'unexpected field "collect\x0aon"' "nl.archive"
run_rm convert "$T/esc.archive" "$T/x.archive"
expect_message "ESC shown as \\x1b" 'unexpected field "c\x1b[31mlion"'
run_rm inspect "$T/esc.archive"
expect_eq "inspect's table: no control byte either" \
    "$(LC_ALL=C tr -d '\n' <"$T/out" | LC_ALL=C grep -c '[[:cntrl:]]')" 0
# Valid UTF-8 stays as it is.
mkdir -p "$T/u/caf"; cp "$W/t.bson" "$T/u/caf/tâches.bson"
run_rm inspect "$T/u/caf/tâches.bson"
grep -qF "caf.tâches" "$T/out" && pass "UTF-8 name in the table" || fail "UTF-8 name in the table" "$(head -5 "$T/out")"

# --- write errors on standard output ----------------------------------------
for args in "inspect $W/t.bson" "inspect --json $W/t.bson" "check $PLAN" \
            "run $PLAN --from $W/d --dry-run"; do
    label=${args//$W\//}; label=${label//$ROOT\//}
    "$REMODEL" $args >/dev/full 2>"$T/err"; rc=$?
    expect_eq "full stdout ($label): exit status 1" "$rc" 1
    expect_message "full stdout ($label): says so" "standard output: write failed: No space left on device"
    "$REMODEL" $args >&- 2>"$T/err"; rc=$?
    expect_eq "closed stdout ($label): exit status 1" "$rc" 1
    expect_message "closed stdout ($label): says so" "standard output: write failed"
done
# A reader that has gone away: the pipe's read end is closed before remodel
# writes a byte, so the first write fails with EPIPE every time.
python3 - "$REMODEL" "$W/t.bson" "$PLAN" "$W/d" >"$T/pipe" <<'PY'
import os, subprocess, sys
rm, bson, plan, d = sys.argv[1:]
for args in (["inspect", bson], ["inspect", "--json", bson], ["run", plan, "--from", d, "--dry-run"]):
    r, w = os.pipe()
    os.close(r)
    p = subprocess.run([rm] + args, stdout=w, stderr=subprocess.PIPE)
    os.close(w)
    print(" ".join(os.path.basename(a) for a in args[:2]), p.returncode, p.stderr.count(b"error"))
PY
while read -r a b st errlen; do
    expect_eq "closed pipe ($a $b): exit 141, no error message" "$st $errlen" "141 0"
done <"$T/pipe"
expect_eq "closed pipe: three commands tried" "$(wc -l <"$T/pipe")" 3

# --- sizes and counts in options ---------------------------------------------
for m in -5M -1 0 0K 5x " 5M" 99999999999999999999 18014398509481984G 1023; do
    run_rm run "$PLAN" --from "$W/d" --dry-run -q --memory "$m"
    expect_eq "--memory $m refused (exit 2)" "$rc" 2
    expect_message "--memory $m: says why" "--memory: expected a size of at least 1K"
done
for m in 1K 64M 2G 1T; do
    run_rm run "$PLAN" --from "$W/d" --dry-run -q --memory "$m"
    expect_eq "--memory $m accepted" "$rc" 0
done
for n in 0 -1 2x 257 99999999999; do
    run_rm convert "$W/t.bson" "$T/th.bson" --threads "$n"
    expect_eq "--threads $n refused (exit 2)" "$rc:$(test -e "$T/th.bson" && echo written)" "2:"
done

# --- inspect's table stays aligned with non-ASCII names --------------------------
mkdir -p "$T/al/db1"
cp "$W/t.bson" "$T/al/db1/cafés.bson"; cp "$W/t.bson" "$T/al/db1/cafes.bson"; cp "$W/t.bson" "$T/al/db1/日本.bson"
"$REMODEL" inspect "$T/al" >"$T/al.out"
expect_eq "inspect: the TYPE column starts at one character position on every row" \
    "$(python3 -c '
import sys
rows = [l for l in open(sys.argv[1], encoding="utf-8") if "collection" in l or l.startswith("NAMESPACE")]
print(len(rows), sorted({l.index("collection") if "collection" in l else l.index("TYPE") for l in rows}))' "$T/al.out")" "4 [41]"

# --- --help names what the plan parser takes ---------------------------------------
ops=$("$REMODEL" run --help | tr ',;.' '   ' | awk '/operations/,/remodel-plan/' | tr ' ' '\n' |
      grep -E '^(embed|extract|denormalize|summarize|bucketize|unbucketize|set|unset|rename|version|copy|move|delete|rekey|[a-z]+ize)$' | sort -u)
parser=$(echo '{"remodel": 1, "steps": [{"frob": {}}]}' >"$T/frob.json"; "$REMODEL" check "$T/frob.json" 2>&1 |
         sed 's/.*unknown operation (//; s/)$//' | tr ',' '\n' | tr -d ' ' | sort -u)
expect_eq "run --help lists exactly the operations the parser knows" "$(echo $ops)" "$(echo $parser)"
expect_eq "check --help lists --against" "$("$REMODEL" check --help | grep -c -- '^  --against SRC ')" 1

# --- a reader that goes away mid-stream ------------------------------------------
"$REMODEL" show "$ROOT/dumps/sample" 2>"$T/err" | head -c 100 >/dev/null
expect_eq "show | head -c 100: exit 141, nothing on stderr" "${PIPESTATUS[0]}:$(wc -c <"$T/err")" "141:0"
"$REMODEL" inspect --json "$ROOT/dumps/sample" 2>"$T/err" | head -c 10 >/dev/null
st=${PIPESTATUS[0]}
# inspect's JSON may fit in the pipe before head exits: then 0; never an error.
case $st in 0|141) pass "inspect --json | head: quiet (exit $st)" ;; *) fail "inspect --json | head: quiet" "exit $st: $(cat "$T/err")" ;; esac
for args in "cat $ROOT/dumps/sample" "cat $ROOT/dumps/sample --compress zstd" "convert $ROOT/dumps/sample.archive.gz -"; do
    "$REMODEL" $args 2>"$T/err" | head -c 100 >/dev/null
    expect_eq "${args%% *} ... | head -c 100: exit 141, nothing on stderr" "${PIPESTATUS[0]}:$(wc -c <"$T/err")" "141:0"
done

# --- missing parent directories are made, as mongodump --out makes them -----------
mkdir "$T/mp"
run_rm convert -q "$ROOT/dumps/sample" "$T/mp/a/b/c/out.archive"
expect_eq "convert into a missing a/b/c/: exit 0, written" "$rc:$(test -f "$T/mp/a/b/c/out.archive" && echo yes)" "0:yes"
run_rm run "$PLAN" --from "$ROOT/dumps/sample" --to "$T/mp/o/p/" -q --stats-json "$T/mp/s/t.json"
expect_eq "run into missing o/p/ with stats in missing s/: both written" \
    "$rc:$(test -f "$T/mp/o/p/crm/people.bson" && test -f "$T/mp/s/t.json" && echo yes)" "0:yes"
run_rm convert -q "$MT/bsondump/testdata/partial_file.bson" "$T/mp/x/y/out.bson"
expect_eq "a failed convert leaves no directory it made" "$rc:$(ls "$T/mp" | tr '\n' ' ')" "1:a o s "
touch "$T/mp/f"
run_rm convert -q "$ROOT/dumps/sample" "$T/mp/f/x.archive"
expect_eq "a parent that is a file: exit 1" "$rc" 1
expect_message "a parent that is a file: says so" "is not a directory"
