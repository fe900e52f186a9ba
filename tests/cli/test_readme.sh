#!/usr/bin/env bash
# The README's shell examples, run as written from a clone (see
# tests/transforms/readme_examples.py): exit statuses and the output shown;
# and the man pages' examples (docs/*.md): their exit statuses.
#   REMODEL=build/remodel bash tests/cli/test_readme.sh
. "$(dirname "$0")/lib.sh"
python3 "$ROOT/tests/transforms/readme_examples.py" "$REMODEL" "$ROOT/README.md"
for page in "$ROOT"/docs/*.[0-9].md; do
    python3 "$ROOT/tests/transforms/readme_examples.py" --bare "$REMODEL" "$page"
done
