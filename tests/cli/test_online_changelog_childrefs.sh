#!/usr/bin/env bash
# Following the change log for an extract with childRefs (issue 23; docs/
# online.md, "Results that name their driver"): the children name no
# parent, only the parent's array of their _ids does. On
# mongo-java-server (change streams) alone (online_kind: the logic is
# remodel's own; test_online_changelog follows both servers' logs;
# REMODEL_TEST_BOTH=1 runs this suite on FerretDB too),
# started with its log:
#   - posts' comments extracted with childRefs; comments added, removed,
#     changed, one moved to another post with its own _id, a post deleted,
#     inserted and replaced: sync follows the log (nothing rescanned, few
#     documents read), the results are remodel run's on a dump taken then,
#     byte for byte, and a second sync writes nothing;
#   - a post given an unchanged post's comment _id: refused ("two results
#     ... with one _id"), nothing of the batch written;
#   - a two-step plan whose second step (a denormalize of the posts'
#     references) reads the extracted comments: followed, not rescanned;
#   - a kill matrix: sync killed at each of its first rewrites and
#     removals (between the steps too), then sync again: every result
#     right, nothing lost or doubled;
#   - finalize --writes-stopped after writes: its verify is a sample for
#     the step, and the live collections are remodel run's.
#   REMODEL=build/remodel bash tests/cli/test_online_changelog_childrefs.sh
. "$(dirname "$0")/lib.sh"
use_peers "peers" || exit 0
[ -n "${REMODEL_TEST_URI:-}" ] && { pass "childrefs: external deployments are not started here (skipped)"; exit 0; }
ONLINE=$(dirname "$REMODEL")/remodel-online
KILLAT=$ROOT/tests/peers/killat.sh
trap '[ "$BASHPID" != "$$" ] || { kill $(jobs -p) 2>/dev/null; for d in "$T"/srv-*; do "$SERVER" stop "$d" >/dev/null 2>&1; done; rm -rf "$T"; }' EXIT
mkdir -p "$T/plans"
cat >"$T/plans/refs.json" <<'EOF'
{"remodel": 1, "steps": [
  {"extract": {"from": "blog.posts", "path": "comments", "to": "blog.comments",
               "style": "childRefs", "ordinalField": "n"}}]}
EOF
# The same on blogc, then each post's references given their comment's
# author and text again (an array of references: [{id, by, text}]).
cat >"$T/plans/chain.json" <<'EOF'
{"remodel": 1, "steps": [
  {"extract": {"from": "blogc.posts", "path": "comments", "to": "blogc.comments",
               "style": "childRefs"}},
  {"denormalize": {"in": "blogc.posts", "from": "blogc.comments", "localField": "comments",
                   "fields": ["by", "text"]}}]}
EOF

# make_blog DB: 60 posts with 0 to 5 comments, every other one with an _id
# of its own (the others get one derived from the post and position).
make_blog() {
    py '
random.seed(5)
b = c[sys.argv[2]]
def comment(p, i):
    d = {"by": "u%d" % random.randrange(9), "text": "comment %d of %d" % (i, p)}
    return dict({"_id": "c-%d-%d" % (p, i)}, **d) if i % 2 else d
b.posts.insert_many([{"_id": p, "title": "post %d" % p,
                      "comments": [comment(p, i) for i in range(random.randrange(6))]}
                     for p in range(60)])' "$1"
}

# writes DB SEED: a comment added, one removed and one changed (arrays set
# whole: FerretDB 1.x $pull with a condition leaves subdocuments), one
# moved to another post with its own _id, a post deleted, inserted and
# replaced.
writes() {
    py '
random.seed(int(sys.argv[3]))
n = int(sys.argv[3])
p = c[sys.argv[2]].posts
def comments(i): return p.find_one({"_id": i})["comments"]
pids = sorted(d["_id"] for d in p.find({"_id": {"$lt": 1000}}, {"_id": 1}))
full = [i for i in pids if len(comments(i)) >= 2]
a, b, d = random.sample(full, 3)
e, g, h = random.sample([i for i in pids if i not in (a, b, d)], 3)
p.update_one({"_id": a}, {"$push": {"comments": {"by": "w", "text": "added %d" % n}}})
cs = comments(b); del cs[-1]; p.update_one({"_id": b}, {"$set": {"comments": cs}})
cs = comments(d); cs[0]["text"] = "changed %d" % n; p.update_one({"_id": d}, {"$set": {"comments": cs}})
own = [x for x in comments(a) if "_id" in x]
moved = own[0] if own else {"_id": "m-%d" % n, "by": "w", "text": "moved"}
p.update_one({"_id": a}, {"$set": {"comments": [x for x in comments(a) if x.get("_id") != moved["_id"]]}})
p.update_one({"_id": e}, {"$push": {"comments": moved}})
p.delete_one({"_id": g})
p.insert_one({"_id": 1000 + n, "title": "new", "comments": [{"by": "w", "text": "first"},
                                                           {"_id": "n-%d" % n, "by": "w"}]})
doc = p.find_one({"_id": h}); doc["title"] = "replaced %d" % n; doc["comments"] = doc["comments"][::-1]
p.replace_one({"_id": h}, doc)' "$@"
}

