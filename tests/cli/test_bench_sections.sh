#!/usr/bin/env bash
# The benchmarks keep BENCHMARKS.md short (issue 52: it had grown to 2,642
# lines of appended passes): every bench script writes its figures through
# scripts/bench/section.py, which puts them in BUILD/bench/NAME.md and
# replaces its own section of the report between its markers, never
# appending. Runs no benchmark and times nothing.
#   REMODEL=build/remodel bash tests/cli/test_bench_sections.sh
. "$(dirname "$0")/lib.sh"
SEC=$ROOT/scripts/bench/section.py

printf '# B\n\nprose before\n\n<!-- x: begin -->\nold figures\n<!-- x: end -->\n\nprose after\n' >"$T/report.md"
cp "$T/report.md" "$T/orig.md"
printf '| a |\n|---|\n| 1 |\n' >"$T/body"
python3 "$SEC" x "$T/body" "$T/report.md" "$T/build" 2>"$T/err"
expect_eq "the section between the markers is replaced, the prose kept" "$(cat "$T/report.md")" \
    "$(printf '# B\n\nprose before\n\n<!-- x: begin -->\n| a |\n|---|\n| 1 |\n<!-- x: end -->\n\nprose after')"
expect_eq "the figures are in BUILD/bench/NAME.md too" "$(cat "$T/build/bench/x.md")" "$(cat "$T/body")"
cp "$T/report.md" "$T/once.md"
python3 "$SEC" x "$T/body" "$T/report.md" "$T/build" 2>"$T/err"
check "a second run leaves the report as the first did (nothing appended)" cmp -s "$T/report.md" "$T/once.md"

python3 "$SEC" y "$T/body" "$T/report.md" "$T/build" 2>"$T/err"
check "a section without markers leaves the report as it is" cmp -s "$T/report.md" "$T/once.md"
expect_message "and says so" "has no <!-- y: begin -->"
check "its figures still go to BUILD" test -f "$T/build/bench/y.md"

cp "$T/orig.md" "$T/report.md"
python3 "$SEC" x "$T/body" - "$T/build" 2>"$T/err"
check "a report of - is not written" cmp -s "$T/report.md" "$T/orig.md"
BENCH_NOTE="A loaded machine." python3 "$SEC" x "$T/body" - "$T/build" 2>"$T/err"
expect_eq "BENCH_NOTE is said under the figures" "$(tail -n 1 "$T/build/bench/x.md")" "A loaded machine."

# Every script's sections have their markers in BENCHMARKS.md, and no
# bench script writes the report by itself.
names="remodel references floor expressions analyze analyze-scale server-side online cutover
    online-memory online-workers to-uri to-uri-window untuned"
for n in $names; do
    grep -q "^<!-- $n: begin -->$" "$ROOT/BENCHMARKS.md" && grep -q "^<!-- $n: end -->$" "$ROOT/BENCHMARKS.md" &&
        pass "BENCHMARKS.md has the markers of section $n" || fail "BENCHMARKS.md has the markers of section $n"
done
for s in bench bench_floor bench_expr bench_analyze bench_server_side bench_online bench_cutover \
    bench_online_memory bench_online_workers bench_to_uri bench_to_uri_window; do
    if grep -q 'section.py' "$ROOT/scripts/$s.sh"; then pass "scripts/$s.sh writes through section.py"
    else fail "scripts/$s.sh writes through section.py"; fi
done
if grep -n 'open(\(out\|path\|o\.out\), *"w")\|>> *"\$OUT"\|> *"\$OUT"' "$ROOT"/scripts/bench*.sh "$ROOT"/scripts/bench/*.py \
    >"$T/writers"; then
    fail "no bench script writes the report itself" "$(cat "$T/writers")"
else
    pass "no bench script writes the report itself"
fi
exit 0
