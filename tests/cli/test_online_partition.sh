#!/usr/bin/env bash
# A driving collection's partitions on the servers themselves (issue 37,
# item 1; shell-ext/state/online_partition.c): _ids of seven BSON types
# (int, long, double, string, ObjectId, date, binary) and the rarer ones
# each server stores (null, NaN, a document, a bool, a timestamp; MinKey,
# MaxKey, decimal and a symbol on mongo-java-server), eight partitions
# from a sample of every other one: each partition's filter run by the
# server, and its reader keeping what the partition holds, every _id
# comes back exactly once (the unit test's binary, given the URI: it
# reads the filters as MongoDB matches them, this as each server does;
# mongo-java-server sorts a NaN above every number, which a range "up to
# a number" had lost).
#   REMODEL=build/remodel bash tests/cli/test_online_partition.sh
. "$(dirname "$0")/lib.sh"
# Its plain servers may be the run's shared ones (lib.sh, online_take).
ONLINE_SHARE=1
use_peers "peers" || exit 0
trap '[ "$BASHPID" != "$$" ] || { for d in ferretdb java; do "$SERVER" stop "$T/$d" >/dev/null 2>&1; done; rm -rf "$T"; }' EXIT
bin=$(dirname "$REMODEL")/tests/test_online_partition
[ -x "$bin" ] || { fail "partition: $bin" "not built (make unit)"; exit 0; }

for kind in $(online_kinds); do
    online_start "$kind" "$T/$kind" || continue
    "$bin" "$uri" 2>"$T/err" | sed "s/^\(PASS\|FAIL\) /\1 $kind: /"
    if [ -s "$T/err" ]; then sed 's/^/  /' "$T/err" >&2; fi
done
exit 0
