#!/usr/bin/env bash
# The layers by calls (issue 36): the Makefile's -I fence stops a header
# included against the grain, not a call made through a declaration
# written by hand, nor two files of one folder calling each other. This
# reads, from the built objects (nm), which file defines and which uses
# each extern symbol (a function called or whose address is taken, a
# table read), and fails on
#  - a use from a lower layer of a symbol defined in a higher one;
#  - a circle of files: files using each other round a loop (a strongly
#    connected component of the graph of files, Tarjan's), in any folder.
#   scripts/check_layers.sh [BUILD [SOURCE_ROOT]]   (make check; BUILD: build)
# The layers, lowest first: common/'s folders in the order of the
# Makefile's CORE_DIRS (the -I fence), then shell-ext/ as one layer above
# them all (it is not in layers yet, issue 36). Only objects whose source
# is in SOURCE_ROOT count (a stale object of a removed file does not); a
# file of common/ not built is an error, shell-ext/ not built at all (no
# libmongoc) is skipped with a note. Prints PASS/FAIL lines (tests/run.sh
# counts them); exits 1 on any FAIL.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build}
root=${2:-$here}

# Circles allowed for now, each a group of files: a circle passes when all
# its files are in one group, so a file joining it fails, and a group only
# ever shrinks (a file that leaves is printed, to be taken off the list).
#  - shell-ext/: one flat folder whose files call each other in a circle;
#    cutting it is issue 36's move of shell-ext/ into folders by layer.
#    Exactly the files in that circle today: the twenty it had when this
#    check came, and the files added since by work that landed before the
#    move (the index copy, the shared-sources check, the run's completeness,
#    finalize's write-blocked window, the oplog's window, the progress
#    line, follow's lag, verify's differences), which join it because they
#    call the connection (online_fail() in online_conn.c drops the lease and
#    so calls up into the state) or the state, which calls down into them;
#    and the followers' table (online_followers.c), whose rows name the
#    follow functions of online_incr*.c, which look their row up there.
known_circles=(
    "shell-ext/online_batch.c shell-ext/online_capture.c shell-ext/online_changes.c
     shell-ext/online_conn.c shell-ext/online_follow.c shell-ext/online_incr.c
     shell-ext/online_incr_refs.c shell-ext/online_incr_series.c shell-ext/online_index.c
     shell-ext/online_keys.c shell-ext/online_lease.c shell-ext/online_made.c
     shell-ext/online_preflight.c shell-ext/online_retry.c shell-ext/online_run.c
     shell-ext/online_sample.c shell-ext/online_server.c shell-ext/online_state.c
     shell-ext/online_verify.c shell-ext/online_write.c
     shell-ext/online_index_copy.c shell-ext/online_shared.c
     shell-ext/online_complete.c shell-ext/online_blocked.c shell-ext/online_window.c
     shell-ext/online_progress.c shell-ext/online_lag.c shell-ext/online_diffs.c
     shell-ext/online_followers.c"
)

core=$(sed -n 's/^CORE_DIRS *= *//p' "$root/Makefile")
[ -n "$core" ] || { echo "FAIL layers: no CORE_DIRS line in $root/Makefile"; exit 1; }
layers="$core shell-ext"

