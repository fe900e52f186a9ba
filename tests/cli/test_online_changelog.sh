#!/usr/bin/env bash
# Following the change log (issue 23; docs/online.md, "Change capture"): on
# FerretDB (oplog) and mongo-java-server (change streams), each started with
# its change log:
#   - sync after a few writes reads what they affect, not the collections
#     (its "change log:" line: events, documents read), and the results are
#     then remodel run's on a dump of the sources, byte for byte: a child
#     moved between parents (both parents change), a child deleted and
#     inserted, a parent's field, a parent's key changed (its children
#     re-homed), a chained plan (step 2 reads step 1's results);
#   - the same for the steps whose results name their driver in a field
#     (an extract's children by parentField, an outlier embed's overflow
#     pages by parent_id), and a summary of the extracted children after
#     them: nothing rescanned in full; a changed document's child taking
#     the _id of an unchanged one's is refused, naming it;
#   - in place (a denormalize, then a summarize of the orders it rewrote,
#     on shopx): sync from the log, not rescanned, reading few documents;
#     the documents then remodel run's on a dump taken then; remodel's own
#     writes read back by the next sync, which rewrites nothing; the
#     journal names step 1's rewrites when killed between the steps; an
#     application write between the sync's read and write kept; a
#     kill matrix over the backups' and documents' flushes; follow; then
#     rollback restores every document the application did not write, and
#     only remodel's fields of those it did;
#   - follow keeps the results current while a writer writes, status shows
#     its rounds and lag, a signal stops it after its round (exit 0);
#   - kill -9 during follow, then sync: nothing lost or applied twice;
#   - a kill matrix over sync: killed at each rewrite of results (between
#     two steps too: the step after must still learn what the first one
#     rewrote), then sync again: every result right;
#   - a kill matrix over finalize's drain (killed at the first writes of
#     results, of the key map, of the point), then finalize again: it
#     completes, and the live collections are remodel run's;
#   - a sample verified ahead: follow verifies one after its first round,
#     verify --sample one that is recorded only when nothing differs (not
#     after writes not yet synced), and status says which;
#   - finalize with the log: drains, verifies a sample (none when one was
#     verified ahead, unless --sample), switches, and confirms from the
#     log; a write that slips in before the switch is caught from the log
#     (exit 1, naming the count);
#   - lost history during follow (FerretDB, a 1 MiB oplog flooded): named,
#     and everything rescanned;
#   - a server without a change log: follow refuses, naming why.
#   REMODEL=build/remodel bash tests/cli/test_online_changelog.sh
. "$(dirname "$0")/lib.sh"
# REMODEL_ONLINE_PAUSE_BEFORE_SWITCH_MS is a hook of the tests' build only.
use_faulty || exit 1
use_peers "peers" || exit 0
[ -n "${REMODEL_TEST_URI:-}" ] && { pass "changelog: external deployments are not started here (skipped)"; exit 0; }
S=$ROOT/dumps/sample
ONLINE=$(dirname "$REMODEL")/remodel-online
KILLAT=$ROOT/tests/peers/killat.sh
trap '[ "$BASHPID" != "$$" ] || { kill $(jobs -p) 2>/dev/null; for d in "$T"/srv-*; do "$SERVER" stop "$d" >/dev/null 2>&1; done; rm -rf "$T"; }' EXIT
mkdir -p "$T/plans"
cp "$ROOT/dumps/plans/embed-tasks.json" "$T/plans/embed.json"
# Orders get their customer's name by the customer's code (not its _id, so
# a code can change); then each customer the count and sum of its orders,
# from step 1's results.
cat >"$T/plans/chain.json" <<'EOF'
{"remodel": 1, "steps": [
  {"denormalize": {"in": "shop.orders", "from": "shop.customers", "localField": "cust",
                   "foreignField": "code", "fields": {"cust_name": "name"}}},
  {"summarize": {"into": "shop.customers", "from": "shop.orders", "localField": "code",
                 "foreignField": "cust",
                 "fields": {"n_orders": {"$count": {}}, "total": {"$sum": "$amount"},
                            "names": {"$addToSet": "$cust_name"}}}}]}
EOF

# The same two steps in place on a shop of its own (shopx): step 2 reads
# the orders step 1 rewrites.
sed 's/"shop\./"shopx./g' "$T/plans/chain.json" >"$T/plans/inplace.json"

# Posts' comments into their own collection (some with an _id of their
# own, some without), reviews embedded into items, at most 3 each, the
# rest on overflow pages, and each post's count of comments from step 1's
# children.
cat >"$T/plans/kinds.json" <<'EOF'
{"remodel": 1, "steps": [
  {"extract": {"from": "blog.posts", "path": "comments", "to": "blog.comments",
               "style": "parentRef", "parentField": "post_id", "ordinalField": "n"}},
  {"embed": {"from": "blog.reviews", "into": "blog.items", "localField": "_id",
             "foreignField": "item", "as": "reviews", "sort": {"stars": -1},
             "maxItems": 3, "onOverflow": "outlier"}},
  {"summarize": {"into": "blog.posts", "from": "blog.comments", "localField": "_id",
                 "foreignField": "post_id", "fields": {"n_comments": {"$count": {}}}}}]}
EOF

