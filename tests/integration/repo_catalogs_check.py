#!/usr/bin/env python3
"""Checks the catalogs `fbcd repo catalogs` built from community-operators'
history against what index-add.md predicts, independently of the C code.

usage: repo_catalogs_check.py REPO OUT SHARED_CATALOG_V4_20 [KEEP_OUT]

For every add-mode package (ci.yaml without fbc.enabled) and every catalog
v4.NN under OUT: the package is present exactly when one of its bundles'
com.redhat.openshift.versions label admits the catalog (§9 P-3/P-4); each
channel's head is the highest version among the admitted bundles listing it
(RM-3, SV-4/SV-5); the default channel is the one RM-5/RM-6 (replaces mode)
or SV-2 (semver mode) give when the bundles are added in merge order. Then the
template-managed packages are compared with the published catalog-v4.20.
With KEEP_OUT (the same build with --keep-bundle-objects), SV-13: every
channel head keeps its objects, a bundle without them lists the images it
lists in KEEP_OUT once each and unnamed, and the package and channel blobs
are identical in both builds.
Prints one line per check and exits 1 on any failure.
"""
import json
import os
import re
import subprocess
import sys

import yaml

LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

REPO, OUT, SHARED = sys.argv[1:4]
KEEP = sys.argv[4] if len(sys.argv) > 4 else None
fails = 0
checks = 0


def fail(msg):
    global fails
    fails += 1
    print("FAIL:", msg)


def ok():
    global checks
    checks += 1


def semver_key(v):
    m = re.match(r"^(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?(?:\+([0-9A-Za-z.-]+))?$", v)
    if not m:
        return None
    pre = m.group(4)
    ids = []
    if pre:
        for p in pre.split("."):
            ids.append((0, int(p), "") if p.isdigit() else (1, 0, p))
    # a version without pre-release sorts above one with it
    return (int(m.group(1)), int(m.group(2)), int(m.group(3)), 0 if pre else 1, ids)


def parse_ocp(s):
    parts = s.strip().split(".")
    if not 1 <= len(parts) <= 4 or not all(p.isdigit() for p in parts):
        raise ValueError(s)
    return tuple(int(p) for p in parts) + (0,) * (4 - len(parts))


def admits(label, catalog):
    """IIB's is_bundle_version_valid, written from index-add.md §9 P-4."""
    if label is None or label.strip() == "":
        return True
    want = parse_ocp(catalog.lstrip("v"))
    s = label.replace("v", "").strip()
    if "|" in s:
        res = False
        for part in s.split("|"):
            part = part.strip()
            if part.startswith(">="):
                res = res or parse_ocp(part[2:]) <= want
            elif part.startswith("="):
                res = res or parse_ocp(part[1:]) == want
            else:
                raise ValueError(label)
        return res
    if s.startswith("="):
        return parse_ocp(s[1:]) == want
    if "-" in s:
        lo, hi = s.split("-")
        return parse_ocp(lo) <= want <= parse_ocp(hi)
    if "," in s:
        return min(parse_ocp(p) for p in s.split(",")) <= want
    return parse_ocp(s) <= want


def read_bundle(path):
    ann = {}
    for f in sorted(os.listdir(os.path.join(path, "metadata"))):
        with open(os.path.join(path, "metadata", f)) as fh:
            doc = yaml.load(fh, Loader=LOADER)
        if isinstance(doc, dict) and doc.get("annotations"):
            ann = doc["annotations"]
            break
    csv = None
    for f in sorted(os.listdir(os.path.join(path, "manifests"))):
        if f.startswith("."):
            continue
        with open(os.path.join(path, "manifests", f)) as fh:
            text = fh.read()
        if "ClusterServiceVersion" not in text:
            continue
        try:
            doc = next(yaml.load_all(text, Loader=LOADER))
        except Exception:
            continue
        if isinstance(doc, dict) and doc.get("kind") == "ClusterServiceVersion":
            csv = doc
            break
    chans = ann.get("operators.operatorframework.io.bundle.channels.v1", "")
    return {
        "name": csv["metadata"]["name"],
        "version": str(csv["spec"]["version"]),
        "channels": [c for c in str(chans).split(",") if c != ""],
        "default": ann.get("operators.operatorframework.io.bundle.channel.default.v1") or "",
        "label": ann.get("com.redhat.openshift.versions"),
    }


