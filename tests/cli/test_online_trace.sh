#!/usr/bin/env bash
# REMODEL_ONLINE_TRACE's lines (shell-ext/conn/online_say.c, issue 53), on
# both servers, from a run in two partitions (two workers' replies):
#   1. each line is "trace: at T ms took D ms DB: COMMAND", T the
#      milliseconds since the program started, D the call's own duration;
#   2. T never goes back from a line to the next, and grows over the run;
#      no call took longer than the time since the start (T >= D);
#   3. the lines other suites read are still there (the run's first write
#      of the plan's record, its finds) and nothing else changed: the same
#      run without the variable says the same lines, none of them a trace.
#   REMODEL=build/remodel bash tests/cli/test_online_trace.sh
. "$(dirname "$0")/lib.sh"
# Its plain servers may be the run's shared ones (lib.sh, online_take).
ONLINE_SHARE=1
use_peers "peers" || exit 0
trap '[ "$BASHPID" != "$$" ] || { for d in ferretdb java; do "$SERVER" stop "$T/$d" >/dev/null 2>&1; done; rm -rf "$T"; }' EXIT
mkdir -p "$T/plans"

# trace_check FILE: "ok N" when every trace line of FILE has its two
# figures in order (N lines), else what is wrong with the first that has not.
trace_check() {
    python3 - "$1" <<'PY'
import re, sys
form = re.compile(r'^trace: at +(\d+\.\d) ms took +(\d+\.\d) ms [^ :]+: ')
lines = [l for l in open(sys.argv[1]) if l.startswith("trace: ")]
last = None
for l in lines:
    m = form.match(l)
    if not m:
        sys.exit("not of the form: " + l.strip()[:200])
    at, took = float(m.group(1)), float(m.group(2))
    if last is not None and at < last:
        sys.exit("went back from %.1f to %.1f: %s" % (last, at, l.strip()[:200]))
    if took > at + 0.1:
        sys.exit("took %.1f ms, %.1f ms after the start: %s" % (took, at, l.strip()[:200]))
    last = at
first = float(form.match(lines[0]).group(1)) if lines else 0
print("ok %d" % len(lines) if lines and last > first else "too few lines or no time passed")
PY
}

for kind in $(online_kinds); do
    online_start $kind "$T/$kind" || continue
    python3 "$ROOT/tests/transforms/mixed_ids.py" "$uri" t1 10 >/dev/null
    kids_plan traced t1
    kids_plan plain t1

    REMODEL_ONLINE_TRACE=1 online run traced --partitions 2 --batch-size 10 --create-indexes
    got=$(trace_check "$T/err")
    expect_eq "$kind: a traced run in two partitions: exit 0, every trace line timed, in order" \
        "$rc:${got%% *}" "0:ok"
    expect_eq "$kind: ... the lines the suites read are there" \
        "$(grep -c '^trace: .*"update" : "plans"' "$T/err" | sed 's/^[1-9][0-9]*$/some/'):$(grep -c '^trace: .*"find" : "kids"' "$T/err" | sed 's/^[1-9][0-9]*$/some/')" \
        "some:some"
    grep -v '^trace: ' "$T/err" | sed 's/_remodel_traced_[0-9a-f]*/_R/g' >"$T/said-traced"

    online run plain --partitions 2 --batch-size 10 --create-indexes
    sed 's/_remodel_plain_[0-9a-f]*/_R/g' "$T/err" >"$T/said-plain"
    expect_eq "$kind: the same run untraced: exit 0, no trace line" \
        "$rc:$(grep -c '^trace: ' "$T/err")" "0:0"
    expect_eq "$kind: ... the other lines the traced run's" \
        "$(sed 's/[0-9][0-9.]*/N/g' "$T/said-plain" | sort)" "$(sed 's/[0-9][0-9.]*/N/g' "$T/said-traced" | sort)"
    "$SERVER" stop "$T/$kind" >/dev/null 2>&1
done
