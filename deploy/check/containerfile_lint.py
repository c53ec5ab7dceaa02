#!/usr/bin/env python3
"""Lint deploy/container/Containerfile with the hadolint rules that matter
here (hadolint itself is not packaged for Debian 12), and print the runtime
stage's apt packages on stdout for the library check.

Exit 1 with one line per finding (FILE:LINE: RULE: message)."""
import re
import sys

path = sys.argv[1]
lines = open(path).read().split("\n")
# Join continuation lines, remembering where each instruction starts.
instrs = []
cur, start = "", 0
for i, raw in enumerate(lines, 1):
    s = raw.strip()
    if not cur and (not s or s.startswith("#")):
        continue
    if not cur:
        start = i
    if s.endswith("\\"):
        cur += s[:-1] + " "
        continue
    cur += s
    instrs.append((start, cur))
    cur = ""

findings = []
def bad(line, rule, msg):
    findings.append(f"{path}:{line}: {rule}: {msg}")

stages = []  # (line, from-image, [instrs])
for line, ins in instrs:
    op, _, rest = ins.partition(" ")
    op = op.upper()
    if op == "FROM":
        stages.append((line, rest.split()[0], []))
    elif not stages:
        bad(line, "DL-FROM", "instruction before the first FROM")
    else:
        stages[-1][2].append((line, op, rest))

if len(stages) < 2:
    bad(1, "FBCD-MULTISTAGE", "expected a build stage and a runtime stage")
for line, image, _ in stages:
    if ":" not in image.split("/")[-1] or image.endswith(":latest"):
        bad(line, "DL3006/DL3007", f"base image {image} must be pinned to a tag other than latest")

runtime_pkgs = []
for si, (sline, image, body) in enumerate(stages):
    final = si == len(stages) - 1
    for line, op, rest in body:
        if op == "ADD" and re.search(r"https?://", rest):
            bad(line, "DL3020", "use curl in RUN, not ADD of a URL")
        if op == "RUN" and "apt-get install" in rest:
            if "--no-install-recommends" not in rest:
                bad(line, "DL3015", "apt-get install without --no-install-recommends")
            if "-y" not in rest.split():
                bad(line, "DL3014", "apt-get install without -y")
            if "rm -rf /var/lib/apt/lists" not in rest:
                bad(line, "DL3009", "apt lists not removed after install")
            if "apt-get update" not in rest:
                bad(line, "DL3009", "apt-get install without apt-get update in the same RUN")
            if final:
                m = re.search(r"apt-get install ([^&;|]*)", rest)
                runtime_pkgs += [w for w in m.group(1).split() if not w.startswith("-")]
        if op == "RUN" and re.search(r"\bsudo\b", rest):
            bad(line, "DL3004", "do not use sudo")
        if op == "RUN" and re.search(r"(^|\s)cd\s", rest):
            bad(line, "DL3003", "use WORKDIR instead of cd")
    if final:
        ops = [op for _, op, _ in body]
        users = [rest for _, op, rest in body if op == "USER"]
        if not users or users[-1].split(":")[0] in ("root", "0"):
            bad(sline, "DL3002", "the runtime stage must end as a non-root USER")
        if "HEALTHCHECK" not in ops:
            bad(sline, "FBCD-HEALTHCHECK", "the runtime stage needs a HEALTHCHECK")
        hc = [rest for _, op, rest in body if op == "HEALTHCHECK"]
        if hc and "/healthz" not in hc[-1]:
            bad(sline, "FBCD-HEALTHCHECK", "the HEALTHCHECK must probe /healthz")
        ep = [rest for _, op, rest in body if op == "ENTRYPOINT"]
        if not ep or not ep[-1].startswith("["):
            bad(sline, "DL3025", "ENTRYPOINT must be in JSON (exec) form")
        cmd = [rest for _, op, rest in body if op == "CMD"]
        if not cmd or "serve" not in cmd[-1]:
            bad(sline, "FBCD-ENTRY", "the image must run `fbcd serve` by default")
        if any(op in ("ADD",) for op in ops):
            bad(sline, "DL3010", "use COPY, not ADD, in the runtime stage")
if findings:
    print("\n".join(findings), file=sys.stderr)
    sys.exit(1)
print(" ".join(runtime_pkgs))
