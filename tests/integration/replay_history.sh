#!/bin/sh
# The pipeline end to end on community-operators' real history
# (history.bundle): a clone of it is the watched repository and a recording
# stand-in plays GitHub (tests/lib/fake-forge.py).
#  1. Every pull request, in history order, with `main` where it was when the
#     pull request was open: its signed `opened` webhook makes fbcd check it
#     and report to the forge; the stored result equals `fbcd pr check` on the
#     same pair, check by check, and the nine completed check runs carry the
#     same conclusions.
#  2. Its commits pushed to `main` one by one (merged and push webhooks):
#     each becomes revisions whose provenance names its commit and pull
#     request, and every catalog equals `fbcd repo catalogs` of that commit
#     rendered by `fbcd render`.
# With BENCH=1 it prints, instead of asserting, webhook -> last report request
# latency p50/p99 next to `fbcd pr check` alone on the same pairs.
#   replay_history.sh FBCD HISTORY_BUNDLE
# FBCD_REPLAY_EVERY=N replays every Nth pull request (the sanitizer build);
# FBCD_REPLAY_PUSHES=N pushes the last N commits (default 6; the normal
# build's test pushes them all, the sanitizer build's the last 6).
FBCD=$1 BUNDLE=$2
. "$(dirname "$0")/lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
LIB=$HERE/../lib
[ -f "$BUNDLE" ] || skip "no $BUNDLE"
command -v git >/dev/null || skip "git is not installed"
export GIT_CONFIG_NOSYSTEM=1

PGDIR=$(mktemp -d "${TMPDIR:-/tmp}/fbcd-pg.XXXXXX")
SERVE_PID= FORGE_PID=
cleanup() {
	for p in $SERVE_PID $FORGE_PID; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
	if [ -f "$PGDIR/url" ]; then sh "$LIB/pg-stop.sh" "$PGDIR"; else rm -rf "$PGDIR"; fi
	rm -rf "$T"
}
trap cleanup EXIT
URL=$(sh "$LIB/pg-start.sh" "$PGDIR") || { [ $? -eq 77 ] && skip "no PostgreSQL"; echo "FAIL: pg-start"; exit 1; }
. "$LIB/pg-common.sh"

F=$T/forge.git
git clone -q --mirror "$BUNDLE" "$F" || skip "cannot clone $BUNDLE"
REC=$T/requests.jsonl
: >"$REC"
python3 "$LIB/fake-forge.py" "$T/forgeport" "$REC" &
FORGE_PID=$!
i=0
until [ -s "$T/forgeport" ]; do i=$((i + 1)); [ $i -gt 100 ] && { echo "FAIL: fake forge did not start"; exit 1; }; sleep 0.1; done
SECRET=replay-webhook-secret-9e1f
printf 'replay-token\n' >"$T/token"
cat >"$T/fbcd.yaml" <<YAML
repositories:
  - name: community
    url: file://$F
    forge: {kind: github, project: org/community, api: "http://127.0.0.1:$(cat "$T/forgeport")"}
    credentials: {tokenFile: $T/token, webhookSecretEnv: WH_SECRET}
    pollSeconds: 0
YAML
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
WH_SECRET=$SECRET "$FBCD" serve --config "$T/fbcd.yaml" --listen "127.0.0.1:$PORT" \
	--database-url "$URL" --data-dir "$T/data" --workers 2 --job-poll-ms 100 >"$T/serve.log" 2>&1 &
SERVE_PID=$!
i=0
until curl -sf "http://127.0.0.1:$PORT/healthz" >/dev/null 2>&1; do
	i=$((i + 1)); [ $i -gt 100 ] && { echo "FAIL: serve did not start"; cat "$T/serve.log"; exit 1; }
	sleep 0.1
done

