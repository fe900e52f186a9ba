#!/usr/bin/env bash
# The option layer (issue 22, "one option layer"; issue 25, abbreviations),
# as remodel, remodel analyze, remodel compile and remodel online meet it,
# with no server:
#  - a long option is named in full: an abbreviation or a typo is refused
#    naming the nearest option the command takes, never read as it;
#  - --opt=value and --opt value; durations with units (--pause 50ms,
#    --retry-for 10m) and today's bare numbers (--pause-ms 20);
#  - an option another command takes is refused naming this command;
#  - --ns: a pattern in show as in analyze;
#  - one exit status map: 2 a refusal, 1 a failure, 0 --help;
#  - a name from the data in an error is escaped by remodel online as by
#    remodel (a control byte as \x1b).
#   REMODEL=build/remodel bash tests/cli/test_options.sh
. "$(dirname "$0")/lib.sh"
S=$ROOT/dumps/sample
ONLINE=$(dirname "$REMODEL")/remodel-online
echo '{"remodel": 1, "steps": [{"set": {"in": "a.b", "fields": {"x": 1}}}]}' >"$T/p.json"
NOWHERE=mongodb://127.0.0.1:1/ # refused at once: no traffic leaves the machine

# refused NAME WANT ARGS...: remodel ARGS exits 2 with the one line
# "remodel: error: WANT", and writes nothing.
refused() {
    local n=$1 want=$2
    shift 2
    (cd "$T" && mkdir -p w && cd w && "$REMODEL" "$@" >"$T/out" 2>"$T/err")
    rc=$?
    expect_eq "$n: exit 2, the one line" "$rc:$(cat "$T/err")" "2:remodel: error: $want"
    expect_eq "$n: nothing written" "$(ls -A "$T/w")" ""
}

# Abbreviations and typos: getopt_long read --form as --format.
refused "run --form: not --format" 'unknown option "--form" (did you mean "--format"?)' \
    run "$T/p.json" --form dir --from "$S" --to x
refused "convert --forc" 'unknown option "--forc" (did you mean "--force"?)' convert "$S" x.archive --forc
refused "analyze --plan: not --plan-out" 'unknown option "--plan" (did you mean "--plan-out"?)' \
    analyze "$S" --plan p.json
# Longer than the name, one dash, a value of a list (issue 34).
refused "analyze --plan-output: --plan-out" 'unknown option "--plan-output" (did you mean "--plan-out"?)' \
    analyze "$S" --plan-output p.json
refused "analyze -plan-out: one dash" 'unknown option "-plan-out" (did you mean "--plan-out"?)' \
    analyze "$S" -plan-out p.json
refused "run -dry-run: one dash" 'unknown option "-dry-run" (did you mean "--dry-run"?)' \
    run "$T/p.json" --from "$S" -dry-run
refused "convert --format archve" '--format: expected archive, dir, tar or bson, got "archve" (did you mean "archive"?)' \
    convert "$S" x --format archve
refused "inspect --bogus: nothing near" 'unknown option "--bogus" (see remodel inspect --help)' inspect "$S" --bogus
refused "show --thread: only show's own are suggested" 'unknown option "--thread" (see remodel show --help)' \
    show "$S" --thread 2
refused "a flag with a value" 'option "--dry-run" takes no value (see remodel run --help)' \
    run "$T/p.json" --from "$S" --to x --dry-run=yes
refused "a value missing" 'option "--to" needs a value (see remodel run --help)' run "$T/p.json" --from "$S" --to
refused "--threads=0" '--threads: expected a number from 1 to 256, got "0"' convert "$S" x.archive --threads=0
refused "--format=xml" '--format: expected archive, dir, tar or bson, got "xml"' convert "$S" x.archive --format=xml
refused "diff --memory 1000 (under 1K)" '--memory: expected a size of at least 1K, like 64M or 2G, got "1000"' \
    diff "$S" "$S" --memory 1000
refused "an option of another command" \
    'option "--stats-json" is not one of remodel convert'"'"'s (see remodel convert --help)' convert "$S" x.archive --stats-json s.json

# --server-version (issue 25, item 10): run's and check's too, read by
# compile's reader; not convert's.
refused "run --server-version nine" '--server-version: "nine" is not a MongoDB version like 5.0 (3.6 or later)' \
    run "$T/p.json" --from "$S" --to x --server-version nine
refused "convert --server-version: not one of convert's" \
    'option "--server-version" is not one of remodel convert'"'"'s (see remodel convert --help)' \
    convert "$S" x.archive --server-version 9.0
run_rm convert "$S" "$T/x.archive" --threads=2 --compress=zstd:3 -q
expect_eq "convert --threads=2 --compress=zstd:3: taken (exit 0)" "$rc:$(cat "$T/err")" "0:"
echo '{"remodel": 1, "steps": [{"set": {"in": "crm.people", "fields": {"x": 1}}}]}' >"$T/crm.json"
run_rm run "$T/crm.json" --from="$S" --to="$T/y.archive" --memory=64M --dry-run -q
expect_eq "run --from=SRC --to=DST --memory=64M: taken" "$rc" 0
run_rm run "$T/crm.json" --from "$S" --dry-run -q --server-version=9.0
expect_eq "run --server-version=9.0: taken" "$rc" 0
run_rm check "$T/crm.json" --against "$S" -q --server-version 7.0
expect_eq "check --against --server-version 7.0: taken" "$rc" 0

# --ns, a pattern in show as in analyze (a name without a star is itself).
run_rm show "$S" --ns 'crm.*' --limit 1
expect_eq "show --ns 'crm.*': each crm collection's first document under its header" \
    "$(grep -c '^==> crm\.' "$T/out"):$(grep -c '^{' "$T/out")" "2:2"
