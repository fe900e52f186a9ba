#!/usr/bin/env bash
# Runs every suite and ends with the failures, if any, and
# "N passed, N failed".
#   tests/run.sh BUILD [SANITIZE_BUILD]
# Unit suites are programs in BUILD/tests; command-line suites are
# tests/cli/*.sh, run with REMODEL=BUILD/remodel. Each prints PASS/FAIL lines.
# RUN_PARTS (default all): unit, cli (every command-line suite) or online
# (those that start a server: test_online*, test_compile*, test_servers,
# test_mem_server).
# RUN_ONLY: only the suites whose name holds it, or any of its words
# (make check T=NAME, T='NAME NAME').
# Each suite's seconds go to BUILD/timings.txt; RUN_RECORD=1 (make
# check-timings) also lowers or adds them in the recorded figures,
# tests/timings.txt, by which the server suites start longest first and a
# suite far over its figure fails (docs/tests.md, "How long").
# RUN_TIMINGS (the recorded file) and RUN_SUITES (the command-line suites'
# directory; peers are installed only for tests/cli) are for
# tests/cli/test_run_timings.sh.
# RUN_SHARE (default 1; 0: none): the server suites that allow it share
# their pool slot's servers (below; docs/tests.md, "Shared servers").
# RUN_CPU=1: each suite's CPU seconds too, its servers' included (below).
set -u
shopt -s extglob
cd "$(dirname "$0")/.."
build=${1:-build}
sanbuild=${2:-}
log=$(mktemp -d)
# Every process the run starts carries its mark in its environment
# (REMODEL_RUN_MARK, this run's own directory), the shared servers
# excepted: at the end, whatever is still running with it (on an
# interrupt, the suites of the pool and the lane and all they started)
# is stopped, then the pool's shared servers (below), then the run's
# files are gone (the EXIT trap; an interrupt ends the run).
export REMODEL_RUN_MARK=$log
trap 'run_sweep; shared_stop; cpu_stop; rm -rf "$log"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP
timings=${RUN_TIMINGS:-tests/timings.txt}
suitedir=${RUN_SUITES:-tests/cli}
record=${RUN_RECORD:-}
case $record in ''|0|1) ;; *) echo "tests/run.sh: RUN_RECORD is 1 or unset, not $record" >&2; exit 2 ;; esac

# python3 by its own path, not a version manager's shim (tests/python.sh).
. tests/python.sh

