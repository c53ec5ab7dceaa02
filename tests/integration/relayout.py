#!/usr/bin/env python3
"""Rewrite a catalog with a different file layout (same content), for the
render determinism tests. Standard library only.

  relayout.py split-yaml SRC DST   every YAML document of SRC into its own
                                   file, in reverse order, spread over nested
                                   directories
  relayout.py split-jsonl FILE DST every line of a JSON-lines file into its
                                   own file, in reverse order, spread over
                                   directories, pretty-printed
"""
import json
import os
import sys


def spread(dst, i, n, ext):
    # reverse lexical order of the original, in one of 5 nested buckets
    d = os.path.join(dst, "b%d" % (i % 5), "deep" if i % 2 else "")
    os.makedirs(d, exist_ok=True)
    return os.path.join(d, "%06d.%s" % (n - i, ext))


def split_yaml(src, dst):
    docs = []
    for root, dirs, files in sorted(os.walk(src)):
        dirs.sort()
        for f in sorted(files):
            cur = []
            for line in open(os.path.join(root, f), encoding="utf-8"):
                if line.startswith("---"):
                    if cur:
                        docs.append("".join(cur))
                    cur = []
                    continue
                cur.append(line)
            if cur and "".join(cur).strip():
                docs.append("".join(cur))
    n = len(docs)
    for i, d in enumerate(docs):
        with open(spread(dst, i, n, "yaml"), "w", encoding="utf-8") as out:
            out.write(d)


def split_jsonl(path, dst):
    lines = [l for l in open(path, encoding="utf-8") if l.strip()]
    n = len(lines)
    for i, l in enumerate(lines):
        with open(spread(dst, i, n, "json"), "w", encoding="utf-8") as out:
            json.dump(json.loads(l), out, indent=4, ensure_ascii=False)
            out.write("\n")


if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[1] not in ("split-yaml", "split-jsonl"):
        sys.exit(__doc__)
    {"split-yaml": split_yaml, "split-jsonl": split_jsonl}[sys.argv[1]](sys.argv[2], sys.argv[3])