_bundles = {}


def bundle(d):
    if d not in _bundles:
        _bundles[d] = read_bundle(os.path.join(REPO, d))
    return _bundles[d]


def merge_order(pkg):
    """Bundle directories of pkg in first-parent merge order (version order
    inside one commit), as present at HEAD."""
    out = subprocess.run(
        ["git", "-C", REPO, "log", "--first-parent", "--reverse", "--no-renames", "--format=@%H",
         "--name-only", "--diff-filter=A", "--", "operators/%s" % pkg],
        check=True, capture_output=True, text=True).stdout
    seen, order, group = set(), [], []

    def flush():
        group.sort(key=lambda d: semver_key(bundle(d)["version"]) or ())
        order.extend(group)
        group.clear()

    for line in out.splitlines():
        if line.startswith("@"):
            flush()
            continue
        parts = line.split("/")
        if len(parts) < 4:
            continue
        d = "/".join(parts[:3])
        if d in seen or not os.path.isdir(os.path.join(REPO, d, "manifests")):
            continue
        seen.add(d)
        group.append(d)
    flush()
    return order


def read_stream(path):
    dec = json.JSONDecoder()
    text = open(path).read()
    i, blobs = 0, []
    while True:
        while i < len(text) and text[i].isspace():
            i += 1
        if i >= len(text):
            return blobs
        obj, i = dec.raw_decode(text, i)
        blobs.append(obj)


def heads_of(blobs):
    versions = {}
    for b in blobs:
        if b["schema"] == "olm.bundle":
            for p in b["properties"]:
                if p["type"] == "olm.package":
                    versions[b["name"]] = p["value"]["version"]
    heads = {}
    for b in blobs:
        if b["schema"] != "olm.channel":
            continue
        targets = set()
        for e in b["entries"]:
            if e.get("replaces"):
                targets.add(e["replaces"])
            targets.update(e.get("skips", []))
        hs = [e["name"] for e in b["entries"] if e["name"] not in targets]
        heads[b["name"]] = [versions.get(h) for h in hs]
    return heads


catalogs = sorted(d for d in os.listdir(OUT) if re.match(r"^v\d+\.\d+$", d))
pkgs = {}
for pkg in sorted(os.listdir(os.path.join(REPO, "operators"))):
    ci_path = os.path.join(REPO, "operators", pkg, "ci.yaml")
    ci = yaml.load(open(ci_path), Loader=LOADER) if os.path.exists(ci_path) else {}
    ci = ci or {}
    if (ci.get("fbc") or {}).get("enabled"):
        continue
    pkgs[pkg] = "semver" if ci.get("updateGraph") == "semver-mode" else "replaces"

if len(pkgs) != 12:
    fail("expected the 12 add-mode operators of the data README, found %d: %s" % (len(pkgs), sorted(pkgs)))
else:
    ok()

for pkg, mode in sorted(pkgs.items()):
    bundles = [bundle(d) for d in merge_order(pkg)]
    for cat in catalogs:
        adm = [b for b in bundles if admits(b["label"], cat)]
        path = os.path.join(OUT, cat, pkg, "catalog.json")
        if not adm:
            if os.path.exists(path):
                fail("%s %s: present although no bundle's label admits it" % (cat, pkg))
            else:
                ok()
            continue
        if not os.path.exists(path):
            fail("%s %s: missing (%d bundles admitted)" % (cat, pkg, len(adm)))
            continue
        blobs = read_stream(path)
        # the predicted default channel
        default, top = "", None
        for i, b in enumerate(adm):
            if mode == "semver":
                if b["default"]:
                    default = b["default"]
                elif not default:
                    default = min(b["channels"])
            else:
                k = semver_key(b["version"])
                if top is None or k >= top:
                    top = k
                    if b["default"]:
                        default = b["default"]
        chans = sorted({c for b in adm for c in b["channels"]})
        if mode == "replaces" and len(chans) == 1 and default in ("", chans[0]):
            default = chans[0]
        got_default = blobs[0].get("defaultChannel")
        if got_default != default:
            fail("%s %s (%s mode): default channel %s, predicted %s" % (cat, pkg, mode, got_default, default))
        else:
            ok()
        # the predicted heads
        heads = heads_of(blobs)
        for c in chans:
            want = max((b for b in adm if c in b["channels"]), key=lambda b: semver_key(b["version"]))["version"]
            got = heads.get(c)
            if got != [want]:
                fail("%s %s channel %s: heads %s, predicted [%s]" % (cat, pkg, c, got, want))
            else:
                ok()
        extra = set(heads) - set(chans)
        if extra:
            fail("%s %s: channels %s that no admitted bundle lists" % (cat, pkg, sorted(extra)))
        # every admitted bundle is in the catalog (none was rejected)
        names = {b["name"] for b in blobs if b["schema"] == "olm.bundle"}
        missing = [b["name"] for b in adm if b["name"] not in names]
        if missing:
            print("NOTE: %s %s: admitted bundles not shown (pruned or stranded): %s" % (cat, pkg, missing))