parts=${RUN_PARTS:-all}
only=${RUN_ONLY:-}
# wanted PART NAME: whether the suite NAME of PART is to run.
wanted() {
    case $parts in
        all) ;;
        unit) [ "$1" == unit ] || return 1 ;;
        cli) [ "$1" == cli ] || return 1 ;;
        online) [ "$1" == cli ] || return 1
                case $2 in test_online* | test_compile* | test_servers | test_mem_server) ;; *) return 1 ;; esac ;;
        *) echo "tests/run.sh: RUN_PARTS is unit, cli or online, not $parts" >&2; exit 2 ;;
    esac
    [ -z "$only" ] && return 0
    local w
    for w in $only; do [[ $2 == *"$w"* ]] && return 0; done
    return 1
}
# The recorded seconds of each suite, by name ("cli test_online"): the
# file's lines are the name, then the seconds, whole; # starts a comment.
declare -A recorded=()
if [ -f "$timings" ]; then
    while read -r line; do
        line=${line%%#*}
        [[ $line =~ ^(.*[^[:space:]])[[:space:]]+([0-9]+)[[:space:]]*$ ]] &&
            recorded[${BASH_REMATCH[1]}]=${BASH_REMATCH[2]}
    done <"$timings"
fi
# A suite fails its budget when it takes more than twice its recorded
# seconds AND more than 120 s over them. Twice: this 2-core machine is
# shared, and load alone doubles a suite's time (BENCHMARKS.md: single runs
# vary by a factor of two), more than that is a suite that grew or a wait
# that now runs to its deadline. 120 s over: the short suites vary most in
# ratio (a server's start, a JVM's warm-up, a second of rounding on a 2 s
# suite) while costing the total nothing; a suite must lose two minutes to
# matter to make check's length, and a regression that size is what the
# budget is for. RUN_BUDGET_FLOOR changes the 120 (the budget's own test).
# Both scale with the machine's load when the suite ends: times the load
# average per core, when that is over 1 (a suite waits its turn for a core
# as much longer), so a busy machine stretches a suite without failing it,
# and a quiet one keeps the budget whole. The load is the highest of the
# 1, 5 and 15 minute averages: a long suite that ran at a load of 20 and
# ended at 8 was stretched by the 20. RUN_LOAD sets the load (the
# budget's own test).
floor=${RUN_BUDGET_FLOOR:-120}
case $floor in [0-9] | [1-9][0-9]*) ;; *) echo "tests/run.sh: RUN_BUDGET_FLOOR is whole seconds, not $floor" >&2; exit 2 ;; esac
# over_budget NAME SECS RECORDED: a FAIL line, counted, when over.
over_budget() {
    local load=${RUN_LOAD:-} cores f l5 l15
    if [ -z "$load" ]; then
        read -r load l5 l15 _ </proc/loadavg 2>/dev/null || load=0
        load=$(awk -v a="$load" -v b="${l5:-0}" -v c="${l15:-0}" 'BEGIN { m = a; if (b > m) m = b; if (c > m) m = c; print m }')
    fi
    cores=$(nproc 2>/dev/null || echo 1)
    # f: the load per core in hundredths, 100 at least.
    f=$(awk -v l="$load" -v c="$cores" 'BEGIN { f = int(l * 100 / c); print (f < 100 ? 100 : f) }')
    if [ "$2" -gt $(($3 * 2 * f / 100)) ] && [ "$2" -gt $((($3 + floor) * f / 100)) ]; then
        echo "FAIL $1: took $2 s, over twice its recorded $3 s and $floor s over it, at a load of $load on $cores cores ($timings)"
        echo 1 >>"$log/fails"
        echo "$1: FAIL took $2 s, recorded $3 s" >>"$log/faillines"
    fi
}
# RUN_CPU=1: each suite runs in a control group of its own (cgroup v1's
# cpuacct, where this user may make one), which every process it starts
# stays in, servers and daemons too, so that its CPU seconds are all
# counted: on two cores a run's length is its CPU. A pool slot's shared
# servers count to the suite that started them.
cpu_root=
if [ "${RUN_CPU:-}" == 1 ]; then
    cpu_root=/sys/fs/cgroup/cpuacct/remodel-run.$$
    mkdir -p "$cpu_root" 2>/dev/null || {
        echo "tests/run.sh: RUN_CPU=1 needs a cpuacct control group it may make ($cpu_root)" >&2
        exit 2
    }
