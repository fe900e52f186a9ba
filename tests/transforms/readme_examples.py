#!/usr/bin/env python3
"""Runs the README's shell examples as a user would from a clone.

    readme_examples.py [--root DIR] [--least N] [--uri URI] REMODEL README
    readme_examples.py --bare REMODEL PAGE.md

README is README.md or one of the topic documents in docs/ (docs/plans.md,
...): --root names the repository root the commands run from (default: the
file's directory), --least the fewest examples that must run for the last
line to say PASS (default 20). Examples are named "README example: ..."
for README.md, "docs/NAME.md example: ..." for another file. --uri: the
commands against mongodb://127.0.0.1:PORT/ run too, against URI (a test
server the caller started), 127.0.0.1:PORT in their shown output standing
for URI's host and port; they run in the file's order, each after the last.

--bare (the man pages' EXAMPLES, docs/*.[0-9].md): each line of a ``` block
that starts with "remodel " (or "VAR=... remodel ") is a command, with no
output shown; remodel online, a command with a server address, or one
piped into a peer tool that needs one, is skipped.

Every line "$ COMMAND" in a ``` block runs with bash from the repository
root, with `remodel` on PATH and /tmp/ replaced by a fresh directory.
The lines shown after it are its output: each one (but "...") must appear
among the lines the command printed, and a command whose shown output holds
"remodel: error:" (or that compares dumps that differ) must fail; any other
must succeed. Skipped: commands that need a server at a fixed address, make
targets and the benchmark tools. Prints PASS/FAIL lines.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

bare = sys.argv[1] == "--bare"
if bare:
    del sys.argv[1]
root, least, uri = None, 1 if bare else 20, None
while sys.argv[1] in ("--root", "--least", "--uri"):
    if sys.argv[1] == "--root":
        root = os.path.abspath(sys.argv[2])
    elif sys.argv[1] == "--uri":
        uri = sys.argv[2]
    else:
        least = int(sys.argv[2])
    del sys.argv[1:3]
PLACE = "mongodb://127.0.0.1:PORT/"
remodel, readme = os.path.abspath(sys.argv[1]), sys.argv[2]
if root is None:
    root = os.path.dirname(os.path.abspath(readme))
    if bare:
        root = os.path.dirname(root)  # docs/ -> the repository
if bare:
    label = os.path.basename(readme)
else:
    label = os.path.relpath(os.path.abspath(readme), root)
    if label == "README.md":
        label = "README"
SKIP = re.compile(r"mongodb://|^make |build/bench|~/.cache|\| *mongo(restore|sh)")
BARE = re.compile(r"^([A-Z_]+=\S* )*remodel ")


def matches(shown, line):
    """A shown line equals the printed one; "..." inside it stands for any text."""
    parts = shown.split("...")
    if len(parts) == 1:
        return shown == line
    pos = 0
    for i, part in enumerate(parts):
        at = line.find(part, pos) if i else (0 if line.startswith(part) else -1)
        if at < 0:
            return False
        pos = at + len(part)
    return parts[-1] == "" or line.endswith(parts[-1])


def examples(text):
    """(command, shown output lines) for each "$ " line in a code block."""
    out, block, cur = [], False, None
    for line in text.splitlines():
        if line.startswith("```"):
            if cur:
                out.append(cur)
            cur, block = None, not block
            continue
        if not block:
            continue
        if bare:
            # remodel online needs a server (its URI may come from the
            # environment); remodel compile does not.
            if BARE.match(line) and " online " not in line:
                out.append((line, []))
            continue
        if line.startswith("$ "):
            if cur:
                out.append(cur)
            cur = (line[2:], [])
        elif cur is not None:
            cur[1].append(line)
    return out


tmp = tempfile.mkdtemp(prefix="remodel-readme.")
try:
    bindir = os.path.join(tmp, "bin")
    os.mkdir(bindir)
    os.symlink(remodel, os.path.join(bindir, "remodel"))
    work = os.path.join(tmp, "tmp")  # so that /tmp/x.bson keeps its namespace tmp.x
    os.mkdir(work)
    env = dict(os.environ, PATH=bindir + os.pathsep + os.environ["PATH"])
    ran = 0
    for cmd, shown in examples(open(readme, encoding="utf-8").read()):
        if uri and PLACE in cmd:
            hostport = uri.split("://", 1)[1].split("/", 1)[0]
            cmd = cmd.replace(PLACE, uri)
            shown = [l.replace("127.0.0.1:PORT", hostport) for l in shown]
        if SKIP.search(cmd.replace(uri, "") if uri else cmd):
            continue
        cmd = cmd.replace("/tmp/", work + "/")
        shown = [s.replace("/tmp/", work + "/").rstrip() for s in shown]
        name = ("%s example: " % label) + cmd.replace(work + "/", "/tmp/").replace(uri or PLACE, PLACE)[:90]
        p = subprocess.run(["bash", "-c", cmd], cwd=root, env=env,
                           capture_output=True, text=True, errors="replace", timeout=300)
        ran += 1
        printed = [l.rstrip() for l in (p.stdout + p.stderr).splitlines()]
        want_fail = any(s.startswith("remodel: error:") for s in shown) or " diff " in " " + cmd
        if want_fail == (p.returncode == 0):
            print("FAIL %s: exit status %d" % (name, p.returncode))
            sys.stderr.write((p.stdout + p.stderr)[-800:] + "\n")
            continue
        missing = [s for s in shown if s.strip() and s.strip() != "..." and
                   not any(matches(s, l) for l in printed)]
        if missing:
            print("FAIL %s: shown output not printed" % name)
            sys.stderr.write("missing: %r\nprinted: %r\n" % (missing[:3], printed[:8]))
            continue
        print("PASS " + name)
    print(("PASS" if ran >= least else "FAIL") + " %s examples run: %d" % (label, ran))
finally:
    shutil.rmtree(tmp, ignore_errors=True)