# same NAME PLAN DB: the sources dumped now, remodel run's result of PLAN,
# and the side-by-side results compared with it.
same() {
    local k last
    k=$(pid "$2") last=1
    [ "$2" == chain ] && last=2
    rm -f "$T/src.archive" "$T/out.archive"
    "$MONGODUMP" --uri "$uri" --db "$3" --archive="$T/src.archive" --quiet &&
        "$REMODEL" run -q "$T/plans/$2.json" --from "$T/src.archive" --to "$T/out.archive" ||
        fail "$1: offline reference"
    online_same "$1" "$T/out.archive" "$3.comments=comments_remodel_${k}_1" \
        "$3.posts=posts_remodel_${k}_$last"
}
verified() {
    online verify "$2"
    expect_eq "$1" "$rc:$(grep -c 'every result as the sources make it' "$T/err")" "0:1"
}
# targets PLAN DB: a digest of the side-by-side results as they are.
targets() {
    py '
import hashlib, bson
h = hashlib.sha1()
for coll in sorted(n for n in c[sys.argv[3]].list_collection_names() if sys.argv[2] in n):
    for d in c[sys.argv[3]][coll].find().sort("_id", 1):
        h.update(coll.encode() + bson.encode(d))
print(h.hexdigest())' "$(pid "$1")" "$2"
}

# sync_matrix PLAN DB FUNC K...: for each K, writes, then sync (a chunk of
# two drivers at a time) killed at its K-th call of FUNC, then sync again:
# every result right. Prints the kills last.
sync_matrix() {
    local plan=$1 db=$2 fn=$3 k krc kills=0; shift 3
    for k in "$@"; do
        writes "$db" $((40 + k))
        "$KILLAT" -q "$fn" "$k" -- "$ONLINE" sync "$T/plans/$plan.json" --uri "$uri" --batch-size 2 \
            >/dev/null 2>"$T/kerr"
        krc=$?
        [ $krc == 137 ] && kills=$((kills + 1))
        [ $krc == 137 ] || [ $krc == 3 ] || fail "$kind: $plan: sync killed at $fn #$k" "killat exit $krc: $(tail -n 3 "$T/kerr")"
        online sync "$plan"
        expect_eq "$kind: $plan: sync killed at $fn #$k ($krc), then again: nothing rescanned" \
            "$rc:$(grep -c 'rescanned in full' "$T/err")" "0:0"
        verified "$kind: $plan: ... every result right" "$plan"
    done
    echo "$kills"
}