fi
# cpu_stop: the run's control groups removed, once their last processes
# (the shared servers, just stopped) are gone; 10 s at most each.
cpu_stop() {
    local d i
    [ -n "${cpu_root:-}" ] || return 0
    for d in "$cpu_root"/suite.*; do
        [ -d "$d" ] || continue
        for ((i = 0; i < 100; i++)); do
            [ -z "$(cat "$d/cgroup.procs" 2>/dev/null)" ] && break
            sleep 0.1
        done
        rmdir "$d" 2>/dev/null
    done
    rmdir "$cpu_root" 2>/dev/null
    return 0
}
# exec_suite DIR COMMAND...: runs a suite, its output, status and seconds
# in DIR (out, err, rc, secs; secs last, whole, once the rest is written;
# with RUN_CPU=1, cpu before them).
exec_suite() {
    local dir=$1 t0=$SECONDS cg=; shift
    mkdir -p "$dir"
    if [ -n "$cpu_root" ]; then
        cg=$(mktemp -d "$cpu_root/suite.XXXXXX")
        set -- bash -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$cg" "$@"
    fi
    "$@" >"$dir/out" 2>"$dir/err"
    echo $? >"$dir/rc"
    if [ -n "$cg" ]; then
        awk '{printf "%.1f\n", $1 / 1e9}' "$cg/cpuacct.usage" >"$dir/cpu"
        # Left when a process of the suite outlives it (a shared server).
        rmdir "$cg" 2>/dev/null
    fi
    echo $((SECONDS - t0)) >"$dir/secs.new" && mv "$dir/secs.new" "$dir/secs"
}
# report_suite NAME DIR: prints what exec_suite kept and counts it.
report_suite() {
    local name=$1 dir=$2 rc secs
    rc=$(cat "$dir/rc")
    echo "$name" >>"$log/reported"
    echo "== $name"
    cat "$dir/out"
    # How long, against its recorded figure (docs/tests.md, "How long").
    secs=$(cat "$dir/secs")
    printf '%s %s\n' "$name" "$secs" >>"$log/measured"
    local cpu=
    if [ -f "$dir/cpu" ]; then
        cpu=", $(cat "$dir/cpu") CPU s"
        printf '%s %s\n' "$(cat "$dir/cpu")" "$name" >>"$log/cpu"
    fi
    if [ -n "${recorded[$name]:-}" ]; then
        echo "-- $name: $secs s$cpu (recorded ${recorded[$name]} s)"
        over_budget "$name" "$secs" "${recorded[$name]}"
    else
        echo "-- $name: $secs s$cpu (not recorded)"
    fi
    if grep -q '^FAIL ' "$dir/out" || [ "$rc" -ne 0 ]; then
        sed 's/^/    /' "$dir/err" | tail -40
    fi
    # Only a suite that passed whole is a figure to record: one that
    # stopped early would lower its figure to its failure's.
    grep -q '^FAIL ' "$dir/out" || [ "$rc" -ne 0 ] || printf '%s %s\n' "$name" "$secs" >>"$log/passed"
    grep -c '^PASS ' "$dir/out" >>"$log/passes" || true
    grep -c '^FAIL ' "$dir/out" >>"$log/fails" || true
    grep '^FAIL ' "$dir/out" | sed "s/^/$name: /" >>"$log/faillines" || true
    if [ "$rc" -ne 0 ] && ! grep -q '^FAIL ' "$dir/out"; then
        echo "FAIL $name (exit $rc, no result lines)"
        echo 1 >>"$log/fails"
        echo "$name: FAIL exit $rc, no result lines" >>"$log/faillines"
    fi
    rm -rf "$dir"
}
# run_suite NAME COMMAND...: runs it here and now. In the lane (below),
# its report goes to the lane's next block, which the main shell prints.
lane_blocks=
lane_count=0
run_suite() {
    local name=$1; shift
    exec_suite "$log/suite" "$@"
    if [ -n "$lane_blocks" ]; then
        report_suite "$name" "$log/suite" >"$lane_blocks/$lane_count.new"
        mv "$lane_blocks/$lane_count.new" "$lane_blocks/$lane_count"
        lane_count=$((lane_count + 1))
        # The main shell, in wait, prints it now (its trap below).
        kill -USR1 "$main_pid" 2>/dev/null
    else
        report_suite "$name" "$log/suite"
    fi
}

# The suites that start a server spend much of their time waiting on it
# (and on sleeps and polls of their own): RUN_JOBS of them (default 2) run
# at once, each in its own directory with its own servers on ports the
# kernel picks, reported in the order they started as each finishes (its
# "-- NAME: N s" is then the time it took beside others). They start
# longest first by their recorded seconds, those not recorded before all,
# so that the pool does not end with one long suite running alone. The
# rest, which keep a core busy, run one after another in a lane of their
# own beside the pool (below). RUN_JOBS=1: everything one after another,
# the server suites in their place.
jobs_max=${RUN_JOBS:-2}
case $jobs_max in [1-9]) ;; *) echo "tests/run.sh: RUN_JOBS is 1 to 9, not $jobs_max" >&2; exit 2 ;; esac
pool_names=() pool_next=0 lane_pid= lane_next=0

