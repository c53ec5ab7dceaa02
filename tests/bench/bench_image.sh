#!/bin/sh
# Catalog image benchmarks (print only, assert nothing), each next to a
# baseline measured in the same run on the same input:
#  - fbcd image build, 1 and 4 platforms  vs  tar -czf of the same /configs tree
#    (1 platform alternating with tar, with the ratio of the medians)
#  - fbcd image push to a local docker-registry  vs  skopeo copy oci:DIR docker://
#  - a second push of the unchanged image
# BENCH_RUNS (default 5) runs each; min / median / max in milliseconds.
# usage: bench_image.sh FBCD CATALOG
FBCD=$1
CATALOG=$2
RUNS=${BENCH_RUNS:-5}
TOOLS=$(dirname "$0")/../integration/registry_tools.py
[ -d "$CATALOG" ] || { echo "SKIP: $CATALOG not found"; exit 77; }
for t in docker-registry skopeo umoci; do
	command -v $t >/dev/null 2>&1 || { echo "SKIP: $t not installed"; exit 77; }
done
T=$(mktemp -d "${TMPDIR:-/tmp}/fbcd-bench-image.XXXXXX")
RPID=""
trap '[ -n "$RPID" ] && kill $RPID 2>/dev/null; rm -rf "$T"' EXIT

ms() { date +%s%N | cut -c1-13; }
# stats NAME FILE: min/median/max of the numbers in FILE
stats() {
	sort -n "$2" | awk -v name="$1" '{a[NR]=$1} END {printf "%-46s min %6d  median %6d  max %6d ms\n", name, a[1], a[int((NR+1)/2)], a[NR]}'
}
# bench NAME CMD...: RUNS timed runs of CMD (output discarded)
bench() {
	name=$1
	shift
	: >"$T/times"
	i=0
	while [ $i -lt "$RUNS" ]; do
		t0=$(ms)
		"$@" >/dev/null 2>&1 || echo "  ($name: run failed)"
		echo $(($(ms) - t0)) >>"$T/times"
		i=$((i + 1))
	done
	stats "$name" "$T/times"
}

echo "machine: $(nproc) cores, shared with other jobs (load $(cut -d' ' -f1-3 /proc/loadavg)): figures are indicative"
"$FBCD" image build --catalog "$CATALOG" --output "oci:$T/ref" >/dev/null 2>&1
rm -rf "$T/u" && skopeo copy -q oci:"$T/ref" oci:"$T/sk:x" >/dev/null 2>&1 &&
	umoci unpack --rootless --image "$T/sk:x" "$T/u" >/dev/null 2>&1
echo "--- build (catalog $(du -sh "$CATALOG" | cut -f1), $RUNS runs)"
# alternating (tar, build, tar, build...) so that a change of load hits both; ratio of the
# medians and the per-run ratios
: >"$T/tt"
: >"$T/tb"
: >"$T/tr"
i=0
while [ $i -lt "$RUNS" ]; do
	t0=$(ms); sh -c "cd '$T/u/rootfs' && tar -czf '$T/configs.tgz' configs"; t1=$(ms)
	rm -rf "$T/b1"
	"$FBCD" image build --catalog "$CATALOG" --output oci:"$T/b1" >/dev/null 2>&1 || echo "  (build failed)"
	t2=$(ms)
	echo $((t1 - t0)) >>"$T/tt"
	echo $((t2 - t1)) >>"$T/tb"
	awk -v a=$((t2 - t1)) -v b=$((t1 - t0)) 'BEGIN {if (b > 0) printf "%.3f\n", a / b}' >>"$T/tr"
	i=$((i + 1))
done
stats "baseline: tar -czf of the unpacked /configs" "$T/tt"
stats "fbcd image build, 1 platform" "$T/tb"
sort -n "$T/tt" | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}' >"$T/mt"
sort -n "$T/tb" | awk -v t="$(cat "$T/mt")" '{a[NR]=$1} END {printf "  ratio of medians %.2fx (goal <= 1.3x); ", a[int((NR+1)/2)] / t}'
sort -g "$T/tr" | awk '{a[NR]=$1} END {printf "per-run ratios min %.2f median %.2f max %.2f\n", a[1], a[int((NR+1)/2)], a[NR]}'
bench "fbcd image build, 4 platforms" sh -c "rm -rf '$T/b4' && '$FBCD' image build --catalog '$CATALOG' --platform linux/amd64 --platform linux/arm64 --platform linux/ppc64le --platform linux/s390x --output oci:'$T/b4'"
bench "  (of which: fbcd render, loading and rendering)" sh -c "'$FBCD' render '$CATALOG' >/dev/null"

P=$(python3 "$TOOLS" free-port)
mkdir -p "$T/reg"
cat >"$T/reg/config.yml" <<EOF
version: 0.1
log:
  level: error
storage:
  filesystem:
    rootdirectory: $T/reg/data
http:
  addr: 127.0.0.1:$P
EOF
docker-registry serve "$T/reg/config.yml" >"$T/reg.log" 2>&1 &
RPID=$!
i=0
until curl -s -o /dev/null "http://127.0.0.1:$P/v2/"; do i=$((i + 1)); [ $i -gt 100 ] && { echo "registry did not start"; exit 1; }; sleep 0.1; done
R=127.0.0.1:$P
"$FBCD" image build --catalog "$CATALOG" --platform linux/amd64 --platform linux/arm64 --platform linux/ppc64le --platform linux/s390x --output "oci:$T/img" >/dev/null 2>&1
echo "--- push of the 4-platform image to a local docker-registry (a new repository each run)"
n=0
: >"$T/times"
i=0
while [ $i -lt "$RUNS" ]; do
	t0=$(ms); skopeo copy -q --all --dest-tls-verify=false oci:"$T/img" "docker://$R/sk$i/cat:v1" >/dev/null 2>&1 || echo "  (skopeo failed)"
	echo $(($(ms) - t0)) >>"$T/times"; i=$((i + 1))
done
stats "baseline: skopeo copy --all oci:DIR docker://" "$T/times"
: >"$T/times"
i=0
while [ $i -lt "$RUNS" ]; do
	t0=$(ms); "$FBCD" image push oci:"$T/img" "$R/fb$i/cat:v1" --insecure >/dev/null 2>&1 || echo "  (fbcd push failed)"
	echo $(($(ms) - t0)) >>"$T/times"; i=$((i + 1))
done
stats "fbcd image push" "$T/times"
bench "baseline: skopeo copy, unchanged image again" skopeo copy -q --all --dest-tls-verify=false oci:"$T/img" "docker://$R/sk0/cat:v1"
bench "fbcd image push, unchanged image again" "$FBCD" image push oci:"$T/img" "$R/fb0/cat:v1" --insecure
exit 0
