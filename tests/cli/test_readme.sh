#!/usr/bin/env bash
# The README's shell examples, run as written from a clone (see
# tests/transforms/readme_examples.py): exit statuses and the output shown.
#   REMODEL=build/remodel bash tests/cli/test_readme.sh
. "$(dirname "$0")/lib.sh"
python3 "$ROOT/tests/transforms/readme_examples.py" "$REMODEL" "$ROOT/README.md"
