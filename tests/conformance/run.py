#!/usr/bin/env python3
"""Conformance runner for `fbcd validate` (see README.md in this folder).

For every cases/<NNN-slug>/ it copies catalog/ to a scratch directory, runs
setup.sh there when the case has one (symlinks, FIFOs, generated huge or
deeply nested files that git should not hold), runs
`fbcd validate --output json [args] DIR` and checks:

  * the exit status (0 valid, 1 invalid; anything else, a signal or a
    timeout is a failure) and the "valid" field agree with expect.json;
  * every code in expect.codes appears, no code in expect.absent does, and
    an invalid verdict comes with at least one finding;
  * every finding is well-formed: a code, a one-line message, a file that
    exists in the catalog, a line where a blob is at fault, and the
    package/channel/bundle the rule is about;
  * nothing on stderr looks like a sanitizer report or a crash.

Usage: run.py FBCD [--cases DIR] [--filter SUBSTR] [--keep] [-v]
Exit status: 0 all cases pass, 1 some failed, 2 usage error.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TIMEOUT = 60

# Codes whose findings are about a whole file or tree rather than a blob.
NO_LINE = {"L1"}
FILE_LIMIT_WORDS = ("max_file_bytes", "max_files", "max_total_bytes", "max_blobs")

# Which context fields a finding of each rule must carry.
NEEDS = {
    "C2": ("package",), "C3": ("package",),
    "C4": ("channel",), "C5": ("package",), "C6": ("package", "channel"),
    "C7": ("package", "channel", "bundle"),
    "C8": ("bundle",), "C9": ("bundle",), "C10": ("package", "bundle"),
    "C11": ("package", "bundle"), "C12": ("package", "bundle"), "C13": ("package", "bundle"),
    "C14": ("package", "bundle"), "C15": ("package", "bundle"), "C16": ("package", "bundle"),
    "C17": ("package", "bundle"), "C18": ("package", "bundle"),
    "C19": ("package", "channel", "bundle"),
    "C22": ("package",), "C23": ("package",), "C24": ("package",), "C25": ("package", "bundle"),
    "C26": ("package", "channel"), "C27": ("package",), "C28": ("package",),
    "V1": ("package",), "V2": ("package",), "V3": ("package", "channel"),
    "V4": ("package", "channel"), "V5": ("package", "channel"), "V6": ("package", "channel"),
    "V7": ("package", "channel", "bundle"), "V8": ("package", "channel", "bundle"),
    "V10": ("package", "bundle"), "V11": ("package",), "V12": ("package",),
    "S1": ("package", "bundle"), "S4": ("package", "bundle"), "S5": ("package", "bundle"),
}

CRASH_WORDS = ("AddressSanitizer", "runtime error:", "LeakSanitizer", "Segmentation fault",
               "Assertion", "core dumped")


def check_finding(f, catdir):
    errs = []
    code = f.get("code")
    msg = f.get("message")
    if not isinstance(code, str) or not code:
        errs.append("finding without a code: %r" % f)
        return errs
    if not isinstance(msg, str) or not msg.strip():
        errs.append("%s: empty message" % code)
    elif "\n" in msg or "\r" in msg:
        errs.append("%s: message spans lines: %r" % (code, msg[:200]))
    elif "(null)" in msg:
        errs.append("%s: '(null)' in message: %r" % (code, msg[:200]))
    elif len(msg) > 8192:
        errs.append("%s: message of %d bytes" % (code, len(msg)))
    fl = f.get("file")
    if not isinstance(fl, str) or not fl:
        errs.append("%s: no file: %r" % (code, msg))
    elif "\ufffd" not in fl and not os.path.lexists(os.path.join(catdir, fl)):
        errs.append("%s: file %r does not exist in the catalog" % (code, fl))
    file_level = code in NO_LINE or (code == "LIMIT" and any(w in (msg or "") for w in FILE_LIMIT_WORDS))
    line = f.get("line")
    if not file_level and (not isinstance(line, int) or line < 1):
        errs.append("%s: no line: %r" % (code, msg))
    for field in NEEDS.get(code, ()):
        v = f.get(field)
        if field == "bundle" and code in ("C19", "V9") and (msg or "").endswith("entries []"):
            continue  # an entry with an empty name cannot be named
        if not isinstance(v, str) or not v:
            errs.append("%s: no %s: %r" % (code, field, msg))
    return errs


def run_case(fbcd, cdir, keep, verbose):
    with open(os.path.join(cdir, "expect.json")) as fh:
        exp = json.load(fh)
    tmp = tempfile.mkdtemp(prefix="fbcd-conf-")
    cat = os.path.join(tmp, "catalog")
    errs = []
    try:
        src = os.path.join(cdir, "catalog")
        if os.path.isdir(src):
            shutil.copytree(src, cat, symlinks=True)
        else:
            os.mkdir(cat)
        setup = os.path.join(cdir, "setup.sh")
        if os.path.exists(setup):
            r = subprocess.run(["sh", setup], cwd=cat, capture_output=True, timeout=TIMEOUT)
            if r.returncode != 0:
                return ["setup.sh failed: %s" % r.stderr.decode(errors="replace")[:300]], None
        cmd = [fbcd, "validate", "--output", "json"] + exp.get("args", []) + [cat]
        limit = exp.get("timeout", TIMEOUT)
        try:
            r = subprocess.run(cmd, capture_output=True, timeout=limit)
        except subprocess.TimeoutExpired:
            return ["timed out after %ds (hang or super-linear work?)" % limit], None
        err = r.stderr.decode(errors="replace")
        want_rc = 0 if exp["valid"] else 1
        if r.returncode < 0:
            errs.append("killed by signal %d" % -r.returncode)
        elif r.returncode != want_rc:
            errs.append("exit %d, want %d (stderr: %s)" % (r.returncode, want_rc, err.strip()[:300]))
        for w in CRASH_WORDS:
            if w in err:
                errs.append("stderr mentions %r: %s" % (w, err.strip()[:300]))
        try:
            rep = json.loads(r.stdout.decode("utf-8"))
        except (ValueError, UnicodeDecodeError) as ex:
            errs.append("report is not JSON (%s): %r" % (ex, r.stdout[:200]))
            return errs, None
        findings = rep.get("errors", [])
        if rep.get("valid") is not exp["valid"]:
            errs.append("valid=%r, want %r" % (rep.get("valid"), exp["valid"]))
        codes = {f.get("code") for f in findings}
        for c in exp.get("codes", []):
            if c not in codes:
                errs.append("expected code %s missing" % c)
        for c in exp.get("absent", []):
            if c in codes:
                errs.append("code %s must not appear" % c)
        if not exp["valid"] and not findings:
            errs.append("invalid verdict without findings")
        for want in exp.get("at", []):
            if not any(f.get("code") == want["code"] and f.get("file") == want["file"] and
                       f.get("line") == want["line"] for f in findings):
                errs.append("no %s finding at %s:%d" % (want["code"], want["file"], want["line"]))
        for f in findings:
            errs.extend(check_finding(f, cat))
        return errs, findings
    finally:
        if keep:
            print("# kept %s" % tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("fbcd")
    ap.add_argument("--cases", default=os.path.join(HERE, "cases"))
    ap.add_argument("--filter", default="")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args()
    if not os.access(a.fbcd, os.X_OK):
        print("run.py: %s is not an executable" % a.fbcd, file=sys.stderr)
        return 2
    names = sorted(n for n in os.listdir(a.cases) if os.path.isdir(os.path.join(a.cases, n)))
    names = [n for n in names if a.filter in n]
    failed = 0
    print("1..%d" % len(names))
    for i, n in enumerate(names, 1):
        errs, findings = run_case(os.path.abspath(a.fbcd), os.path.join(a.cases, n), a.keep, a.verbose)
        print("%s %d %s" % ("not ok" if errs else "ok", i, n))
        for e in errs:
            print("#   " + e)
        if errs or a.verbose:
            for f in (findings or [])[:20]:
                print("#     found %s %s:%s %s" % (f.get("code"), f.get("file"), f.get("line"),
                                                   f.get("message", "")[:200]))
        failed += 1 if errs else 0
    print("# %d cases, %d failed" % (len(names), failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
