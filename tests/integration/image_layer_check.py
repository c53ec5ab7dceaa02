"""Check the catalog layer of an OCI layout written by fbcd image build.

usage: image_layer_check.py LAYOUT RENDER
LAYOUT: the image's OCI layout (one platform); RENDER: `fbcd render` of the
same catalog. Exits non-zero, saying why, when the layer is not what
pipeline/image promises.
"""
import gzip
import hashlib
import io
import json
import os
import sys
import tarfile


def blob(layout, digest):
    with open(os.path.join(layout, "blobs", *digest.split(":", 1)), "rb") as f:
        data = f.read()
    if "sha256:" + hashlib.sha256(data).hexdigest() != digest:
        sys.exit(f"blob {digest} does not hash to its digest")
    return data


def main():
    layout, render = sys.argv[1:3]
    with open(os.path.join(layout, "index.json")) as f:
        top = json.load(f)["manifests"][0]
    doc = json.loads(blob(layout, top["digest"]))
    if doc.get("manifests"):
        doc = json.loads(blob(layout, doc["manifests"][0]["digest"]))
    config = json.loads(blob(layout, doc["config"]["digest"]))
    layer = doc["layers"][-1]
    gz = blob(layout, layer["digest"])
    if len(gz) != layer["size"]:
        sys.exit("layer size differs from its descriptor")
    if gz[:4] != b"\x1f\x8b\x08\x00" or gz[9] != 255:
        sys.exit("gzip header is not the fixed one (no name, no time, OS unknown)")
    tar = gzip.decompress(gz)
    if "sha256:" + hashlib.sha256(tar).hexdigest() != config["rootfs"]["diff_ids"][-1]:
        sys.exit("the tar does not hash to the config's diff_id")
    names, files = [], {}
    with tarfile.open(fileobj=io.BytesIO(tar)) as t:
        for m in t.getmembers():
            names.append(m.name + ("/" if m.isdir() else ""))
            if m.isfile():
                files[m.name] = t.extractfile(m).read()
    dirs = [n for n in names if n.endswith("/") and n != "configs/"]
    if names[0] != "configs/" or dirs != sorted(dirs, key=lambda s: s.encode()):
        sys.exit("entries are not in directory key order: " + " ".join(names))
    # the render: packages by name, blobs without a package last
    pkgs = sorted((d[len("configs/"):-1] for d in dirs if d != "configs/_nopackage/"),
                  key=lambda s: s.encode())
    if "configs/_nopackage/" in dirs:
        pkgs.append("_nopackage")
    joined = b"".join(files[f"configs/{p}/catalog.json"] for p in pkgs)
    with open(render, "rb") as f:
        if joined != f.read():
            sys.exit("the catalog.json files are not the render of their packages")
    print(f"{len(pkgs)} groups, tar {len(tar)} bytes, gzip {len(gz)} bytes: ok")


main()