# make_shop [DB [ORDERS]]: 40 customers with codes C0..C39, ORDERS orders
# (DB: shop, ORDERS: 300).
make_shop() {
    py '
random.seed(11)
s = c[sys.argv[2] if len(sys.argv) > 2 else "shop"]
n = int(sys.argv[3]) if len(sys.argv) > 3 else 300
s.customers.insert_many([{"_id": i, "code": "C%d" % i, "name": "cust %d" % i} for i in range(40)])
s.orders.insert_many([{"_id": 1000 + i, "cust": "C%d" % random.randrange(40),
                       "amount": random.randrange(1, 100)} for i in range(n)])
s.orders.create_index("cust")
s.customers.create_index("code")' "$@"
}

# The blog: 60 posts with 0 to 5 comments, 30 items with 0 to 6 reviews.
make_blog() {
    py '
random.seed(5)
b = c.blog
def comment(p, i):
    d = {"by": "u%d" % random.randrange(9), "text": "comment %d of %d" % (i, p)}
    return dict({"_id": "c-%d-%d" % (p, i)}, **d) if i % 2 else d
b.posts.insert_many([{"_id": p, "title": "post %d" % p,
                      "comments": [comment(p, i) for i in range(random.randrange(6))]}
                     for p in range(60)])
b.items.insert_many([{"_id": "i%d" % i, "name": "item %d" % i} for i in range(30)])
b.reviews.insert_many([{"_id": r, "item": "i%d" % random.randrange(30), "stars": r % 5}
                       for r in range(120)])
b.reviews.create_index("item")'
}

# blog_writes SEED: comments added, removed and moved (an own _id taken
# along), a post deleted, inserted and replaced; reviews moved, added past
# maxItems, deleted.
blog_writes() {
    py '
random.seed(int(sys.argv[2]))
n = int(sys.argv[2])
p, r = c.blog.posts, c.blog.reviews
pids = sorted(d["_id"] for d in p.find({}, {"_id": 1}))
a, b, d, e = random.sample(pids, 4)
p.update_one({"_id": a}, {"$push": {"comments": {"by": "w", "text": "added %d" % n}}})
p.update_one({"_id": b}, {"$pop": {"comments": -1}})
moved = {"_id": "m-%d" % n, "by": "w", "text": "moved"}
p.update_one({"_id": d}, {"$push": {"comments": moved}})
# (FerretDB 1.x pulls only elements equal to the condition: the array set whole)
p.update_one({"_id": d}, {"$set": {"comments": [x for x in p.find_one({"_id": d})["comments"]
                                                if x.get("_id") != moved["_id"]]}})
p.update_one({"_id": e}, {"$push": {"comments": moved}})
p.delete_one({"_id": random.choice([x for x in pids if x not in (a, b, d, e)])})
p.insert_one({"_id": 1000 + n, "title": "new", "comments": [{"by": "w", "text": "first"}]})
doc = p.find_one({"_id": a}); doc["title"] = "replaced %d" % n; p.replace_one({"_id": a}, doc)
rids = sorted(x["_id"] for x in r.find({}, {"_id": 1}))
r.update_one({"_id": random.choice(rids)}, {"$set": {"item": "i%d" % random.randrange(30)}})
r.insert_many([{"_id": 10000 * n + k, "item": "i%d" % (n % 30), "stars": k % 5} for k in range(5)])
r.delete_one({"_id": random.choice(rids)})' "$1"
}

# writes SEED: one of each kind the issue names, to both plans' sources.
writes() {
    py '
random.seed(int(sys.argv[2]))
t, p, o, k = c.crm.tasks, c.crm.people, c.shop.orders, c.shop.customers
pids = [d["_id"] for d in p.find({}, {"_id": 1})]
tids = [d["_id"] for d in t.find({}, {"_id": 1}).limit(200)]
random.shuffle(tids)
t.update_one({"_id": tids[0]}, {"$set": {"owner": random.choice(pids)}})        # moved
t.delete_one({"_id": tids[1]})                                                  # deleted
t.insert_one({"_id": "t-%s" % sys.argv[2], "owner": random.choice(pids), "title": "new",
              "due_date": None})                                                # inserted
d = t.find_one({"_id": tids[2]}); d["title"] = "replaced %s" % sys.argv[2]
t.replace_one({"_id": tids[2]}, d)                                              # replaced
p.update_one({"_id": random.choice(pids)}, {"$set": {"name": "renamed %s" % sys.argv[2]}})
n = int(sys.argv[2])
k.update_one({"_id": n % 40}, {"$set": {"code": "Z%d" % n}})                    # key changed
oids = [d["_id"] for d in o.find({}, {"_id": 1})]
o.update_one({"_id": random.choice(oids)}, {"$set": {"cust": "C%d" % random.randrange(40)}})
o.delete_one({"_id": random.choice(oids)})
o.insert_one({"_id": 5000 + n, "cust": "Z%d" % n, "amount": 7})
o.update_one({"_id": random.choice(oids)}, {"$inc": {"amount": 5}})
k.update_one({"_id": (n + 1) % 40}, {"$set": {"name": "cust renamed %s" % n}})' "$1"
}

