#!/usr/bin/env bash
# Depth: no step writes a document nesting deeper than MongoDB stores (100
# levels), the refusal names the step, the namespace and the _id, exits
# non-zero and leaves nothing at the destination; and nothing crashes on a
# deep value: 500 set steps of a 32-part path once wrote a document 16,000
# levels deep with exit 0, and an error message about such a value
# overflowed the stack (SIGSEGV) in run and check --against.
#   REMODEL=build/remodel bash tests/cli/test_depth.sh
. "$(dirname "$0")/lib.sh"

W=$T/w
D=$T/deep.py
cat >"$D" <<'EOF'
import json, os, struct, sys


def deep(levels, key=b"a", last=1, _id=1):
    """{_id: _id, a: {a: ... {a: last}}}, its innermost field at level
    `levels` (MongoDB's count: a top-level field is at level 1)."""
    inner = b"\x10" + key + b"\x00" + struct.pack("<i", last)
    n, lens = len(inner), []
    for _ in range(levels - 1):
        n = 4 + n + 1
        lens.append(n)
        n = 1 + len(key) + 1 + n
    body = b"".join(b"\x03" + key + b"\x00" + struct.pack("<i", m) for m in reversed(lens))
    top = b"\x10_id\x00" + struct.pack("<i", _id) + body + inner + b"\x00" * len(lens)
    return struct.pack("<i", 4 + len(top) + 1) + top + b"\x00"


cmd = sys.argv[1]
if cmd == "dump":  # dump DIR NS LEVELS [_id...]
    d, ns, levels = sys.argv[2], sys.argv[3], int(sys.argv[4])
    db, coll = ns.split(".", 1)
    os.makedirs(os.path.join(d, db), exist_ok=True)
    ids = [int(x) for x in sys.argv[5:]] or [1]
    with open(os.path.join(d, db, coll + ".bson"), "ab") as f:
        for i in ids:
            f.write(deep(levels, _id=i))
elif cmd == "plan":  # plan FILE STEPS [EXTRA-STEP-JSON]: STEPS sets of a 32-part path
    path = ".".join(["a"] * 32)
    steps = [{"set": {"in": "t.c", "fields": {path: "$a"}}} for _ in range(int(sys.argv[3]))]
    if len(sys.argv) > 4:
        steps.append(json.loads(sys.argv[4]))
    json.dump({"remodel": 1, "steps": steps}, open(sys.argv[2], "w"))
elif cmd == "depth":  # depth FILE: the nesting of each document, by pymongo's decoder
    import bson
    data = open(sys.argv[2], "rb").read()

    def depth(v):
        if isinstance(v, dict):
            return max([1 + depth(x) for x in v.values()] or [0]) if v else 0
        if isinstance(v, list):
            return max([1 + depth(x) for x in v] or [0]) if v else 0
        return 0
    sys.setrecursionlimit(10000)
    print(" ".join(str(depth(d)) for d in bson.decode_all(data)))
EOF

# expect_refused NAME STRING...: a clean failure (1..125, not a signal)
# with one "remodel: error: " line holding every STRING, and nothing in $W.
expect_refused() {
    local n=$1 s missing=""; shift
    if [ "$rc" -ge 1 ] && [ "$rc" -le 125 ]; then pass "$n-status"
    else fail "$n-status" "exit status $rc (want 1..125): $(head -c 400 "$T/err")"; fi
    if [ "$(grep -c '^remodel: error: ' "$T/err")" -eq 1 ]; then pass "$n-one-error"
    else fail "$n-one-error" "stderr: $(head -c 600 "$T/err")"; fi
    for s in "$@"; do grep -qF -- "$s" "$T/err" || missing="$missing [$s]"; done
    if [ -z "$missing" ]; then pass "$n-message"
    else fail "$n-message" "missing$missing in: $(head -c 600 "$T/err")"; fi
    if [ -z "$(ls -A "$W" 2>/dev/null)" ]; then pass "$n-nothing-written"
    else fail "$n-nothing-written" "left: $(ls -A "$W")"; fi
    rm -rf "$W" && mkdir "$W" # the next case starts from nothing
}

