#!/usr/bin/env bash
# Namespace selection and renaming as mongorestore does it: --nsInclude,
# --nsExclude (with '*', '\*'), --nsFrom/--nsTo (wildcards by position and
# $var$ variables, the last pair first). The judge is mongorestore itself:
# its --dryRun says which namespace each one would restore to, and remodel
# convert with the same options must write exactly those, with the same
# documents. Then the other commands that read, and the errors.
#   REMODEL=build/remodel bash tests/cli/test_nsselect.sh
. "$(dirname "$0")/lib.sh"

S=$ROOT/dumps/sample
A=$ROOT/dumps/sample.archive.gz
use_peers nsselect-peers || exit 0
uri=$(REMODEL_SERVER_OWNER=$$ "$SERVER" start "$SRV" 2>"$T/err") || { fail "server start" "$(cat "$T/err")"; exit 0; }

# mapping OPTIONS...: "from -> to" lines, sorted, as mongorestore --dryRun would restore.
restore_mapping() {
    "$MONGORESTORE" --uri "$uri" --gzip --archive="$A" --dryRun -v "$@" 2>&1 |
        sed -n 's/.*found collection \([^ ]*\) bson to restore to \([^ ]*\)$/\1 -> \2/p' | sort
}
# remodel's: the namespaces convert writes, matched to their sources by CRC.
remodel_mapping() {
    rm -f "$T/sel.archive"
    "$REMODEL" convert -q "$A" "$T/sel.archive" "$@" || return
    python3 - "$REMODEL" "$A" "$T/sel.archive" <<'PY'
import json, subprocess, sys
def crcs(p):
    d = json.loads(subprocess.run([sys.argv[1], "inspect", "--json", p], capture_output=True).stdout)
    return {n["db"] + "." + n["collection"]: n["crc"] for n in d["namespaces"]}
src, out = crcs(sys.argv[2]), crcs(sys.argv[3])
by_crc = {c: ns for ns, c in src.items()}
print("\n".join(sorted("%s -> %s" % (by_crc.get(c, "?"), ns) for ns, c in out.items())))
PY
}
n=0
while IFS= read -r opts; do
    [ -z "$opts" ] && continue
    n=$((n + 1))
    eval "set -- $opts"
    want=$(restore_mapping "$@")
    got=$(remodel_mapping "$@")
    if [ -n "$want" ] && [ "$got" == "$want" ]; then pass "as mongorestore: $opts"
    else fail "as mongorestore: $opts" "mongorestore: [$(echo $want)] remodel: [$(echo $got)]"; fi
done <<'CASES'
--nsInclude 'crm.*'
--nsInclude 'crm.*' --nsInclude '*.hosts'
--nsExclude 'crm.*' --nsExclude '*.logmsg'
--nsInclude '*o*.*t*' --nsExclude 'school.*'
--nsFrom 'crm.*' --nsTo 'sales.*'
--nsFrom '*.*' --nsTo 'archive_*.old_*'
--nsFrom '$db$.$coll$' --nsTo 'x_$db$.$coll$' --nsInclude 'blog.*'
--nsFrom '$db$.$coll$' --nsTo '$coll$.$db$' --nsInclude 'crm.*'
--nsFrom 'crm.*' --nsTo 'sales.*' --nsFrom 'crm.tasks' --nsTo 'todo.items'
--nsFrom 'crm.tasks' --nsTo 'todo.items' --nsFrom 'crm.*' --nsTo 'sales.*'
--nsFrom '$a$.$b$s' --nsTo '$b$.$a$' --nsInclude 'logging.*' --nsInclude 'school.*'
--nsFrom 'c*.*s' --nsTo 'x*.y*'
--nsFrom '*o*.*' --nsTo 'k*.*.*'
--nsFrom '*.p*' --nsTo 'q*.*' --nsExclude 'blog.*'
CASES
[ "$n" -ge 10 ] && pass "mongorestore cases: $n" || fail "mongorestore cases" "$n"
"$SERVER" stop "$SRV" >/dev/null 2>&1

# Documents are the same bytes under the new name.
"$REMODEL" convert -q "$S" "$T/r.archive" --nsFrom 'crm.tasks' --nsTo 'todo.items'
expect_eq "renamed: the same documents" "$("$REMODEL" show "$T/r.archive" --ns todo.items | md5sum)" \
    "$("$REMODEL" show "$S" --ns crm.tasks | md5sum)"
# '\*' is a literal star: a namespace named with one.
mkdir -p "$T/star/db"; cp "$S/crm/tasks.bson" "$T/star/db/a*b.bson"; cp "$S/crm/tasks.bson" "$T/star/db/axb.bson"
expect_eq "'\\*' matches only a star" "$("$REMODEL" inspect --json "$T/star" --nsInclude 'db.a\*b' |
    python3 -c 'import json,sys; print([n["collection"] for n in json.load(sys.stdin)["namespaces"]])')" "['a*b']"

# Every command that reads takes them: inspect, show, run, cat.
expect_eq "inspect --nsExclude" "$("$REMODEL" inspect "$S" --nsExclude '*.*s' | tail -1 | cut -d' ' -f1)" "2"
expect_eq "show --nsInclude" "$("$REMODEL" show "$S" --nsInclude 'logging.hosts' | wc -l)" 20
"$REMODEL" cat "$S" --nsInclude 'iot.*' >"$T/cat.archive"
expect_eq "cat --nsInclude" "$("$REMODEL" inspect "$T/cat.archive" | grep -c collection)" 1
"$REMODEL" run -q "$ROOT/dumps/plans/embed-tasks.json" --from "$S" --to "$T/run" --nsInclude 'crm.*'
expect_eq "run --nsInclude: only the selected namespaces, the plan applied" \
    "$(ls "$T/run" | tr '\n' ' ')$("$REMODEL" show "$T/run" --ns crm.people --limit 1 | grep -c '"tasks":')" "crm prelude.json 1"
run_rm run "$ROOT/dumps/plans/embed-tasks.json" --from "$S" --to "$T/run2" --nsExclude 'crm.tasks'
expect_eq "run: a plan reading an excluded namespace is refused" "$rc:$(grep -c 'crm.tasks' "$T/err")" "2:1"
# -v names each namespace written; --gzip is --compress gzip.
"$REMODEL" convert "$S" "$T/v.archive" -v --gzip --nsInclude 'blog.*' 2>"$T/err"
expect_eq "-v: a line per namespace" "$(grep -c ': [0-9]* document(s)$' "$T/err")" 2
expect_eq "--gzip: gzip output" "$(head -c 2 "$T/v.archive" | od -An -tx1 | tr -d ' ')" "1f8b"

# Errors: exit 2, nothing written.
for args in "--nsFrom crm.*" "--nsFrom crm.* --nsTo a.b" "--nsInclude a.\$b\$" \
            "--nsFrom \$a\$.\$b\$ --nsTo \$c\$.x" "--nsFrom \$a\$.\$a\$ --nsTo x.\$a\$" \
            "--nsFrom crm.tasks --nsTo nodot" "--nsFrom crm.* --nsTo same.coll"; do
    run_rm convert "$S" "$T/err.archive" $args
    expect_eq "refused ($args): exit 2, one line, nothing written" \
        "$rc:$(wc -l <"$T/err"):$(test -e "$T/err.archive" && echo written)" "2:1:"
done