# ip_writes SEED: shopx's orders moved, deleted, inserted and changed, a
# customer renamed (its orders copy the name), one whose code changed (its
# orders re-homed); the _ids written (o<id>, k<id>) added to $T/touched.
ip_writes() {
    py '
random.seed(int(sys.argv[2]))
n = int(sys.argv[2])
o, k = c.shopx.orders, c.shopx.customers
oids = sorted(d["_id"] for d in o.find({}, {"_id": 1}))
a, b, d = random.sample(oids, 3)
o.update_one({"_id": a}, {"$set": {"cust": "C%d" % random.randrange(40)}})
o.delete_one({"_id": b})
o.insert_one({"_id": 6000 + n, "cust": "C%d" % (n % 40), "amount": 3})
o.update_one({"_id": d}, {"$inc": {"amount": 5}})
k.update_one({"_id": (n + 7) % 40}, {"$set": {"name": "renamed %d" % n}})
k.update_one({"_id": (n + 20) % 40}, {"$set": {"code": "Y%d" % n}})
print(" ".join(["o%d" % x for x in (a, b, d, 6000 + n)] + ["k%d" % ((n + 7) % 40), "k%d" % ((n + 20) % 40)]))' "$1" >>"$T/touched"
}
# ip_same NAME: shopx dumped now, remodel run's result of inplace.json on
# it, and the live collections compared with it (in place the transform
# gives a document already right back unchanged).
ip_same() {
    rm -f "$T/ip-src.archive" "$T/ip-out.archive"
    "$MONGODUMP" --uri "$uri" --db shopx --archive="$T/ip-src.archive" --quiet &&
        "$REMODEL" run -q "$T/plans/inplace.json" --from "$T/ip-src.archive" \
            --to "$T/ip-out.archive" || fail "$1: offline reference"
    online_same "$1" "$T/ip-out.archive" shopx.orders=orders shopx.customers=customers
}

# offline NAME: the sources dumped now, and remodel run's result of both plans.
offline() {
    "$MONGODUMP" --uri "$uri" --db crm --archive="$T/$1-crm.archive" --quiet &&
        "$MONGODUMP" --uri "$uri" --db shop --archive="$T/$1-shop.archive" --quiet &&
        "$REMODEL" run -q "$T/plans/embed.json" --from "$T/$1-crm.archive" --to "$T/$1-embed.archive" &&
        "$REMODEL" run -q "$T/plans/chain.json" --from "$T/$1-shop.archive" --to "$T/$1-chain.archive"
}
# kinds_same NAME: the blog dumped now, remodel run's result of kinds.json,
# and the side-by-side results compared with it.
kinds_same() {
    local k
    k=$(pid kinds)
    rm -f "$T/kinds-src.archive" "$T/kinds-out.archive"
    "$MONGODUMP" --uri "$uri" --db blog --archive="$T/kinds-src.archive" --quiet &&
        "$REMODEL" run -q "$T/plans/kinds.json" --from "$T/kinds-src.archive" \
            --to "$T/kinds-out.archive" || fail "$1: offline reference"
    online_same "$1" "$T/kinds-out.archive" blog.comments=comments_remodel_${k}_1 \
        blog.items=items_remodel_${k}_2 blog.items_reviews_overflow=items_reviews_overflow_remodel_${k}_2 \
        blog.posts=posts_remodel_${k}_3
}
# same_side NAME STAGE: the side-by-side results are the offline ones.
same_side() {
    local e c
    e=$(pid embed) c=$(pid chain)
    online_same "$1: embed's results are remodel run's" "$T/$2-embed.archive" \
        crm.people=people_remodel_${e}_1 crm.tasks=tasks_remodel_${e}_1
    online_same "$1: the chained plan's results are remodel run's" "$T/$2-chain.archive" \
        shop.orders=orders_remodel_${c}_1 shop.customers=customers_remodel_${c}_2
}
# sync_matrix PLAN WRITES K...: for each K, WRITES K's writes, then sync
# killed (kill -9) at its K-th rewrite of results (in place: at the K-th
# flush of backups or documents, with kill_at=online_writes_flush), then
# sync again: every result right. A K past the last rewrite runs the sync
# to its end (killat exit 3): still checked, not counted as a kill. Prints
# the kills.
sync_matrix() {
    local plan=$1 writer=$2 k krc kills=0; shift 2
    for k in "$@"; do
        "$writer" $((40 + k))
        "$KILLAT" -q "${kill_at:-online_side_rewrite}" "$k" -- "$ONLINE" sync "$T/plans/$plan.json" --uri "$uri" \
            >/dev/null 2>"$T/kerr"
        krc=$?
        [ $krc == 137 ] && kills=$((kills + 1))
        [ $krc == 137 ] || [ $krc == 3 ] || fail "$kind: $plan: sync killed at rewrite #$k" "killat exit $krc: $(tail -n 3 "$T/kerr")"
        online sync "$plan"
        [ "$rc" == 0 ] || fail "$kind: $plan: sync after a kill at rewrite #$k" "$(cat "$T/err")"
        verified "$kind: $plan: sync killed at rewrite #$k ($krc), then again: every result right" "$plan"
    done
    echo "$kills"
}

verified() {
    online verify "$2"
    expect_eq "$1" "$rc:$(grep -c 'every result as the sources make it' "$T/err")" "0:1"
}