# Shared servers (issue 60): each slot of the pool (RUN_JOBS of them; with
# RUN_JOBS=1, the lane's one) has a directory, $log/slotN, where a plain
# FerretDB and a plain mongo-java-server are started at the first suite
# that asks for each and reused by the next suites of that slot, one at a
# time: a suite that set ONLINE_SHARE=1 takes them in online_start, which
# empties them first (tests/cli/lib.sh, online_take). The runner owns them
# (their watchdog watches it) and stops them at its end. Each suite of a
# slot carries a mark of its own, REMODEL_SHARED_SUITE, in its
# environment: before the next suite of the slot starts, whatever the last
# one left running (a background remodel, a writer) is killed by it, lest
# it write into the next suite's databases. Every server start of the run
# is counted (REMODEL_SERVER_STARTS) and the count printed at the end,
# with the CPU seconds the servers of each kind spent (REMODEL_SERVER_CPU,
# noted by tests/peers/server.sh at each stop).
share=${RUN_SHARE:-1}
case $share in 0|1) ;; *) echo "tests/run.sh: RUN_SHARE is 0 or 1, not $share" >&2; exit 2 ;; esac
export REMODEL_SERVER_STARTS=$log/starts REMODEL_SERVER_CPU=$log/server_cpu
slot_mark=()
# shared_env SLOT NAME: senv, the environment the suite NAME of SLOT gets
# (none when not sharing), after the last one's leftovers are killed; its
# mark recorded.
senv=()
shared_env() {
    senv=()
    [ "$share" == 1 ] || return 0
    shared_sweep "$1"
    slot_mark[$1]=$log/slot$1/$2
    senv=("REMODEL_SHARED_DIR=$log/slot$1" "REMODEL_SHARED_OWNER=$$" "REMODEL_SHARED_SUITE=${slot_mark[$1]}")
}
# shared_sweep SLOT: the processes that carry the mark of SLOT's last
# suite, killed (the suite has ended: they are its leftovers). The servers
# are started without it (online_take).
shared_sweep() {
    local m=${slot_mark[$1]:-} p w killed=()
    [ -n "$m" ] || return 0
    for p in $(marked "REMODEL_SHARED_SUITE=$m"); do
        kill -9 "$p" 2>/dev/null && killed+=("$p")
    done
    # Gone (or a zombie, which writes nothing) before the next suite
    # starts; 30 s at most.
    for p in ${killed[@]+"${killed[@]}"}; do
        for ((w = 0; w < 300; w++)); do
            [ -e "/proc/$p" ] && [ "$(sed 's/.*) //' "/proc/$p/stat" 2>/dev/null | cut -d' ' -f1)" != Z ] || break
            sleep 0.1
        done
    done
    return 0
}
# marked MARK: the processes, this shell and its own subshell aside,
# that carry MARK in their environment.
marked() {
    local f p
    for f in $(grep -lzxF "$1" /proc/[0-9]*/environ 2>/dev/null); do
        p=${f#/proc/}; p=${p%/environ}
        [ "$p" != $$ ] && [ "$p" != $BASHPID ] && echo "$p"
    done
    return 0
}
# run_sweep: the runner's own background shells ended (the lane and the
# pool's: forked, not started anew, they lack the mark, and the lane
# would start its next suite), then the processes that carry the run's
# mark asked to end (a suite's EXIT trap then stops its own servers),
# and killed when any is still there 10 s later.
run_sweep() {
    local m="REMODEL_RUN_MARK=$log" p w left
    for p in $(jobs -p); do kill -TERM "$p" 2>/dev/null; done
    for p in $(marked "$m"); do kill -TERM "$p" 2>/dev/null; done
    for ((w = 0; w < 100; w++)); do
        left=$(marked "$m")
        [ -n "$left" ] || return 0
        sleep 0.1
    done
    for p in $left; do kill -9 "$p" 2>/dev/null; done
    return 0
}
# shared_stop: every slot's leftovers killed and its servers stopped.
shared_stop() {
    local i d
    for i in "${!slot_mark[@]}"; do shared_sweep "$i"; done
    for d in "$log"/slot*/*/; do
        [ -f "$d/kind" ] && tests/peers/server.sh stop "$d" >/dev/null 2>&1
    done
    return 0
}
slot_of=()
# pool_slot: a slot whose last suite has finished (one is free when fewer
# than RUN_JOBS run).
pool_slot() {
    local i idx
    for ((i = 0; i < jobs_max; i++)); do
        idx=${slot_of[$i]:-}
        if [ -z "$idx" ] || [ "$idx" -lt "$pool_next" ] || [ -f "$log/pool$idx/secs" ]; then
            echo "$i"
            return
        fi
    done
    echo "tests/run.sh: no free slot" >&2
    echo 0
}
# pool_flush: reports the started suites that have finished, in order,
# up to the first still running, and the lane's finished blocks.
pool_flush() {
    while [ $pool_next -lt ${#pool_names[@]} ] && [ -f "$log/pool$pool_next/secs" ]; do
        report_suite "${pool_names[$pool_next]}" "$log/pool$pool_next"
        pool_next=$((pool_next + 1))
    done
    while [ -f "$log/lane/$lane_next" ]; do
        cat "$log/lane/$lane_next" && rm -f "$log/lane/$lane_next"
        lane_next=$((lane_next + 1))
    done
}
# pool_running: how many suites of the pool run (the lane is no pool job).
pool_running() {
    jobs -rp | grep -cvxF "${lane_pid:-none}"
}
# pool_suite NAME COMMAND...: runs it in the pool, once fewer than
# RUN_JOBS are running.
pool_suite() {
    local name=$1; shift
    while [ "$(pool_running)" -ge "$jobs_max" ]; do
        wait -n 2>/dev/null
        pool_flush
    done
    local slot idx=${#pool_names[@]}
    slot=$(pool_slot)
    slot_of[$slot]=$idx
    shared_env "$slot" "$idx"
    exec_suite "$log/pool$idx" env ${senv[@]+"${senv[@]}"} "$@" &
    pool_names+=("$name")
}
# pool_wait: every suite of the pool and the lane finished and reported.
pool_wait() {
    while [ -n "$(jobs -rp)" ]; do
        wait -n 2>/dev/null
        pool_flush
    done
    wait
    pool_flush
}

# Peer tools (bsondump, mongorestore, a server) are installed once and cached.
if [ "$parts" != unit ] && [ "$suitedir" == tests/cli ] && [ -x tests/peers/install.sh ]; then
    tests/peers/install.sh >"$log/peers" 2>&1 || { echo "peer install failed:"; tail -30 "$log/peers"; }
    [ -f tests/peers/env.sh ] && . tests/peers/env.sh
fi

# is_pooled NAME: whether the command-line suite NAME starts a server.
is_pooled() {
    case $1 in test_online* | test_compile* | test_servers | test_mem_server) return 0 ;; esac
    return 1
}
# sanitize_build: the sanitizer build, when RUN_SANITIZE_BUILD names the
# make target that makes it (make check: it builds here, in the lane, while
# the first server suites run, not before them all). A failed build is a
# FAIL line and no sanitizer suite.
sanitize_build() {
    [ -n "${RUN_SANITIZE_BUILD:-}" ] || return 0
    # A make of its own: the caller's -j and variables (JOBS=N), not its
    # jobserver, whose descriptors make hands only to lines that call $(MAKE).
    local flags=" ${MAKEFLAGS:-}"
    flags=${flags// --jobserver-auth=+([^ ])/}
    flags=${flags// --jobserver-fds=+([^ ])/}
    if MAKEFLAGS=$flags make --no-print-directory "$RUN_SANITIZE_BUILD" >"$log/sanbuild" 2>&1; then
        return 0
    fi
    {
        echo "== asan+ubsan build"
        tail -40 "$log/sanbuild" | sed 's/^/    /'
        echo "FAIL asan+ubsan build (make $RUN_SANITIZE_BUILD)"
    } >"$log/sanfail"
    if [ -n "$lane_blocks" ]; then
        mv "$log/sanfail" "$lane_blocks/$lane_count"
        lane_count=$((lane_count + 1))
    else
        cat "$log/sanfail"
    fi
    echo 1 >>"$log/fails"
    echo "asan+ubsan build: FAIL make $RUN_SANITIZE_BUILD" >>"$log/faillines"
    return 1
}
# The command-line suites run again under the sanitizers, and the fuzz
# corpora with their harnesses.
san_cli="fixtures errors transforms names plan_errors outputs diff preview stops memory checks
         roundtrip analyze analyze_patterns analyze_evidence run_threads"
san_fuzz="archive:reader bson:reader tar:reader compressed:reader dir:dir plan:plan metadata:metadata
          online:online config:config"
# san_wanted: whether any sanitizer suite is to run (the unit programs
# named after the plain build's, the sanitizer build being yet to make).
san_wanted() {
    local t
    for t in "$build"/tests/test_*; do wanted unit "$(basename "$t")" && return 0; done
    for t in $san_cli; do [ -f "$suitedir/test_$t.sh" ] && wanted cli "test_$t" && return 0; done
    for t in $san_fuzz; do wanted unit "fuzz_${t%%:*}" && return 0; done
    return 1
}
# run_lane: the suites that start no server, one after another: the unit
# tests, the layers, the other command-line suites (and, with RUN_JOBS=1,
# the server suites in their place), then the sanitizer build, its suites
# and the fuzz replays.
run_lane() {
    local t name pair harness
    for t in "$build"/tests/test_*; do
        [ -x "$t" ] && wanted unit "$(basename "$t")" && run_suite "unit $(basename "$t")" "$t"
    done
    # The layers by calls, on the objects just built (scripts/check_layers.sh).
    wanted unit check_layers && run_suite "layers check_layers" scripts/check_layers.sh "$build"
    for t in "$suitedir"/test_*.sh; do
        name=$(basename "$t" .sh)
        [ -f "$t" ] && wanted cli "$name" || continue
        if is_pooled "$name"; then
            [ "$jobs_max" -gt 1 ] && continue
            # RUN_JOBS=1: the lane is the one slot.
            shared_env 0 "$name"
            run_suite "cli $name" env ${senv[@]+"${senv[@]}"} REMODEL="$build/remodel" bash "$t"
            continue
        fi
        run_suite "cli $name" env REMODEL="$build/remodel" bash "$t"
    done
    [ -n "$sanbuild" ] || return 0
    san_wanted || return 0
    sanitize_build || return 0
    for t in "$sanbuild"/tests/test_*; do
        [ -x "$t" ] && wanted unit "$(basename "$t")" && run_suite "asan+ubsan unit $(basename "$t")" "$t"
    done
    for t in $san_cli; do
        t=$suitedir/test_$t.sh
        [ -f "$t" ] && wanted cli "$(basename "$t" .sh)" && run_suite "asan+ubsan cli $(basename "$t" .sh)" \
            env REMODEL="$sanbuild/remodel" REMODEL_SANITIZE=1 bash "$t"
    done
    # The fuzz corpus and every saved crash input, replayed under ASan and
    # UBSan (corpus NAME runs through the harness after the colon; see the
    # Makefile).
    for pair in $san_fuzz; do
        name=${pair%%:*} harness=${pair#*:}
        [ -x "$sanbuild/fuzz-replay/$harness" ] && wanted unit "fuzz_$name" && run_suite "asan+ubsan fuzz replay $name" \
            "$sanbuild/fuzz-replay/$harness" "$name" tests/fuzz/corpus/"$name" tests/fuzz/crashes/"$name"
    done
    return 0
}

if [ "$jobs_max" -gt 1 ]; then
    # The lane's signal that a block is whole ends the main shell's wait.
    main_pid=$$
    trap : USR1
    # The lane in the background, each suite's report a block of its own
    # in $log/lane (numbered, whole once renamed), printed by pool_flush.
    mkdir -p "$log/lane"
    (lane_blocks=$log/lane run_lane) &
    lane_pid=$!
    # The server suites, longest first: "SECONDS<TAB>PATH", the unrecorded
    # as the longest, ties by name.
    for t in "$suitedir"/test_*.sh; do
        name=$(basename "$t" .sh)
        [ -f "$t" ] && wanted cli "$name" && is_pooled "$name" &&
            printf '%s\t%s\n' "${recorded[cli $name]:-999999999}" "$t"
    done | LC_ALL=C sort -t$'\t' -k1,1nr -k2,2 | cut -f2 >"$log/order"
    mapfile -t pooled <"$log/order"
    for t in ${pooled[@]+"${pooled[@]}"}; do
        pool_suite "cli $(basename "$t" .sh)" env REMODEL="$build/remodel" bash "$t"
    done
    pool_wait
else
    run_lane
fi

# This run's seconds, for inspection (make check writes no tracked file).
if [ -s "$log/measured" ]; then
    mkdir -p "$build" && LC_ALL=C sort "$log/measured" >"$build/timings.txt"
fi
# RUN_CPU=1: the suites by CPU seconds, the most first.
if [ -s "$log/cpu" ]; then
    mkdir -p "$build" && sort -k1,1nr "$log/cpu" >"$build/cpu.txt"
fi
# RUN_RECORD=1: each suite's figure lowered to this run's or added, never
# raised (as scripts/complexity-allow.txt only shrinks: a suite that must
# take longer has its line raised by hand, in the commit that says why);
# only a suite that passed whole gives a figure. After a whole run (every
# part, no RUN_ONLY, the sanitizer build given) the lines of suites that
# did not run at all are dropped.
if [ "$record" == 1 ] && [ -s "$log/passed" ]; then
    whole=0
    [ "$parts" == all ] && [ -z "$only" ] && [ -n "$sanbuild" ] && whole=1
    declare -A ran=() seen=()
    while read -r line; do
        ran[${line% *}]=${line##* }
    done <"$log/passed"
    while read -r line; do
        seen[${line% *}]=1
    done <"$log/measured"
    {
        for n in "${!recorded[@]}"; do
            if [ -n "${ran[$n]:-}" ]; then
                [ "${ran[$n]}" -lt "${recorded[$n]}" ] && echo "$n ${ran[$n]}" || echo "$n ${recorded[$n]}"
            elif [ $whole -eq 0 ] || [ -n "${seen[$n]:-}" ]; then
                echo "$n ${recorded[$n]}"
            else
                echo "tests/run.sh: $n did not run: its line is dropped from $timings" >&2
            fi
        done
        for n in "${!ran[@]}"; do
            [ -n "${recorded[$n]:-}" ] || echo "$n ${ran[$n]}"
        done
    } | LC_ALL=C sort >"$log/timings.new"
    {
        echo "# Each suite's seconds in make check, recorded by RUN_RECORD=1 (make check-timings):"
        echo "# lowered by a faster run, never raised but by hand (docs/tests.md, \"How long\")."
        cat "$log/timings.new"
    } >"$log/timings.file"
    if cmp -s "$log/timings.file" "$timings"; then
        echo "tests/run.sh: $timings unchanged"
    else
        cp "$log/timings.file" "$timings" && echo "tests/run.sh: $timings updated"
    fi
fi

# The servers this run started, shared ones among them (a FerretDB start
# costs seconds under load; docs/tests.md, "Shared servers").
if [ -s "$log/starts" ]; then
    echo "tests/run.sh: $(grep -c . "$log/starts") server starts, $(grep -c " $log/slot" "$log/starts") of them shared"
    # The shared ones stopped now (not at the exit), so that theirs count.
    shared_stop
    [ ! -s "$log/server_cpu" ] || echo "tests/run.sh: the servers' CPU: $(awk '{ s[$1] += $2; n[$1]++ }
        END { for (k in s) { printf "%s%s %.0f s (%d stopped)", sep, k, s[k], n[k]; sep = ", " } }' \
        "$log/server_cpu")"
fi
[ -s "$log/reported" ] || echo "tests/run.sh: no suite of part $parts matches '$only'" >&2
passed=$(awk '{ n += $1 } END { print n + 0 }' "$log/passes" 2>/dev/null)
failed=$(awk '{ n += $1 } END { print n + 0 }' "$log/fails" 2>/dev/null)
passed=${passed:-0}; failed=${failed:-0}
# The failures again at the end: a log read from its tail (CI's) shows
# them beside the count, not hours of output above it.
if [ -s "$log/faillines" ]; then
    echo
    echo "failed:"
    sed 's/^/  /' "$log/faillines"
fi
echo
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
