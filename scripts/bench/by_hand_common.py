"""Shared helpers for the by-hand scripts: what a user with pymongo's bson
module would write to transform a mongodump directory dump (decode, change,
encode). Untouched files are copied as they are."""
import os, shutil, sys
import bson

def copy_untouched(src, dst, touched):
    """Copy every file of the dump except the .bson of touched namespaces."""
    for root, dirs, files in os.walk(src):
        rel = os.path.relpath(root, src)
        os.makedirs(os.path.join(dst, rel), exist_ok=True)
        for f in files:
            if rel != "." and f.endswith(".bson") and f"{rel}.{f[:-5]}" in touched:
                continue
            shutil.copyfile(os.path.join(root, f), os.path.join(dst, rel, f))

def read(src, ns):
    db, coll = ns.split(".", 1)
    with open(os.path.join(src, db, coll + ".bson"), "rb") as f:
        yield from bson.decode_file_iter(f)

def writer(dst, ns):
    db, coll = ns.split(".", 1)
    os.makedirs(os.path.join(dst, db), exist_ok=True)
    return open(os.path.join(dst, db, coll + ".bson"), "wb")

def args():
    if len(sys.argv) != 3:
        sys.exit(f"usage: {sys.argv[0]} SRC_DUMP_DIR DST_DUMP_DIR")
    assert bson.has_c(), "pymongo's bson C extension is not available"
    return sys.argv[1], sys.argv[2]
