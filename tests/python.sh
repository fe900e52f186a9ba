# Sourced by tests/run.sh and tests/cli/lib.sh: python3 run by its own
# path. A version manager's shim (pyenv's) is a shell script that runs a
# dozen programs before the interpreter: about 0.1 s a call on an idle
# machine, over a second on a loaded one, and the suites call python3
# thousands of times. The directory of the interpreter the shim picks goes
# first on PATH, as the shim itself does for the program it runs; nothing
# changes where python3 is the interpreter itself. REMODEL_PYTHON: its path.
if ! [ "$(command -v python3)" -ef "${REMODEL_PYTHON:-/nonexistent}" ]; then
    REMODEL_PYTHON=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null) || REMODEL_PYTHON=
    case $REMODEL_PYTHON in
        /*) [ "$(command -v python3)" -ef "$REMODEL_PYTHON" ] || PATH=${REMODEL_PYTHON%/*}:$PATH ;;
    esac
    export REMODEL_PYTHON PATH
fi
