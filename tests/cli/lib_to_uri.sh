# What the suites of --to-uri (tests/cli/test_online_to_uri*.sh) share,
# sourced after lib.sh: two test servers, a source and a destination; the
# plan $P embeds shop.kids into shop.parents.

# to_uri_setup NAME: skipped (exit 0) without peers or against external
# deployments; the plan written; at exit the suite's servers stopped and
# its directory removed, after the suite's own to_uri_cleanup where it
# defines one (a writer, background jobs).
to_uri_setup() {
    use_peers "peers" || exit 0
    [ -n "${REMODEL_TEST_URI:-}" ] && { pass "$1: external deployments are not started here (skipped)"; exit 0; }
    trap 'declare -F to_uri_cleanup >/dev/null && to_uri_cleanup
for d in "$T"/srv-*; do "$SERVER" stop "$d" >/dev/null 2>&1; done; rm -rf "$T"' EXIT
    mkdir -p "$T/plans"
    kids_plan emb shop
    P=$T/plans/emb.json
}

# seed_shop PARENTS KIDS OTHER: on $uri, PARENTS parents (_id 0...), KIDS
# kids (_id 1000...) owned by the parents in turn and indexed on owner,
# and OTHER documents in shop.other, which the plan does not touch, with
# an index v_1 (no collection where OTHER is 0).
seed_shop() {
    py 'parents, kids, other = (int(a) for a in sys.argv[2:5])
c.shop.parents.insert_many([{"_id": i, "name": "p%d" % i} for i in range(parents)])
c.shop.kids.insert_many([{"_id": 1000 + i, "owner": i % parents, "x": i} for i in range(kids)])
if other:
    c.shop.other.insert_many([{"_id": i, "v": i * 2} for i in range(other)])
c.shop.kids.create_index("owner")
if other:
    c.shop.other.create_index("v", name="v_1")' "$@"
}

# pair_start FROM TO: the source, a FROM server with its change log, made
# and seeded by the suite's seed, in $SRC; the destination, a TO server,
# in $DST. False where either does not start.
pair_start() {
    online_start "$1" "$T/srv-src-$1" 0 changelog || return 1
    SRC=$uri
    seed
    online_start "$2" "$T/srv-dst-$2" 0 || return 1
    DST=$uri
}

# two CMD ARGS...: remodel online CMD $P with --uri SRC --to-uri DST, as
# run_rm (its output in $T/out and $T/err, its status in $rc).
two() { run_rm online "$1" "$P" --uri "$SRC" --to-uri "$DST" "${@:2}"; }
# port_of URI: its (first) host's port, as the fault layer's log gives
# it in a call's fifth field (shell-ext/conn/online_fault.c).
port_of() { local p=${1##*:}; p=${p%%/*}; echo "${p%%\?*}"; }

# writer_started: the application's writer just started in the background
# ($!: a script that touches $T/writing once it writes, and stops when
# $T/stop is there) noted in $writer, waited for until it writes;
# stop_writer stops it and waits for its end.
writer_started() {
    writer=$!
    for ((w = 0, wend = SECONDS + 120; SECONDS < wend; w++)); do [ -e "$T/writing" ] && break; sleep 0.1; done
}
stop_writer() {
    [ -n "${writer:-}" ] || return 0
    touch "$T/stop"
    wait "$writer" 2>/dev/null
    writer=
}

# everything [DB...]: a server's ($uri) databases (but admin, local,
# config, the DBs named and empty ones: mongo-java-server lists a
# database a read named), their collections, indexes and every
# document's bytes, as one hash and the names with their counts.
everything() {
    py 'import hashlib
from bson.codec_options import CodecOptions
from bson.raw_bson import RawBSONDocument
h, names = hashlib.sha1(), []
for db in sorted(c.list_database_names()):
    if db in ("admin", "local", "config") or db in sys.argv[2:]:
        continue
    colls = sorted(c[db].list_collection_names())
    if not colls:
        continue
    for n in colls:
        co = c[db].get_collection(n, codec_options=CodecOptions(document_class=RawBSONDocument))
        k = 0
        for d in co.find().sort("_id", 1):
            h.update(d.raw); k += 1
        ix = sorted((i["name"], sorted(i["key"].items())) for i in c[db][n].list_indexes())
        h.update(repr((db, n, k, ix)).encode())
        names.append("%s.%s:%d" % (db, n, k))
print(h.hexdigest()[:16], " ".join(names))' "$@"
}
