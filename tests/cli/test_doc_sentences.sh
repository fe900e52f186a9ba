#!/usr/bin/env bash
# The documents a newcomer reads first stay readable (issue 52: the docs
# read as lab notebooks, docs/online.md at a median sentence of 49 words):
# the README, the guides (docs/guide-*.md), docs/tests.md, docs/online.md
# and docs/online-servers.md have a median sentence of at most 25 words,
# counted by tests/cli/sentences.py (see there what counts as prose); a
# guide is under 300 lines, and so are BENCHMARKS.md and
# docs/online-servers.md; docs/online.md, the online mode's concepts and
# guarantees, is under 700.
#   REMODEL=build/remodel bash tests/cli/test_doc_sentences.sh
. "$(dirname "$0")/lib.sh"
MAX=25

# median FILE: passes when FILE's median sentence is at most $MAX words.
median() {
    local out
    if [ ! -f "$ROOT/$1" ]; then fail "$1 exists"; return; fi
    if out=$(python3 "$ROOT/tests/cli/sentences.py" --max "$MAX" "$ROOT/$1"); then
        pass "$1: median sentence ${out%% *} words (at most $MAX)"
    else
        fail "$1: median sentence at most $MAX words" "${out%% *} words"
    fi
}
# lines FILE MAX: passes when FILE has fewer than MAX lines.
lines() {
    local n
    n=$(wc -l <"$ROOT/$1")
    if [ "$n" -lt "$2" ]; then pass "$1: $n lines (under $2)"
    else fail "$1: under $2 lines" "$n lines"; fi
}

guides=0
for f in "$ROOT"/docs/guide-*.md; do
    [ -f "$f" ] || continue
    guides=$((guides + 1))
    median "docs/${f##*/}"
    lines "docs/${f##*/}" 300
done
# The three guides of issue 52: offline, online, analyze.
for g in offline online analyze; do
    [ -f "$ROOT/docs/guide-$g.md" ] && pass "docs/guide-$g.md exists" || fail "docs/guide-$g.md exists"
done
median docs/tests.md
median README.md
lines BENCHMARKS.md 300
median docs/online.md
lines docs/online.md 700
median docs/online-servers.md
lines docs/online-servers.md 300

# The measure itself: a long sentence is long, code and tables are no prose,
# and a sentence ends at . ! ? or the end of a list item.
long="One two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty twenty-one twenty-two twenty-three twenty-four twenty-five twenty-six."
printf '%s\n' "$long" >"$T/long.md"
python3 "$ROOT/tests/cli/sentences.py" --max "$MAX" "$T/long.md" >/dev/null &&
    fail "a sentence of 26 words is over the limit" || pass "a sentence of 26 words is over the limit"
printf 'Short.\n\n```\n%s\n```\n\n| %s |\n' "$long" "$long" >"$T/code.md"
expect_eq "code blocks and tables are not counted" \
    "$(python3 "$ROOT/tests/cli/sentences.py" "$T/code.md" | cut -d' ' -f1,3)" "1 1"
printf 'Short one. Another short one!\n\n- an item, e.g. this, is one sentence\n' >"$T/short.md"
expect_eq "sentences end at . ! and an item's end" \
    "$(python3 "$ROOT/tests/cli/sentences.py" "$T/short.md" | cut -d' ' -f3)" 3
exit 0