for kind in $(online_kind java); do
    online_start "$kind" "$T/srv-$kind" 0 changelog || continue
    make_blog blog
    make_blog blogc
    online run refs --batch-size 20 -q
    expect_eq "$kind: refs: the extract with childRefs runs" "$rc:$(cat "$T/err")" "0:"
    online run chain --batch-size 20 -q
    expect_eq "$kind: chain: extract and denormalize run" "$rc:$(cat "$T/err")" "0:"
    total=$(py 'print(c.blog.posts.count_documents({}) + sum(len(d["comments"]) for d in c.blog.posts.find()))')

    # ---- sync from the log ----
    writes blog 1
    online sync refs
    rd=$(figure read)
    expect_eq "$kind: refs: sync follows the log, nothing rescanned (exit 0, 8 writes)" \
        "$rc:$(grep -c 'rescanned in full' "$T/err"):$(events)" "0:0:8"
    # The changed posts themselves (and nothing of the comments).
    if [ -n "$rd" ] && [ "$rd" -gt 0 ] && [ "$rd" -le 10 ]; then pass "$kind: refs: sync read $rd documents, not the $total"
    else fail "$kind: refs: sync read few documents (at most 10 of $total)" "$(cat "$T/err")"; fi
    rw=$(figure results) rm=$(figure removed)
    expect_eq "$kind: refs: ... rewrote results and removed comments" \
        "$([ "${rw:-0}" -gt 0 ] && echo rewrote):$([ "${rm:-0}" -gt 0 ] && echo removed)" "rewrote:removed"
    same "$kind: refs: the posts and comments are remodel run's on a dump taken then" refs blog
    verified "$kind: refs: verify finds every result right" refs
    online sync refs
    expect_eq "$kind: refs: a second sync writes nothing" "$rc:$(events):$(figure results):$(figure removed)" "0:0:0:0"
    writes blog 2
    writes blog 3
    online sync refs
    expect_eq "$kind: refs: two more rounds of writes, synced from the log" \
        "$rc:$(grep -c 'rescanned in full' "$T/err")" "0:0"
    same "$kind: refs: ... remodel run's again" refs blog

    # ---- a post given an unchanged post's comment _id: refused ----
    owner=$(py 'd = c.blog.posts.find_one({"comments._id": {"$regex": "^c-"}, "_id": {"$lt": 1000}})
print(d["_id"], [x["_id"] for x in d["comments"] if "_id" in x][0])')
    before=$(targets refs blog)
    py 'c.blog.posts.update_one({"_id": 1001}, {"$push": {"comments": {"_id": sys.argv[2], "text": "dup"}}})
c.blog.posts.update_one({"_id": 1002}, {"$set": {"title": "also changed"}})' "${owner#* }"
    online sync refs
    expect_eq "$kind: refs: a changed post's comment with an unchanged post's comment _id is refused (exit 1, naming both)" \
        "$rc:$(grep -c "two results for blog.comments with one _id ({ \"_id\" : \"${owner#* }\", .* and { \"_id\" : \"${owner#* }\", \"text\" : \"dup\", .*stopping before either overwrites the other" "$T/err")" "1:1"
    expect_eq "$kind: refs: ... nothing of the batch written" "$(targets refs blog)" "$before"
    py 'p = c.blog.posts
p.update_one({"_id": 1001}, {"$set": {"comments": [x for x in p.find_one({"_id": 1001})["comments"]
                                                   if x.get("text") != "dup"]}})'
    online sync refs
    expect_eq "$kind: refs: ... once the post is put right, sync completes" "$rc" "0"
    same "$kind: refs: ... remodel run's" refs blog

    # ---- two steps: the comments read by a denormalize ----
    writes blogc 1
    online sync chain
    rd=$(figure read)
    expect_eq "$kind: chain: sync follows the log, neither step rescanned (exit 0)" \
        "$rc:$(grep -c 'rescanned in full' "$T/err")" "0:0"
    if [ -n "$rd" ] && [ "$rd" -gt 0 ] && [ "$rd" -le 40 ]; then pass "$kind: chain: sync read $rd documents, not the 2 x $total"
    else fail "$kind: chain: sync read few documents (at most 40)" "$(cat "$T/err")"; fi
    same "$kind: chain: the posts' references and the comments are remodel run's" chain blogc
    online sync chain
    expect_eq "$kind: chain: a second sync writes nothing" "$rc:$(events):$(figure results):$(figure removed)" "0:0:0:0"

    # ---- kill matrices ----
    sync_matrix refs blog online_side_rewrite 1 2 3 4 >"$T/kills"
    grep -v '^[0-9]*$' "$T/kills"
    expect_eq "$kind: refs: the sync matrix killed at 4 rewrites" "$(tail -n 1 "$T/kills")" "4"
    sync_matrix refs blog online_writes_flush 1 2 3 >"$T/kills"
    grep -v '^[0-9]*$' "$T/kills"
    expect_eq "$kind: refs: the sync matrix killed at 3 flushes (removals among them)" "$(tail -n 1 "$T/kills")" "3"
    same "$kind: refs: after the sync matrices, remodel run's" refs blog
    sync_matrix chain blogc online_side_rewrite 1 2 3 4 5 6 >"$T/kills"
    grep -v '^[0-9]*$' "$T/kills"
    expect_eq "$kind: chain: the sync matrix killed at 6 rewrites (of both steps)" "$(tail -n 1 "$T/kills")" "6"
    same "$kind: chain: after the sync matrix, remodel run's" chain blogc

    # ---- finalize: drained, verified by a sample, switched ----
    writes blog 60
    rm -f "$T/src.archive" "$T/fin.archive"
    "$MONGODUMP" --uri "$uri" --db blog --archive="$T/src.archive" --quiet &&
        "$REMODEL" run -q "$T/plans/refs.json" --from "$T/src.archive" --to "$T/fin.archive" ||
        fail "$kind: finalize: offline reference"
    online finalize refs --writes-stopped --sample 10
    expect_eq "$kind: refs: finalize drains the log and verifies a sample of the step, not all of it (exit 0)" \
        "$rc:$(grep -c 'drained the change log and verified' "$T/err"):$(grep -c 'step 1 (extract): 10 documents verified (.*), 0 differ' "$T/err")" "0:1:1"
    [ "$rc" == 0 ] || cat "$T/err" >&2
    online_same "$kind: refs finalized: the live posts and comments are remodel run's" "$T/fin.archive" \
        blog.posts=posts blog.comments=comments
    "$SERVER" stop "$T/srv-$kind" >/dev/null 2>&1
done