for kind in ferretdb java; do
    # Each part below has a server of its own (its plans and databases are
    # apart): FerretDB reads its oplog by scanning all of it, for each sync
    # and each round of follow (one with nothing to do takes 10 s once
    # 40 MB are logged), so a log that holds only its own part's writes
    # keeps every part quick. An oplog large enough for each part: only
    # the lost-history case below floods a small one.
    PEERS_OPLOG_BYTES=67108864 online_start "$kind" "$T/srv-$kind-kinds" 0 changelog && {
        make_blog
        fresh_log "$T/srv-$kind-kinds"
        online run kinds --create-indexes --batch-size 20 -q
        expect_eq "$kind: extract, outlier embed and summary run" "$rc:$(cat "$T/err")" "0:"

        # ---- results naming their driver in a field: extract, overflow ----
        blog_writes 1
        online sync kinds
        rd=$(figure read)
        expect_eq "$kind: kinds: sync follows the log, no step rescanned (exit 0)" \
            "$rc:$(grep -c 'rescanned in full' "$T/err")" "0:0"
        # 60 posts, ~150 comments, 30 items, 120 reviews.
        if [ -n "$rd" ] && [ "$rd" -lt 150 ]; then pass "$kind: kinds: sync read $rd documents, not the 360"
        else fail "$kind: kinds: sync read few documents" "$(cat "$T/err")"; fi
        verified "$kind: kinds: verify finds every result right after the sync" kinds
        kinds_same "$kind: kinds: extract's children, overflow pages and the summary are remodel run's"
        blog_writes 2
        blog_writes 3
        online sync kinds
        expect_eq "$kind: kinds: two more rounds of writes, synced from the log" \
            "$rc:$(grep -c 'rescanned in full' "$T/err")" "0:0"
        kinds_same "$kind: kinds: ... remodel run's again"
        # A changed post taking the _id of an unchanged post's comment.
        owner=$(py 'd = c.blog.posts.find_one({"comments._id": {"$regex": "^c-"}, "_id": {"$lt": 1000}})
print(d["_id"], [x["_id"] for x in d["comments"] if "_id" in x][0])')
        py 'c.blog.posts.update_one({"_id": 1001}, {"$push": {"comments": {"_id": sys.argv[2], "text": "dup"}}})' "${owner#* }"
        online sync kinds
        expect_eq "$kind: kinds: a changed post's comment with an unchanged post's comment _id is refused (exit 1, naming it)" \
            "$rc:$(grep -c "two results for blog.comments with one _id ({ \"_id\" : \"${owner#* }\", .*\"post_id\" : ${owner% *}, .* and { \"_id\" : \"${owner#* }\", \"text\" : \"dup\", \"post_id\" : 1001, " "$T/err")" "1:1"
        py 'p = c.blog.posts
p.update_one({"_id": 1001}, {"$set": {"comments": [x for x in p.find_one({"_id": 1001})["comments"]
                                                       if x.get("text") != "dup"]}})'
        online sync kinds
        expect_eq "$kind: kinds: ... and once the post is put right, sync completes" "$rc" "0"
        kinds_same "$kind: kinds: ... remodel run's"
        sync_matrix kinds blog_writes 1 2 3 4 5 >"$T/kills"
        grep -v '^[0-9]*$' "$T/kills"
        expect_eq "$kind: kinds: the sync matrix killed at least 4 rewrites (of 3 steps)" \
            "$(tail -n 1 "$T/kills" | awk '{print ($1 >= 4)}')" "1"
        kinds_same "$kind: kinds: after the sync matrix, remodel run's"
        "$SERVER" stop "$T/srv-$kind-kinds" >/dev/null 2>&1
    }

    PEERS_OPLOG_BYTES=67108864 online_start "$kind" "$T/srv-$kind-inplace" 0 changelog && {
        # ---- in place: the documents themselves rewritten, then rollback ----
        # 150 orders: FerretDB scans the whole collection for each
        # conditional update an in-place step sends (its cost the square
        # of the orders).
        make_shop shopx 150
        fresh_log "$T/srv-$kind-inplace"
        "$MONGODUMP" --uri "$uri" --db shopx --archive="$T/$kind-ip0.archive" --quiet
        : >"$T/touched"
        online run inplace --in-place --batch-size 50 -q
        expect_eq "$kind: inplace: the two steps run in place" "$rc:$(cat "$T/err")" "0:"
        # The run's own writes are in the log after its point: read back,
        # recomputed, already right.
        online sync inplace
        expect_eq "$kind: inplace: the first sync reads the run's own writes back and rewrites nothing (no rescan)" \
            "$rc:$(grep -c 'rescanned in full' "$T/err"):$(figure results):$(figure removed)" "0:0:0:0"
        ip_writes 1
        online sync inplace
        ev=$(events) rd=$(figure read) rw=$(figure results)
        expect_eq "$kind: inplace: sync follows the log, nothing rescanned (exit 0, 6 writes)" \
            "$rc:$(grep -c 'rescanned in full' "$T/err"):$ev" "0:0:6"
        # 150 orders and 40 customers: the changed ones, the orders of the
        # renamed and re-coded customers, the customers of the changed orders.
        if [ -n "$rd" ] && [ "$rd" -lt 100 ] && [ "${rw:-0}" -gt 0 ]; then
            pass "$kind: inplace: sync read $rd documents, not the 190, and rewrote $rw"
        else fail "$kind: inplace: sync read few documents and rewrote some" "$(cat "$T/err")"; fi
        verified "$kind: inplace: verify finds every document right after the sync" inplace
        ip_same "$kind: inplace: the documents are remodel run's on a dump taken then"
        online sync inplace
        ev=$(events)
        expect_eq "$kind: inplace: a second sync reads the first one's writes and rewrites nothing" \
            "$rc:$([ "${ev:-0}" -gt 0 ] && echo events):$(figure results):$(figure removed)" "0:events:0:0"
        # Killed between the steps (step 1's documents written, step 2's
        # backups not): the journal names what step 1 rewrote in place.
        ip_writes 30
        "$KILLAT" -q online_writes_flush 3 -- "$ONLINE" sync "$T/plans/inplace.json" --uri "$uri" \
            >/dev/null 2>"$T/kerr"
        krc=$?
        noted=$(py 'print(sum(len(d["ids"]) for d in c.remodel["made_" + sys.argv[2]].find({"ns": "shopx.orders"})))' "$(pid inplace)")
        online sync inplace
        expect_eq "$kind: inplace: sync killed between its steps: the orders step 1 rewrote were noted first; sync again completes" \
            "$krc:$([ "${noted:-0}" -gt 0 ] && echo noted):$rc" "137:noted:0"
        verified "$kind: inplace: ... every document right" inplace
        # The application writes the orders step 1 is about to rewrite, between
        # its read and its write (killat --exec at the flush of step 1's
        # documents): the conditional writes miss, and each is read again and
        # recomputed: the application's field kept, the new name copied.
        ip_writes 70
        cat >"$T/appwrite.py" <<'PYEOF'
import sys, pymongo
o = pymongo.MongoClient(sys.argv[1], directConnection=True).shopx.orders
o.update_many({"cust": "C37"}, {"$set": {"note": "app"}})
with open(sys.argv[2], "a") as f:
    print(" ".join("o%d" % d["_id"] for d in o.find({"cust": "C37"}, {"_id": 1})), file=f)
PYEOF
        "$KILLAT" -q --exec "python3 '$T/appwrite.py' '$uri' '$T/touched'" online_writes_flush 2 -- \
            "$ONLINE" sync "$T/plans/inplace.json" --uri "$uri" >/dev/null 2>"$T/kerr"
        krc=$?
        expect_eq "$kind: inplace: orders written by the application between the sync's read and write: read again, its change kept and the new name copied" \
            "$krc:$(py 'o = c.shopx.orders
n = o.count_documents({"cust": "C37"})
print(n > 0 and n == o.count_documents({"cust": "C37", "note": "app", "cust_name": "renamed 70"}))')" "0:True"
        ip_same "$kind: inplace: ... remodel run's"
        kill_at=online_writes_flush sync_matrix inplace ip_writes 1 2 3 4 >"$T/kills"
        grep -v '^[0-9]*$' "$T/kills"
        expect_eq "$kind: inplace: the sync matrix killed before and after both steps' backups" \
            "$(tail -n 1 "$T/kills")" "4"
        ip_same "$kind: inplace: after the sync matrix, remodel run's"
        # follow in place under a writer: each round from the log; a round
        # after the writer stops reads the last one's writes and rewrites
        # nothing, and then the log holds nothing after the point (lag: none).
        : >"$T/follow.err"
        "$REMODEL" online follow "$T/plans/inplace.json" --uri "$uri" --pause 200ms 2>"$T/follow.err" &
        fp=$!
        for s in 61 62; do ip_writes $s; sleep 0.3; done
        for ((i = 1, iend = SECONDS + 120; SECONDS < iend; i++)); do
            "$REMODEL" online status "$T/plans/inplace.json" --uri "$uri" >"$T/status" 2>&1
            grep -q '^lag: none' "$T/status" && grep -q '^follow: round' "$T/status" && break
            sleep 0.5
        done
        kill -TERM $fp; wait $fp; frc=$?
        expect_eq "$kind: inplace: follow: rounds from the log (none rescanned, one rewriting nothing), lag none once the writer stops, TERM stops it (exit 0)" \
            "$frc:$(grep -c 'rescanned in full' "$T/follow.err"):$(grep -c 'change log: [1-9][0-9]* events .* 0 results rewritten, 0 removed' "$T/follow.err" | awk '{print ($1 > 0)}'):$(grep -c '^lag: none' "$T/status")" "0:0:1:1"
        ip_same "$kind: inplace: after follow, remodel run's"
        online finalize inplace --writes-stopped
        expect_eq "$kind: inplace: finalize refused: nothing to finalize in place (exit 2)" \
            "$rc:$(grep -c 'ran in place: its documents are already the new design' "$T/err")" "2:1"
        online rollback inplace
        "$MONGODUMP" --uri "$uri" --db shopx --archive="$T/$kind-ip9.archive" --quiet
        # Every document the application never wrote is its original again
        # (bytes on FerretDB; fields and values on mongo-java-server, whose
        # replace keeps the stored order); those it wrote keep the
        # application's fields (any whose copied field the application wrote
        # itself, or that it deleted, left and named: exit 1).
        res=$(PYTHONPATH=$ROOT/tests/transforms pyin "$T/$kind-ip0.archive" "$T/$kind-ip9.archive" "$T/touched" "$kind" <<'PYEOF'
import sys, bson, rmlib
a, b = rmlib.read_archive(sys.argv[1])[0], rmlib.read_archive(sys.argv[2])[0]
touched, exact, ok, said = set(open(sys.argv[3]).read().split()), sys.argv[4] == "ferretdb", True, []
for ns, t in (("shopx.orders", "o"), ("shopx.customers", "k")):
    old = {bson.decode(bytes(d))["_id"]: bytes(d) for d in a[ns]}
    new = {bson.decode(bytes(d))["_id"]: bytes(d) for d in b[ns]}
    keep = [i for i in old if t + str(i) not in touched]
    same = sum(i in new and (old[i] == new[i] if exact else bson.decode(old[i]) == bson.decode(new[i]))
               for i in keep)
    ok &= same == len(keep) and len(keep) < len(old)
    said.append("%s: %d of %d untouched restored" % (ns, same, len(keep)))
print(ok, "; ".join(said))
PYEOF
)
        if [ "${res%% *}" == True ] && { [ "$rc" == 0 ] || grep -q 'since remodel wrote it: left as it is' "$T/err"; }; then
            pass "$kind: inplace: rollback restores every original the application did not write (${res#* }), and remodel's fields only of those it did"
        else fail "$kind: inplace: rollback restores the originals" "rc $rc: $res: $(tail -n 5 "$T/err")"; fi
        "$SERVER" stop "$T/srv-$kind-inplace" >/dev/null 2>&1
    }

    # Embed and the chained plan: the rest.
    PEERS_OPLOG_BYTES=67108864 online_start "$kind" "$T/srv-$kind" 0 changelog || continue
    "$MONGORESTORE" --uri "$uri" --archive="$S.archive.gz" --gzip --nsInclude 'crm.*' \
        --noIndexRestore --quiet
    make_shop
    fresh_log "$T/srv-$kind"
    online run embed --create-indexes --batch-size 50 -q
    expect_eq "$kind: embed runs" "$rc:$(cat "$T/err")" "0:"
    online run chain --batch-size 50 -q
    expect_eq "$kind: the chained plan runs" "$rc:$(cat "$T/err")" "0:"

    # ---- sync reads what the changes affect ----
    writes 1
    online sync embed
    ev=$(events) rd=$(figure read)
    expect_eq "$kind: embed: sync follows the log (exit 0, 4 writes to tasks, 1 to people)" \
        "$rc:$ev" "0:5"
    # 98 people and 1000 tasks: the two parents of the moved task, those of
    # the others, and the tasks themselves (and their parents' tasks).
    if [ -n "$rd" ] && [ "$rd" -lt 200 ]; then pass "$kind: embed: sync read $rd documents, not the 1098"
    else fail "$kind: embed: sync read few documents" "$(cat "$T/err")"; fi
    online sync chain
    ev=$(events) rd=$(figure read)
    expect_eq "$kind: chain: sync follows the log (exit 0, 6 writes)" "$rc:$ev" "0:6"
    if [ -n "$rd" ] && [ "$rd" -lt 200 ]; then pass "$kind: chain: sync read $rd documents, not the 340"
    else fail "$kind: chain: sync read few documents" "$(cat "$T/err")"; fi
    verified "$kind: embed: verify finds every result right after the sync" embed
    verified "$kind: chain: verify finds every result right after the sync" chain
    offline "$kind-a" || fail "$kind: offline reference"
    same_side "$kind: after a sync from the log" "$kind-a"
    online sync chain
    expect_eq "$kind: a second sync finds nothing to do" "$rc:$(events):$(figure results)" "0:0:0"

    sync_matrix chain writes 1 2 >"$T/kills"
    grep -v '^[0-9]*$' "$T/kills"
    expect_eq "$kind: chain: the sync matrix killed at both steps' rewrites" "$(tail -n 1 "$T/kills")" "2"
    # One task moved three times, a sync after each: the key map must know
    # every owner it had (the second and third come from syncs, added to
    # its entry), so no earlier owner keeps it.
    for hop in 1 2 3; do
        py '
t, p = c.crm.tasks, c.crm.people
pids = sorted(d["_id"] for d in p.find({}, {"_id": 1}))
t.update_one({"_id": "t-1"}, {"$set": {"owner": pids[int(sys.argv[2]) * 7]}})' "$hop"
        online sync embed
        [ "$rc" = 0 ] || fail "$kind: sync after move $hop" "$(cat "$T/err")"
    done
    holders=$(py '
e = sys.argv[2]
print(sorted(str(d["_id"]) for d in c.crm["people_remodel_%s_1" % e].find({"tasks._id": "t-1"})),
      str(c.crm.tasks.find_one({"_id": "t-1"})["owner"]))' "$(pid embed)")
    expect_eq "$kind: a task moved three times, synced after each: only its last owner holds it" \
        "$(python3 -c 'import sys, ast; l, o = sys.argv[1].rsplit(" ", 1); print(ast.literal_eval(l) == [o])' "$holders")" "True"
    offline "$kind-a2" || fail "$kind: offline reference"
    same_side "$kind: after three moves of one task" "$kind-a2"
    # ---- follow, a writer, status, a signal ----
    : >"$T/follow.err"
    "$REMODEL" online follow "$T/plans/chain.json" --uri "$uri" --pause 200ms 2>"$T/follow.err" &
    fp=$!
    for s in 2 3 4; do writes $s; sleep 0.3; done
    for ((i = 1, iend = SECONDS + 240; SECONDS < iend; i++)); do
        "$REMODEL" online status "$T/plans/chain.json" --uri "$uri" >"$T/status" 2>&1
        grep -q '^lag: none' "$T/status" && grep -q '^follow: round' "$T/status" && break
        sleep 0.5
    done
    expect_eq "$kind: follow: status shows its rounds, and no lag once the writer stops" \
        "$(grep -c '^follow: round [0-9]*, [0-9]* s ago (pid [0-9]*)' "$T/status"):$(grep -c '^lag: none' "$T/status")" "1:1"
    kill -TERM $fp; wait $fp; frc=$?
    expect_eq "$kind: follow: a TERM stops it after its round (exit 0, said)" \
        "$frc:$(grep -c 'follow: plan chain.json: stopped after [0-9]* rounds (terminated)' "$T/follow.err")" "0:1"
    verified "$kind: follow kept the chained plan's results current" chain

    # ---- kill -9 during follow, then sync ----
    "$REMODEL" online follow "$T/plans/chain.json" --uri "$uri" --pause 50ms 2>/dev/null &
    fp=$!
    writes 5; sleep 0.2; writes 6
    kill -KILL $fp; wait $fp 2>/dev/null
    online sync embed
    online sync chain
    expect_eq "$kind: follow killed (kill -9): sync at once takes over and completes" "$rc" "0"
    verified "$kind: ... nothing lost" chain
    offline "$kind-b" || fail "$kind: offline reference"
    same_side "$kind: after follow killed and a sync" "$kind-b"

    # ---- a sample verified ahead of the cut-over (follow, verify --sample) ----
    # (the follows above may have recorded one: forgotten first)
    py 'c.remodel.plans.update_one({"_id": sys.argv[2]}, {"$unset": {"sampled": 1}})' "$(pid chain)"
    : >"$T/follow.err"
    "$REMODEL" online follow "$T/plans/chain.json" --uri "$uri" --pause 200ms 2>"$T/follow.err" &
    fp=$!
    for ((i = 1, iend = SECONDS + 240; SECONDS < iend; i++)); do
        "$REMODEL" online status "$T/plans/chain.json" --uri "$uri" >"$T/status" 2>&1
        grep -q '^sample: verified' "$T/status" && break
        sleep 0.5
    done
    kill -TERM $fp; wait $fp
    expect_eq "$kind: follow verifies a sample of the results after its first round (status says so)" \
        "$(grep -c '^sample: verified [0-9]* s ago, by follow (1000 drivers a pass), none differed' "$T/status"):$(grep -c 'follow: step 1 (denormalize): [0-9]* documents verified' "$T/follow.err")" "1:1"
    writes 19
    online verify embed --sample 2000
    "$REMODEL" online status "$T/plans/embed.json" --uri "$uri" >"$T/status" 2>&1
    expect_eq "$kind: verify --sample after writes not yet synced: they differ (exit 1), nothing recorded" \
        "$rc:$(grep -c 'verify: plan embed.json: [1-9][0-9]* result(s) differ' "$T/err"):$(grep -c '^sample: none verified ahead' "$T/status")" "1:1:1"
    online sync embed
    online verify embed --sample 50
    "$REMODEL" online status "$T/plans/embed.json" --uri "$uri" >"$T/status" 2>&1
    expect_eq "$kind: verify --sample after the sync: 50 drivers a pass, none differ, recorded" \
        "$rc:$(grep -c 'verify: step 1 (embed): 100 documents verified' "$T/err"):$(grep -c 'every result of the sample as the sources make it' "$T/err"):$(grep -c '^sample: verified [0-9]* s ago, by verify (50 drivers a pass)' "$T/status")" "0:1:1:1"

    # ---- a kill matrix over finalize's drain ----
    kstep=0
    for point in online_side_rewrite:1 online_keys_flush:1 online_writes_flush:2 online_capture_save:1; do
        kstep=$((kstep + 1))
        writes $((10 + kstep))
        "$KILLAT" -q "${point%%:*}" "${point##*:}" -- "$ONLINE" finalize "$T/plans/chain.json" \
            --uri "$uri" --writes-stopped --max-window 0 >/dev/null 2>"$T/kerr"
        krc=$?
        if [ $krc == 137 ]; then
            # Not switched yet: the results must still be made whole by a sync.
            online sync chain
            expect_eq "$kind: finalize killed at ${point%%:*} #${point##*:}: a sync then completes" "$rc" "0"
            verified "$kind: ... and nothing is lost or doubled" chain
        else
            fail "$kind: finalize killed at ${point%%:*} #${point##*:}" "killat exit $krc: $(tail -n 3 "$T/kerr")"
        fi
    done
    writes 20
    offline "$kind-c" || fail "$kind: offline reference"
    "$KILLAT" -q online_side_rewrite 1 -- "$ONLINE" finalize "$T/plans/embed.json" --uri "$uri" \
        --writes-stopped --max-window 0 >/dev/null 2>"$T/kerr"
    krc=$?
    online finalize embed --writes-stopped --sample 2000
    expect_eq "$kind: embed: finalize killed in its drain ($krc), then again: it drains and switches" \
        "$rc:$(grep -c 'drained the change log and verified' "$T/err"):$(grep -c 'change log shows no write to the sources' "$T/err")" "0:1:1"
    [ $rc == 0 ] || cat "$T/err" >&2
    expect_message "$kind: ... --sample: verifying a sample of each pass, though one was verified before" \
        "finalize: step 1 (embed): 1098 documents verified"
    online_same "$kind: embed finalized: the live people and tasks are remodel run's" "$T/$kind-c-embed.archive" \
        crm.people=people crm.tasks=tasks

    # ---- a write slipping in before the switch ----
    # Paused until the write is made (SIGUSR1 ends it), however long that
    # takes; no --max-window (the drain and the pause took 10 s at load 7).
    # Emptied first: the job truncates it itself, perhaps after the first look.
    : >"$T/fin.err"
    REMODEL_ONLINE_PAUSE_BEFORE_SWITCH_MS=600000 "$REMODEL" online finalize "$T/plans/chain.json" \
        --uri "$uri" --writes-stopped --max-window 0 >/dev/null 2>"$T/fin.err" &
    fp=$!
    # The write only once finalize has drained and paused (a loaded
    # machine may take minutes to get there): one made before the drain is
    # drained, and proves nothing.
    for ((i = 1, iend = SECONDS + 600; SECONDS < iend; i++)); do
        grep -q 'pausing' "$T/fin.err" 2>/dev/null && break
        kill -0 $fp 2>/dev/null || break
        sleep 0.2
    done
    if grep -q pausing "$T/fin.err"; then
        py 'c.shop.orders.update_one({"_id": 1001}, {"$inc": {"amount": 1}})'
        kill -USR1 $fp 2>/dev/null # the pause's end: the write is made
    fi
    wait $fp; frc=$?
    expect_eq "$kind: a write after the drain is caught from the log (exit 1, counted)" \
        "$frc:$(grep -c 'pausing' "$T/fin.err"):$(grep -c 'the change log shows 1 document(s) of the sources written between the last sync and the switch' "$T/fin.err")" "1:1:1"
    [ "$frc" == 1 ] || sed 's/^/  /' "$T/fin.err" | tail -n 8 >&2
    expect_eq "$kind: ... the sample follow verified is not verified again with the writes stopped" \
        "$(grep -c 'a sample of the results was verified [0-9]* s ago, by follow' "$T/fin.err"):$(grep -c 'documents verified' "$T/fin.err"):$(grep -c 'drained the change log in' "$T/fin.err")" "1:0:1"
    online rollback chain
    expect_eq "$kind: ... and rollback swaps the originals back" "$rc" "0"
    "$SERVER" stop "$T/srv-$kind" >/dev/null 2>&1
done

# ---- lost history during follow (FerretDB: its oplog is capped here) ----
PEERS_OPLOG_BYTES=1048576 online_start ferretdb "$T/srv-small" 0 changelog && {
    "$MONGORESTORE" --uri "$uri" --archive="$S.archive.gz" --gzip --nsInclude 'crm.*' \
        --noIndexRestore --quiet
    make_shop
    online run chain --batch-size 100 -q
    : >"$T/follow.err"
    "$REMODEL" online follow "$T/plans/chain.json" --uri "$uri" --pause 15s 2>"$T/follow.err" &
    fp=$!
    for ((i = 1, iend = SECONDS + 120; SECONDS < iend; i++)); do
        "$REMODEL" online status "$T/plans/chain.json" --uri "$uri" >"$T/status" 2>&1
        grep -q '^follow: round' "$T/status" && break
        sleep 0.3
    done
    writes 30
    # 1.6 MB through the 1 MiB oplog (trimmed every second, a part at a
    # time), while follow pauses: its point rolls off.
    py 'c.scratch.fill.insert_many([{"pad": "x" * 2000, "i": i} for i in range(800)])'
    for ((i = 1, iend = SECONDS + 160; SECONDS < iend; i++)); do
        "$REMODEL" online status "$T/plans/chain.json" --uri "$uri" >"$T/status" 2>&1
        grep -q '^history lost since' "$T/status" && break
        sleep 1
    done
    for ((i = 1, iend = SECONDS + 120; SECONDS < iend; i++)); do grep -q 'history lost since' "$T/follow.err" && break; sleep 0.5; done
    # A TERM during the round's rescan stops it between two batches
    # (exit 0); its point is not saved, so a sync does that round again.
    kill -TERM $fp; wait $fp; frc=$?
    expect_eq "ferretdb: follow names lost history, and rescans everything (stopped: exit 0)" \
        "$frc:$(grep -c 'remodel: sync: history lost since Timestamp([0-9]*, [0-9]*) (the change log no longer holds it): every step rescanned in full' "$T/follow.err")" "0:1"
    online sync chain
    verified "ferretdb: ... after which, and a sync, every result is right" chain
    "$SERVER" stop "$T/srv-small" >/dev/null 2>&1
}

# ---- no change log: follow refuses ----
online_start java "$T/srv-none" 0 && {
    make_shop
    online run chain -q
    online follow chain
    expect_eq "java without its oplog: follow refuses (exit 2), naming why" \
        "$rc:$(grep -c 'has no point in a change log to follow' "$T/err")" "2:1"
    online sync chain
    expect_eq "... and sync rescans, saying nothing of a log" "$rc:$(grep -c 'change log' "$T/err")" "0:0"
}
