#!/usr/bin/env bash
# The shell examples of README.md and of the topic documents in docs/ (every
# docs/*.md but the man pages and HACKING.md), run as written from a clone,
# from the repository root (see tests/transforms/readme_examples.py): exit
# statuses and the output shown; and the man pages' examples (docs/*.[0-9].md):
# their exit statuses.
#   REMODEL=build/remodel bash tests/cli/test_readme.sh
. "$(dirname "$0")/lib.sh"
total=0
# examples FILE LEAST: runs FILE's examples; its last line says FAIL when
# fewer than LEAST ran. Adds the number run to $total.
examples() {
    local out n
    out=$(python3 "$ROOT/tests/transforms/readme_examples.py" --root "$ROOT" \
        --least "$2" "$REMODEL" "$1")
    printf '%s\n' "$out"
    n=$(printf '%s\n' "$out" | sed -n 's/^[A-Z]* .* examples run: \([0-9]*\)$/\1/p')
    total=$((total + ${n:-0}))
}
examples "$ROOT/README.md" 2
for doc in "$ROOT"/docs/*.md; do
    case ${doc##*/} in *.[0-9].md|HACKING.md) continue ;; esac
    # A document that shows a `$ remodel` command needing no server must run
    # at least one example (some show only server commands, make targets or
    # none at all).
    least=0
    grep '^\$ remodel ' "$doc" | grep -qv 'mongodb://' && least=1
    examples "$doc" "$least"
done
# Over README.md and the topic documents together (37 when they were split).
if [ "$total" -ge 30 ]; then pass "examples run in all: $total"
else fail "examples run in all: $total" "fewer than 30: examples no longer found?"; fi
for page in "$ROOT"/docs/*.[0-9].md; do
    python3 "$ROOT/tests/transforms/readme_examples.py" --bare "$REMODEL" "$page"
done