objs=() missing=() online=0 online_missing=()
for src in "$root"/common/*/*.c "$root"/shell-ext/*.c; do
    [ -f "$src" ] || continue
    rel=${src#"$root"/}
    o=$build/${rel%.c}.o
    case $rel in shell-ext/*) [ -f "$o" ] && online=1 ;; esac
    if [ -f "$o" ]; then objs+=("$o")
    elif [[ $rel == shell-ext/* ]]; then online_missing+=("$rel")
    else missing+=("$rel"); fi
done
[ $online -eq 1 ] && missing+=("${online_missing[@]}")
if [ ${#missing[@]} -gt 0 ]; then
    echo "FAIL layers: not built in $build (run make): ${missing[*]}"
    exit 1
fi
[ $online -eq 1 ] || echo "layers: shell-ext/ not built (no libmongoc): checking common/ only"

# nm -A -P: "OBJECT: SYMBOL TYPE [VALUE SIZE]", one a line.
nm -A -P "${objs[@]}" | awk -v build="$build/" -v layers="$layers" -v known="$(printf '%s;' "${known_circles[@]}")" '
function src(o) { sub(/:$/, "", o); o = substr(o, length(build) + 1); sub(/\.o$/, ".c", o); return o }
function layer(f,   p) {
    if (f ~ /^shell-ext\//) return "shell-ext"
    split(f, p, "/"); return p[2]
}
# Tarjan: the strongly connected components of the graph of files.
function visit(v,   i, k, w, n) {
    index_of[v] = low[v] = ++counter
    stack[++sp] = v; on_stack[v] = 1
    for (i = 1; i <= nout[v]; i++) {
        w = out[v, i]
        if (!(w in index_of)) { visit(w); if (low[w] < low[v]) low[v] = low[w] }
        else if (on_stack[w] && index_of[w] < low[v]) low[v] = index_of[w]
    }
    if (low[v] == index_of[v]) {
        ncomp++; n = 0
        do { w = stack[sp--]; on_stack[w] = 0; comp[ncomp, ++n] = w; comp_of[w] = ncomp } while (w != v)
        comp_size[ncomp] = n
        for (i = 2; i <= n; i++)   # in name order, for a stable message
            for (k = i; k > 1 && comp[ncomp, k - 1] > comp[ncomp, k]; k--) {
                w = comp[ncomp, k]; comp[ncomp, k] = comp[ncomp, k - 1]; comp[ncomp, k - 1] = w
            }
    }
}
# The symbols FROM uses of TO, as "a(), b()".
function syms(from, to) { return uses[from, to] }
BEGIN {
    n = split(layers, l, " ")
    for (i = 1; i <= n; i++) level[l[i]] = i
    ngroups = split(known, g, ";")
    for (i = 1; i <= ngroups; i++) {
        m = split(g[i], gf, /[ \t\n]+/)
        for (j = 1; j <= m; j++) group_of[gf[j]] = i
    }
    bad = 0
}
{
    f = src($1); files[f] = 1
    if ($3 == "U") { want[f, $2] = 1; next }
    if ($3 ~ /^[A-Z]$/) { def[$2] = f; kind[$2] = ($3 == "T" || $3 == "W") ? "()" : "" }
}
END {
    for (k in want) {
        split(k, p, SUBSEP); from = p[1]; s = p[2]
        if (!(s in def) || def[s] == from) continue
        to = def[s]
        if (!((from, to) in uses)) { out[from, ++nout[from]] = to; uses[from, to] = s kind[s]; nedges++ }
        else if (index(", " uses[from, to] ", ", ", " s kind[s] ", ") == 0) uses[from, to] = uses[from, to] ", " s kind[s]
    }
    # Upward uses.
    nup = 0
    for (k in uses) {
        split(k, p, SUBSEP); from = p[1]; to = p[2]
        if (level[layer(from)] < level[layer(to)]) {
            print "FAIL layers: upward call: " from " (layer " layer(from) ") uses " uses[k] " of " to " (layer " layer(to) ")"
            nup++
        }
    }
    nfiles = 0; for (f in files) nfiles++
    if (nup == 0) print "PASS layers: no call from a lower layer to a higher one (" nfiles " files, " nedges + 0 " uses between files; " layers ")"
    bad += nup

    for (f in files) if (!(f in index_of)) visit(f)
    ncirc = 0
    for (c = 1; c <= ncomp; c++) {
        if (comp_size[c] < 2) continue
        list = ""; allowed = 1; gid = ""; newcomers = ""
        for (i = 1; i <= comp_size[c]; i++) {
            f = comp[c, i]; list = list (i > 1 ? " " : "") f; in_circle[f] = 1
            if (!(f in group_of)) { allowed = 0; newcomers = newcomers " " f }
            else if (gid == "") gid = group_of[f]
            else if (group_of[f] != gid) allowed = 0
        }
        if (allowed) {
            print "layers: known circle of " comp_size[c] " files (allowed in scripts/check_layers.sh): " list
            continue
        }
        ncirc++
        print "FAIL layers: circle of files: " list (newcomers != "" ? " (not in a known circle:" newcomers ")" : "")
        for (i = 1; i <= comp_size[c]; i++) {
            from = comp[c, i]
            for (j = 1; j <= nout[from]; j++) {
                to = out[from, j]
                if (comp_of[to] == c) print "    " from " uses " uses[from, to] " of " to
            }
        }
    }
    if (ncirc == 0) print "PASS layers: no circle of files but the known ones"
    bad += ncirc
    # A file of a known circle no longer in one: the list is to shrink.
    for (f in group_of) if ((f in files) && !(f in in_circle))
        print "layers: " f " is in no circle now: take it off the known list in scripts/check_layers.sh"
    exit (bad > 0)
}'