run_rm show "$S" --ns crm.people --limit 1
expect_eq "show --ns crm.people: that one, no header" "$(wc -l <"$T/out")" 1
run_rm show "$S" --ns 'nodb.*'
expect_eq "show --ns matching nothing: exit 2, saying so" \
    "$rc:$(grep -c -- '--ns nodb.\*: no such namespace in the dump' "$T/err")" "2:1"

# Exit statuses: --help 0, a missing source 1, a refusal 2.
run_rm inspect --help
expect_eq "inspect --help: exit 0, the usage on stdout" "$rc:$(head -n 1 "$T/out" | cut -d" " -f1-3)" "0:usage: remodel inspect"
run_rm inspect "$T/no-such-dump"
expect_eq "inspect of nothing: exit 1" "$rc" 1

if [ ! -x "$ONLINE" ]; then
    fail "remodel-online built beside remodel (make, with libmongoc)"
    exit 0
fi
export MONGOC_DISABLE_SHM=1 # as remodel sets it for remodel-online
refused "online run --create-index: not --create-indexes" \
    'unknown option "--create-index" (did you mean "--create-indexes"?)' online run "$T/p.json" --create-index
refused "online run --pause-m: not --pause-ms" \
    'unknown option "--pause-m" (did you mean "--pause-ms"?)' online run "$T/p.json" --pause-m 5
refused "online status --batch-size: run's, not status's" \
    'option "--batch-size" is not one of remodel online status'"'"'s (see remodel online status --help)' \
    online status "$T/p.json" --uri "$NOWHERE" --batch-size 5
refused "online finalize --restart" \
    'option "--restart" is not one of remodel online finalize'"'"'s (see remodel online finalize --help)' \
    online finalize "$T/p.json" --writes-stopped --restart
refused "online run --pause soon" \
    '--pause: expected a duration like 50ms, 2s, 10m or 1h (a bare number: milliseconds), got "soon"' \
    online run "$T/p.json" --pause soon
refused "online run --pause-ms 5x (the older name, named as given)" \
    '--pause-ms: expected a duration like 50ms, 2s, 10m or 1h (a bare number: milliseconds), got "5x"' \
    online run "$T/p.json" --pause-ms 5x
refused "online run --retry-for 10y" \
    '--retry-for: expected a duration like 50ms, 2s, 10m or 1h (a bare number: seconds), got "10y"' \
    online run "$T/p.json" --retry-for 10y
refused "online run --log-format xml" '--log-format: expected text or json, got "xml"' \
    online run "$T/p.json" --log-format xml
refused "online run --log-format jsn" '--log-format: expected text or json, got "jsn" (did you mean "json"?)' \
    online run "$T/p.json" --log-format jsn
refused "online finalize --writes-stoped" \
    'unknown option "--writes-stoped" (did you mean "--writes-stopped"?)' online finalize "$T/p.json" --writes-stoped
refused "online run --batch-size-docs" \
    'unknown option "--batch-size-docs" (did you mean "--batch-size"?)' online run "$T/p.json" --batch-size-docs 5
refused "compile --format dir: compile's own values" '--format: expected pipeline, mongosh, views or validators, got "dir"' \
    compile "$T/p.json" --format dir
refused "compile --formt" 'unknown option "--formt" (did you mean "--format"?)' compile "$T/p.json" --formt mongosh
# Taken: the refusal comes from the server that is not there (exit 1).
for opts in "--pause 50ms --retry-for 0s" "--pause=50ms --retry-for=0" "--pause-ms 20 --retry-for 0 --batch-time 2s" \
            "--batch-time=1500ms --retry-for 0m --write-concern majority"; do
    # shellcheck disable=SC2086
    run_rm online run "$T/p.json" --uri "$NOWHERE" $opts
    expect_eq "online run $opts: taken; the server unreachable (exit 1)" \
        "$rc:$(grep -c 'cannot reach the server' "$T/err")" "1:1"
done
for c in verify sync finalize follow; do
    run_rm online $c "$T/p.json" --uri "$NOWHERE" --server-version 9.0 --retry-for 0
    expect_eq "online $c --server-version 9.0: taken; the server unreachable (exit 1)" \
        "$rc:$(grep -c 'cannot reach the server' "$T/err")" "1:1"
done
refused "online status --server-version: not one of status's" \
    'option "--server-version" is not one of remodel online status'"'"'s (see remodel online status --help)' \
    online status "$T/p.json" --server-version 9.0
run_rm compile "$T/p.json" --format=mongosh --server-version=4.0
expect_eq "compile --format=mongosh --server-version=4.0: exit 0, a script" "$rc:$(grep -c . "$T/out" | sed 's/^[1-9][0-9]*$/some/')" "0:some"
run_rm online run --help
expect_eq "online run --help: exit 0" "$rc:$(grep -c -- '--pause D' "$T/out")" "0:1"

# A name from the plan in an error: escaped by both programs alike.
printf '{"remodel": 1, "steps": [{"set": {"in": "nodot\\u001b", "fields": {"x": 1}}}]}' >"$T/esc.json"
run_rm check "$T/esc.json"
offline=$(cat "$T/err")
expect_eq "remodel check: the control byte escaped, exit 2" \
    "$rc:$(grep -c 'nodot\\x1b' "$T/err"):$(grep -c $'\x1b' "$T/err")" "2:1:0"
run_rm online run "$T/esc.json" --uri "$NOWHERE"
expect_eq "remodel online run: the same line, escaped, exit 2" "$rc:$(cat "$T/err")" "2:$offline"
run_rm compile "$T/esc.json"
expect_eq "remodel compile: the same line, escaped, exit 2" "$rc:$(cat "$T/err")" "2:$offline"
