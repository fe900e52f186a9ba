#!/usr/bin/env python3
"""Writes a directory dump from Extended JSON: mkdump.py DIR '{"db.coll": [docs], ...}'
(or mkdump.py DIR @FILE, the JSON in FILE: past the argument-length limit)"""
import json
import os
import sys

sys.dont_write_bytecode = True  # nothing written into the tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rmlib  # noqa: E402

text = open(sys.argv[2][1:]).read() if sys.argv[2].startswith("@") else sys.argv[2]
spec = json.loads(text, object_pairs_hook=rmlib.collections.OrderedDict)
rmlib.write_dump(sys.argv[1], {ns: [rmlib.ext(d) for d in docs] for ns, docs in spec.items()})
