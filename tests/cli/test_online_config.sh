#!/usr/bin/env bash
# The connection strings off the command line (issue 62 item 5): --config
# FILE (uri: and toUri: lines, as mongo-tools' --config) and
# MONGODB_TO_URI beside MONGODB_URI:
#  - a file's uri is the one connected to: a server at it answers status
#    (FerretDB), and one at no server fails naming its host, never the
#    password; quoted values read as plain ones;
#  - its toUri is --to-uri: run --drop, which needs --to-uri, is not
#    refused for the want of one; MONGODB_TO_URI the same;
#  - refused (exit 2), naming the file and line: an unknown key (password
#    named as the key, never its value), a line that is no "key: value",
#    an empty value, a key twice, uri both in the file and on the command
#    line; a file that cannot be read, naming it.
#   REMODEL=build/remodel bash tests/cli/test_online_config.sh
. "$(dirname "$0")/lib.sh"
mkdir -p "$T/plans"
kids_plan emb shop
P=$T/plans/emb.json
C=$T/remodel.yaml
# A server that is not there: the driver gives up at once.
NONE="mongodb://ann:s3cr3tA@127.0.0.1:1/?serverSelectionTimeoutMS=300&connectTimeoutMS=300"
NONE2="mongodb://bob:s3cr3tB@127.0.0.1:2/?serverSelectionTimeoutMS=300&connectTimeoutMS=300"
secrets() { grep -c -e s3cr3t "$T/out" "$T/err" | awk -F: '{s += $2} END {print s + 0}'; }

printf '# remodel online\nuri: "%s"\n' "$NONE" >"$C"
run_rm online status "$P" --config "$C"
expect_eq "--config: its uri connected to (exit 1), the host named, no password printed" \
    "$rc:$(grep -c '127.0.0.1:1' "$T/err"):$(secrets)" "1:1:0"

printf "uri: '%s'\ntoUri: %s\n" "$NONE" "$NONE2" >"$C"
run_rm online run "$P" --config "$C" --drop
expect_eq "--config's toUri is --to-uri: run --drop not refused for the want of one (exit 1, the source)" \
    "$rc:$(grep -c 'they need --to-uri' "$T/err"):$(grep -c 'the source (--uri)' "$T/err"):$(secrets)" "1:0:1:0"
MONGODB_URI=$NONE MONGODB_TO_URI=$NONE2 "$REMODEL" online run "$P" --drop >"$T/out" 2>"$T/err"
rc=$?
expect_eq "MONGODB_TO_URI is --to-uri where none is given (exit 1, the source), no password printed" \
    "$rc:$(grep -c 'they need --to-uri' "$T/err"):$(grep -c 'the source (--uri)' "$T/err"):$(secrets)" "1:0:1:0"

# refused: FILE CONTENT WANT...
refused() {
    local what=$1; shift
    printf '%b' "$1" >"$C"; shift
    run_rm online status "$P" --config "$C" "${@:2}"
    expect_eq "--config, $what: refused (exit 2)" "$rc" "2"
    expect_message "--config, $what: ... naming the file and line" "$1"
}
refused "an unknown key" 'uri: mongodb://127.0.0.1:1/\n\npassword: s3cr3tP\n' \
    "--config $C:3: unknown key \"password\" (the keys are uri and toUri)"
expect_eq "--config, an unknown key: ... its value never printed" "$(secrets)" "0"
refused "a line that is no key: value" '# x\nuri mongodb\n' "--config $C:2: not \"key: value\""
refused "an empty value" 'uri: ""\n' "--config $C:1: uri is empty"
refused "a key twice" "uri: mongodb://127.0.0.1:1/\nuri: mongodb://127.0.0.1:2/\n" \
    "--config $C:2: uri is given twice in the file"
refused "uri on the command line too" "uri: mongodb://127.0.0.1:1/\n" \
    "--config $C:1: uri is given on the command line too" --uri mongodb://127.0.0.1:2/
run_rm online status "$P" --config "$T/nothing.yaml"
expect_eq "--config, a file that is not there: refused (exit 2), naming it" \
    "$rc:$(grep -c "config $T/nothing.yaml: No such file" "$T/err")" "2:1"

# ---- a server at the file's uri ----
use_peers "peers" || exit 0
online_start ferretdb "$T/srv" 0 || exit 0
printf 'uri: %s\n' "$uri" >"$C"
run_rm online status "$P" --config "$C"
expect_eq "--config: a server at its uri answers status (exit 0), the plan not run there" \
    "$rc:$(grep -c 'not run' "$T/out" "$T/err" | awk -F: '{s += $2} END {print (s > 0)}')" "0:1"
"$SERVER" stop "$T/srv" >/dev/null 2>&1