# The source: t.c holds {_id: 1, a: 1}.
python3 "$D" dump "$T/src" t.c 1
mkdir -p "$W"

# 1. 500 set steps of a 32-part path: step 1 nests 32 levels, each next
# one 31 more; step 4 passes 100 (125).
python3 "$D" plan "$T/p500.json" 500
run_rm run --quiet "$T/p500.json" --from "$T/src" --to "$W/out"
expect_refused deep-set "p500.json: step 4 (set): t.c: document { \"_id\" : 1 }: would nest 125 levels deep" \
    "MongoDB stores at most 100 levels of nesting"
# and in an archive, through the other writer
run_rm run --quiet "$T/p500.json" --from "$T/src" --to "$W/out.archive"
expect_refused deep-set-archive "step 4 (set)" "would nest 125 levels deep"

# 3 steps: 94 levels, written, and read back as deep by pymongo.
python3 "$D" plan "$T/p3.json" 3
run_rm run --quiet "$T/p3.json" --from "$T/src" --to "$T/out3"
expect_eq three-steps-written "$rc $(python3 "$D" depth "$T/out3/t/c.bson")" "0 94"

# 2. An error about the deep value after them: the refusal comes first
# (today's code crashed rendering the value).
python3 "$D" plan "$T/perr.json" 500 '{"set": {"in": "t.c", "fields": {"x": {"$toDate": "$a"}}}}'
run_rm run --quiet "$T/perr.json" --from "$T/src" --to "$W/out"
expect_refused deep-then-error "step 4 (set)" "would nest 125 levels deep"

# 3. check --against evaluates every document: the same, said, no crash.
run_rm check "$T/perr.json" --against "$T/src"
if [ "$rc" -ge 1 ] && [ "$rc" -le 125 ]; then pass check-against-status
else fail check-against-status "exit status $rc: $(head -c 400 "$T/err")"; fi
expect_message check-against-message "step 4 (set): t.c: document { \"_id\" : 1 }: would nest 125 levels deep"

# 4. A document that came in deeper than 100 (a server holds up to its own
# bound, 180 by default) goes through a step that does not deepen it...
python3 "$D" dump "$T/src150" t.c 150
echo '{"remodel": 1, "steps": [{"set": {"in": "t.c", "fields": {"v": 2}}}]}' >"$T/pv.json"
run_rm run --quiet "$T/pv.json" --from "$T/src150" --to "$T/out150"
expect_eq came-deep-passes "$rc $(python3 "$D" depth "$T/out150/t/c.bson")" "0 150"
# ...and not through one that does.
echo '{"remodel": 1, "steps": [{"set": {"in": "t.c", "fields": {"b.c": "$a"}}}]}' >"$T/pb.json"
run_rm run --quiet "$T/pb.json" --from "$T/src150" --to "$W/out"
expect_refused came-deep-deeper "step 1 (set): t.c: document { \"_id\" : 1 }: would nest 151 levels deep"

# 5. embed: a child 99 levels deep sits 101 levels deep in its parent (the
# array and its element add one each); a child of 98 fits.
python3 "$D" dump "$T/emb" crm.tasks 99 10
python3 -c '
import bson, sys
open(sys.argv[1] + "/crm/people.bson", "wb").write(bson.encode({"_id": 1}))
' "$T/emb"
# the child references its parent by a top-level owner field, added by a set
cat >"$T/pe.json" <<'EOF'
{"remodel": 1, "steps": [
  {"set": {"in": "crm.tasks", "fields": {"owner": 1}}},
  {"embed": {"from": "crm.tasks", "into": "crm.people", "localField": "_id",
             "foreignField": "owner", "as": "tasks"}}]}