# The published catalog-v4.20 holds none of the add-mode packages (it is a
# selection of 37 FBC packages): say so, so that a change in the data shows.
shared_pkgs = set(os.listdir(SHARED))
overlap = sorted(shared_pkgs & set(pkgs))
print("catalog-v4.20 add-mode packages:", overlap or "none (nothing to compare: the published selection holds FBC packages only)")
ok()

# Template-managed packages: the output is the committed files, which are
# the published catalog (same repository commit).
if "v4.20" in catalogs:
    for pkg in sorted(os.listdir(os.path.join(OUT, "v4.20"))):
        if pkg in pkgs or pkg not in shared_pkgs:
            continue
        a = open(os.path.join(OUT, "v4.20", pkg, "catalog.yaml"), "rb").read()
        b = open(os.path.join(SHARED, pkg, "catalog.yaml"), "rb").read()
        if a != b:
            fail("v4.20 %s: differs from the published catalog-v4.20" % pkg)
        else:
            ok()



def has_meta(b):
    return any(p["type"] in ("olm.bundle.object", "olm.csv.metadata") for p in b.get("properties", []))


# SV-13: a semver-mode add clears the objects of every bundle of the index that heads no channel
if KEEP:
    heads = cleared = kept = 0
    for cat in catalogs:
        for pkg in sorted(os.listdir(os.path.join(OUT, cat))):
            f = os.path.join(OUT, cat, pkg, "catalog.json")
            if not os.path.exists(f):
                continue  # template-managed: the committed files
            a, k = read_stream(f), read_stream(os.path.join(KEEP, cat, pkg, "catalog.json"))
            if [b for b in a if b["schema"] != "olm.bundle"] != [b for b in k if b["schema"] != "olm.bundle"]:
                fail("%s %s: package or channels differ with --keep-bundle-objects" % (cat, pkg))
            hd = set()
            for c in (b for b in a if b["schema"] == "olm.channel"):
                gone = {e.get("replaces") for e in c["entries"]} | {s for e in c["entries"] for s in e.get("skips", [])}
                hd |= {e["name"] for e in c["entries"] if e["name"] not in gone}
            full = {b["name"]: b for b in k if b["schema"] == "olm.bundle"}
            for b in (b for b in a if b["schema"] == "olm.bundle"):
                ri = b.get("relatedImages", [])
                if b["name"] in hd:
                    heads += 1
                    if not has_meta(b) or not ri:
                        fail("%s %s: a channel head lost its objects" % (cat, b["name"]))
                elif not has_meta(b):
                    cleared += 1
                    want = list(dict.fromkeys(r["image"] for r in full[b["name"]].get("relatedImages", [])))
                    if [r["image"] for r in ri] != want or any(r["name"] for r in ri):
                        fail("%s %s: cleared, but relatedImages are not the same images unnamed" % (cat, b["name"]))
            for b in full.values():
                kept += 1
                if not has_meta(b):
                    fail("%s %s: --keep-bundle-objects lost its objects" % (cat, b["name"]))
    print("SV-13: heads with objects %d, non-head bundles cleared %d, bundles kept with --keep-bundle-objects %d" % (heads, cleared, kept))
    if cleared > 100 and heads > 0:
        ok()
    else:
        fail("SV-13: expected more than 100 cleared bundles and some heads")

print("%d checks passed, %d failed" % (checks, fails))
sys.exit(1 if fails else 0)