out=$(python3 - "$FBCD" "$F" "$PORT" "$SECRET" "$URL" "$PG_BINDIR/psql" "$REC" "$T" \
	"${FBCD_REPLAY_EVERY:-1}" "${FBCD_REPLAY_PUSHES:-6}" "${BENCH:-0}" <<'PY'
import hashlib, hmac, json, os, statistics, subprocess, sys, time, urllib.request
fbcd, F, port, secret, url, psql, rec, T, every, pushes, bench = sys.argv[1:12]
every, pushes, bench = int(every), int(pushes), bench == "1"
B = "http://127.0.0.1:%s" % port
fails = []
def git(*a):
    return subprocess.run(["git", "-C", F] + list(a), check=True, capture_output=True, text=True).stdout.strip()
def sql(q):
    return subprocess.run([psql, "-X", "-q", "-t", "-A", url, "-c", q], check=True, capture_output=True, text=True).stdout.strip()
def deliver(event, delivery, body):
    data = json.dumps(body).encode()
    sig = "sha256=" + hmac.new(secret.encode(), data, hashlib.sha256).hexdigest()
    req = urllib.request.Request(B + "/v1/webhooks/github", data=data, method="POST", headers={
        "X-GitHub-Event": event, "X-GitHub-Delivery": delivery, "X-Hub-Signature-256": sig})
    with urllib.request.urlopen(req, timeout=30) as r:
        return r.status, json.load(r)
def wait(q, want, timeout=120):
    end = time.time() + timeout
    while time.time() < end:
        v = sql(q)
        if v == want:
            return True
        time.sleep(0.05)
    return False
GH = {"success": "success", "warning": "neutral", "skipped": "skipped", "action_required": "action_required"}

# pull requests in history order: main's first-parent chain, each commit's pull request
prs = {}
for line in git("for-each-ref", "--format=%(objectname) %(refname)", "refs/pull").splitlines():
    sha, ref = line.split()
    prs[sha] = int(ref.split("/")[2])
chain = git("rev-list", "--first-parent", "--reverse", "main").split()
steps = []
for i, c in enumerate(chain[1:], 1):
    n, head = prs.get(c), c
    if n is None:
        p2 = subprocess.run(["git", "-C", F, "rev-parse", "-q", "--verify", c + "^2"], capture_output=True, text=True).stdout.strip()
        if p2 in prs:
            n, head = prs[p2], p2
    if n is not None:
        steps.append((chain[i - 1], c, head, n))
tip = chain[-1]
lat, alone, checked = [], [], 0
for k, (base, commit, head, n) in enumerate(steps):
    if k % every:
        continue
    git("update-ref", "refs/heads/main", base)
    lines0 = sum(1 for _ in open(rec))
    t0 = time.time()
    st, _ = deliver("pull_request", "o-%d" % n, {"action": "opened", "number": n,
        "pull_request": {"number": n, "title": "pr", "user": {"login": "someone"},
                         "head": {"sha": head, "ref": "pr"}, "base": {"sha": base, "ref": "main"}},
        "repository": {"full_name": "org/community"}, "sender": {"login": "someone"}})
    if st != 202:
        fails.append("#%d: webhook %d" % (n, st)); continue
    if not wait("SELECT count(*) FROM jobs WHERE kind = 'forge.report' AND payload->>'phase' = 'final' AND (payload->>'number')::int = %d AND state = 'succeeded'" % n, "1"):
        fails.append("#%d: no final report: %s" % (n, sql("SELECT kind, state, error FROM jobs WHERE (payload->>'number')::int = %d" % n)))
        continue
    recs = [json.loads(l) for l in open(rec)][lines0:]
    lat.append(max(r["t"] for r in recs) - t0)
    t1 = time.time()
    cli = subprocess.run([fbcd, "pr", "check", "--repo", F, "--base", base, "--head", head, "--author", "someone", "--output", "json"],
                         capture_output=True, text=True)
    alone.append(time.time() - t1)
    checked += 1
    if bench:
        continue
    want = json.loads(cli.stdout)
    got = json.loads(sql("SELECT result FROM pull_checks WHERE number = %d ORDER BY id DESC LIMIT 1" % n))
    norm = lambda d: [(c["id"], c["conclusion"], sorted(json.dumps(a, sort_keys=True) for a in c.get("annotations", []))) for c in d["checks"]]
    if (got["conclusion"], norm(got)) != (want["conclusion"], norm(want)):
        fails.append("#%d: service %s != cli %s" % (n, [(c[0], c[1]) for c in norm(got)], [(c[0], c[1]) for c in norm(want)]))
    done = sorted(r["body"]["conclusion"] for r in recs if r["method"] == "PATCH" and r["body"].get("status") == "completed")
    exp = sorted(GH.get(c["conclusion"], "failure") for c in want["checks"])
    if done != exp:
        fails.append("#%d: forge got %s, cli says %s" % (n, done, exp))
    if not any(r["path"].endswith("/issues/%d/comments" % n) for r in recs):
        fails.append("#%d: no summary comment" % n)

# 2. the last commits pushed one by one
git("update-ref", "refs/heads/main", tip)
pushed = 0
for base, commit, head, n in steps[-pushes:] if pushes else []:
    git("update-ref", "refs/heads/main", commit)
    deliver("pull_request", "m-%d" % n, {"action": "closed", "number": n,
        "pull_request": {"number": n, "merged": True, "merge_commit_sha": commit, "title": "pr", "user": {"login": "someone"},
                         "head": {"sha": head, "ref": "pr"}, "base": {"sha": base, "ref": "main"}},
        "repository": {"full_name": "org/community"}, "sender": {"login": "someone"}})
    st, body = deliver("push", "p-%d" % n, {"ref": "refs/heads/main", "before": base, "after": commit,
        "repository": {"full_name": "org/community"}, "sender": {"login": "someone"}})
    if not wait("SELECT state FROM jobs WHERE id = %d" % body["job"], "succeeded", 600):
        fails.append("ingest of %s: %s" % (commit[:12], sql("SELECT state, error FROM jobs WHERE id = %d" % body["job"])))
        continue
    pushed += 1
    res = json.loads(sql("SELECT result FROM jobs WHERE id = %d" % body["job"]))
    made = [c for c in res["catalogs"] if c.get("created")]
    for c in made:
        prov = sql("SELECT r.commit || ' ' || coalesce(r.pull_request::text, '-') FROM revisions r JOIN catalogs k ON k.id = r.catalog_id WHERE k.name = '%s' AND r.number = %d" % (c["catalog"], c["revision"]))
        if prov != "%s %d" % (commit, n):
            fails.append("%s revision %d: provenance %s, want %s #%d" % (c["catalog"], c["revision"], prov, commit[:12], n))
    if any(not c.get("valid") for c in res["catalogs"]):
        fails.append("%s: invalid catalogs %s" % (commit[:12], [c["catalog"] for c in res["catalogs"] if not c.get("valid")]))
# the catalogs of the last pushed commit equal fbcd repo catalogs + fbcd render
if pushed and not bench:
    last = steps[-1][1]
    out = os.path.join(T, "rc")
    subprocess.run([fbcd, "repo", "catalogs", "--repo", F, "--rev", last, "--output", out], check=True, capture_output=True)
    for name in sorted(os.listdir(out)):
        want = subprocess.run([fbcd, "render", os.path.join(out, name)], check=True, capture_output=True).stdout
        with urllib.request.urlopen(B + "/catalogs/%s/api/v1/all" % name, timeout=60) as r:
            got = r.read()
        if got != want:
            fails.append("catalog %s differs from fbcd repo catalogs + render at %s" % (name, last[:12]))
def pct(v, p):
    v = sorted(v); return v[min(len(v) - 1, int(round(p / 100 * (len(v) - 1))))]
if bench and lat:
    print("replay: %d pull requests of history.bundle, warm, load %s" % (checked, open("/proc/loadavg").read().split()[0]))
    print("  webhook -> last report request: p50 %.0f ms, p99 %.0f ms, max %.0f ms" % (pct(lat, 50) * 1e3, pct(lat, 99) * 1e3, max(lat) * 1e3))
    print("  fbcd pr check alone (a process each): p50 %.0f ms, p99 %.0f ms" % (pct(alone, 50) * 1e3, pct(alone, 99) * 1e3))
    print("  queue and reporting overhead at p50: %.0f ms" % ((pct(lat, 50) - pct(alone, 50)) * 1e3))
    print("  per job kind: queued -> started, started -> finished (means), attempts")
    for line in sql("SELECT kind || ' ' || round(avg(extract(epoch FROM started_at - created_at)) * 1000) || ' ' || round(avg(extract(epoch FROM finished_at - started_at)) * 1000) || ' ' || sum(attempts) || ' ' || count(*) FROM jobs WHERE state = 'succeeded' GROUP BY kind ORDER BY kind").splitlines():
        k, q, r, a, n = line.split()
        print("    %-13s %6s ms %6s ms  %s attempts for %s jobs" % (k, q, r, a, n))
print("CHECKED %d PUSHED %d WANT %d" % (checked, pushed, min(pushes, len(steps))))
for f in fails[:40]:
    print("FAIL: " + f)
print("FAILS %d" % len(fails))
PY
)
echo "$out" | grep -v '^CHECKED\|^FAILS'
n=$(echo "$out" | sed -n 's/^CHECKED \([0-9]*\) PUSHED \([0-9]*\) WANT \([0-9]*\)/\1/p')
p=$(echo "$out" | sed -n 's/^CHECKED \([0-9]*\) PUSHED \([0-9]*\) WANT \([0-9]*\)/\2/p')
w=$(echo "$out" | sed -n 's/^CHECKED \([0-9]*\) PUSHED \([0-9]*\) WANT \([0-9]*\)/\3/p')
f=$(echo "$out" | sed -n 's/^FAILS //p')
echo "    $n pull requests replayed, $p commits pushed"
[ "${f:-1}" = 0 ] && [ "${n:-0}" -gt 0 ] && pass || fail "replay: ${f:-?} differences"
[ "${BENCH:-0}" = 1 ] || [ "${p:-0}" = "${w:-x}" ] && pass || fail "pushed $p of $w commits"
stop_clean "$SERVE_PID" "$T/serve.log"; SERVE_PID=
finish