EOF
run_rm run --quiet "$T/pe.json" --from "$T/emb" --to "$W/out"
expect_refused embed-deep "step 2 (embed): crm.people: parent { \"_id\" : 1 }: would nest 101 levels deep"
rm -rf "$T/emb"
python3 "$D" dump "$T/emb" crm.tasks 98 10
python3 -c '
import bson, sys
open(sys.argv[1] + "/crm/people.bson", "wb").write(bson.encode({"_id": 1}))
' "$T/emb"
run_rm run --quiet "$T/pe.json" --from "$T/emb" --to "$T/out-emb"
expect_eq embed-fits "$rc $(python3 "$D" depth "$T/out-emb/crm/people.bson")" "0 100"

# 5b. summarize: $addToSet of a child's a (a document 99 levels deep when the
# child's innermost field is at 100) sits 101 levels deep in its parent
# (the field and the array's element add one each); one level less fits.
cat >"$T/ps.json" <<'EOF'
{"remodel": 1, "steps": [
  {"set": {"in": "crm.tasks", "fields": {"owner": 1}}},
  {"summarize": {"into": "crm.people", "from": "crm.tasks", "localField": "_id",
                 "foreignField": "owner", "fields": {"all": {"$addToSet": "$a"}}}}]}
EOF
for lv in 100 99; do
    rm -rf "$T/sum"
    python3 "$D" dump "$T/sum" crm.tasks "$lv" 10
    python3 -c '
import bson, sys
open(sys.argv[1] + "/crm/people.bson", "wb").write(bson.encode({"_id": 1}))
' "$T/sum"
    if [ "$lv" = 100 ]; then
        run_rm run --quiet "$T/ps.json" --from "$T/sum" --to "$W/out"
        expect_refused summarize-deep "step 2 (summarize): crm.people: parent { \"_id\" : 1 }: would nest 101 levels deep"
    else
        run_rm run --quiet "$T/ps.json" --from "$T/sum" --to "$T/out-sum"
        expect_eq summarize-fits "$rc $(python3 "$D" depth "$T/out-sum/crm/people.bson")" "0 100"
    fi
done

# 6. denormalize: a copied value nests where it goes: into the elements of
# an array of references, two levels down (a's value is 99 levels deep).
rm -rf "$T/den"
python3 "$D" dump "$T/den" t.hosts 100 7
python3 -c '
import bson, sys
open(sys.argv[1] + "/t/c.bson", "wb").write(bson.encode({"_id": 1, "parts": [7]}))
' "$T/den"
echo '{"remodel": 1, "steps": [{"denormalize": {"in": "t.c", "from": "t.hosts", "localField": "parts", "fields": {"copy": "a"}}}]}' >"$T/pd.json"
run_rm run --quiet "$T/pd.json" --from "$T/den" --to "$W/out"
expect_refused denormalize-deep "step 1 (denormalize): t.c: document { \"_id\" : 1 }: would nest 102 levels deep"

# 7. A file of one document 100,000 levels deep: every command that reads
# it refuses it at the reader's bound, cleanly (no signal).
python3 "$D" dump "$T/d100k" t.c 100000
echo '{"remodel": 1, "steps": [{"set": {"in": "t.c", "fields": {"v": 1}}}]}' >"$T/p1.json"
for c in inspect show diff run check; do
    case $c in
        inspect | show) run_rm $c "$T/d100k" ;;
        diff) run_rm diff "$T/d100k" "$T/src" ;;
        run) run_rm run --quiet "$T/p1.json" --from "$T/d100k" --to "$W/out" ;;
        check) run_rm check "$T/p1.json" --against "$T/d100k" ;;
    esac
    if [ "$rc" -ge 1 ] && [ "$rc" -le 125 ]; then pass "100k-$c-status"
    else fail "100k-$c-status" "exit status $rc: $(head -c 300 "$T/err")"; fi
    expect_message "100k-$c-message" "t.c: document 1 at byte 0: nesting deeper than 500 levels"
done
if [ -z "$(ls -A "$W")" ]; then pass 100k-nothing-written; else fail 100k-nothing-written "$(ls -A "$W")"; fi
