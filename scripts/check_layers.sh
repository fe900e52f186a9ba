#!/usr/bin/env bash
# The layers by calls (issue 36): the Makefile's -I fence stops a header
# included against the grain, not a call made through a declaration
# written by hand, nor two files of one folder calling each other. This
# reads, from the built objects (nm), which file defines and which uses
# each extern symbol (a function called or whose address is taken, a
# table read), and fails on
#  - a use from a lower layer of a symbol defined in a higher one;
#  - a circle of files: files using each other round a loop (a strongly
#    connected component of the graph of files, Tarjan's), in any folder;
#  - a .c file of common/ or shell-ext/ outside their layer folders (one
#    directly in shell-ext/, say): the Makefile builds only the layers.
#   scripts/check_layers.sh [BUILD [SOURCE_ROOT]]   (make check; BUILD: build)
# The layers, lowest first: common/'s folders in the order of the
# Makefile's CORE_DIRS (the -I fence), then shell-ext/'s in the order of
# its ONLINE_DIRS, above them all. Only objects whose source is in
# SOURCE_ROOT count (a stale object of a removed file does not); a file of
# common/ not built is an error, shell-ext/ not built at all (no
# libmongoc) is skipped with a note. Prints PASS/FAIL lines (tests/run.sh
# counts them); exits 1 on any FAIL.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build}
root=${2:-$here}

core=$(sed -n 's/^CORE_DIRS *= *//p' "$root/Makefile")
online_dirs=$(sed -n 's/^ONLINE_DIRS *= *//p' "$root/Makefile")
[ -n "$core" ] || { echo "FAIL layers: no CORE_DIRS line in $root/Makefile"; exit 1; }
[ -n "$online_dirs" ] || { echo "FAIL layers: no ONLINE_DIRS line in $root/Makefile"; exit 1; }
layers="$core"
for d in $online_dirs; do layers="$layers shell-ext/$d"; done

# A source outside the layers: not built, or built by a rule that skips
# the fence.
stray=()
for src in "$root"/common/*.c "$root"/common/*/*.c "$root"/shell-ext/*.c "$root"/shell-ext/*/*.c; do
    [ -f "$src" ] || continue
    rel=${src#"$root"/}
    case $rel in
    common/*/*) dir=${rel#common/}; dir=${dir%%/*}; [[ " $core " == *" $dir "* ]] && continue ;;
    shell-ext/*/*) dir=${rel#shell-ext/}; dir=${dir%%/*}; [[ " $online_dirs " == *" $dir "* ]] && continue ;;
    esac
    stray+=("$rel")
done
if [ ${#stray[@]} -gt 0 ]; then
    echo "FAIL layers: not in a layer's folder (the Makefile's CORE_DIRS, ONLINE_DIRS): ${stray[*]}"
    exit 1
fi

objs=() missing=() online=0 online_missing=()
for src in "$root"/common/*/*.c "$root"/shell-ext/*/*.c; do
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
nm -A -P "${objs[@]}" | awk -v build="$build/" -v layers="$layers" '
function src(o) { sub(/:$/, "", o); o = substr(o, length(build) + 1); sub(/\.o$/, ".c", o); return o }
function layer(f,   p) {
    split(f, p, "/"); return p[1] == "shell-ext" ? "shell-ext/" p[2] : p[2]
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
        ncirc++
        list = ""
        for (i = 1; i <= comp_size[c]; i++) list = list (i > 1 ? " " : "") comp[c, i]
        print "FAIL layers: circle of files: " list
        for (i = 1; i <= comp_size[c]; i++) {
            from = comp[c, i]
            for (j = 1; j <= nout[from]; j++) {
                to = out[from, j]
                if (comp_of[to] == c) print "    " from " uses " uses[from, to] " of " to
            }
        }
    }
    if (ncirc == 0) print "PASS layers: no circle of files"
    bad += ncirc
    exit (bad > 0)
}'
