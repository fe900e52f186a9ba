#!/usr/bin/env bash
# --memory holds whatever the join's shape: one key with many children, a
# key shared by every parent, both sides huge (peak RSS measured, outputs
# checked); see tests/transforms/memory_shapes.py.
#   REMODEL=build/remodel bash tests/cli/test_memory.sh
. "$(dirname "$0")/lib.sh"

python3 "$ROOT/tests/transforms/memory_shapes.py" "$T/w"
st=$?
[ $st -eq 0 ] || [ $st -eq 1 ] || fail "memory shapes" "memory_shapes.py exited with status $st"
