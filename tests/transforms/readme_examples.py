#!/usr/bin/env python3
"""Runs the README's shell examples as a user would from a clone.

    readme_examples.py REMODEL README
    readme_examples.py --bare REMODEL PAGE.md

--bare (the man pages' EXAMPLES, docs/*.md): each line of a ``` block
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
remodel, readme = os.path.abspath(sys.argv[1]), sys.argv[2]
root = os.path.dirname(os.path.abspath(readme))
if bare:
    root = os.path.dirname(root)  # docs/ -> the repository
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
        if SKIP.search(cmd):
            continue
        cmd = cmd.replace("/tmp/", work + "/")
        shown = [s.replace("/tmp/", work + "/").rstrip() for s in shown]
        name = ("%s example: " % (os.path.basename(readme) if bare else "README")) + \
            cmd.replace(work + "/", "/tmp/")[:90]
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
    least = 1 if bare else 20
    print(("PASS" if ran >= least else "FAIL") + " %s examples run: %d" % (
        os.path.basename(readme) if bare else "README", ran))
finally:
    shutil.rmtree(tmp, ignore_errors=True)
