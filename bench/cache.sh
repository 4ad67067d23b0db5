#!/usr/bin/env bash
# The node cache (--cache) on loopback object storage, in one run: an S3-compatible server
# (versitygw on 127.0.0.1) holds an MNIST-sized data set as 8 CBF shards with a manifest
# (60000 x 784 float32, 189 MB). Prints the time of one sweep (`mlfeed batches --sweeps 1
# --window 4`, the whole command, median of 5 interleaved rounds; local and warm: of 21) from
# the local shards, from s3:// without a cache, with a cold cache (the first sweep: goal
# within 1.2x of no cache) and a warm one (the second: goal within 1.2x of local), the bytes
# each fetched from the server (--cache-stats), then what 4 processes (ranks) starting
# together on a cold cache fetch, and sweeps of a cache that holds half the data set: bytes
# fetched, and the most the cache directory held against its limit. Beside
# each median time, the median CPU time of the mlfeed process (user + system), steadier than
# the time on a loaded machine. MLFEED=BINARY measures that build of mlfeed (say, an older
# one) instead of building this tree's; VERSITYGW=BINARY names the server.
set -euo pipefail
cd "$(dirname "$0")/.."
VGW=${VERSITYGW:-$(command -v versitygw || echo "$(go env GOPATH)/bin/versitygw")}
[ -x "$VGW" ] || { echo "skipped: versitygw is not installed (scripts/setup.sh installs it)"; exit 0; }
T=$(mktemp -d)
pid=
trap 'kill $pid 2>/dev/null; rm -rf "$T"' EXIT
if [ -n "${MLFEED:-}" ]; then
  ML=$MLFEED
else
  go build -o "$T/mlfeed" ./cmd/mlfeed
  ML=$T/mlfeed
fi
mkdir -p "$T/root/bench"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2>/dev/null || echo $((20000 + RANDOM % 20000)))
# As bench/s3.sh: the server runs as a service does, keeping connections alive, quiet.
"$VGW" --access benchkey --secret benchsecret --port "127.0.0.1:$port" --keep-alive --quiet posix "$T/root" >/dev/null 2>&1 &
pid=$!
export AWS_ENDPOINT_URL=http://127.0.0.1:$port AWS_ACCESS_KEY_ID=benchkey AWS_SECRET_ACCESS_KEY=benchsecret AWS_REGION=us-east-1 AWS_EC2_METADATA_DISABLED=true
unset AWS_CA_BUNDLE MLFEED_CACHE
for _ in $(seq 100); do (echo > /dev/tcp/127.0.0.1/$port) 2>/dev/null && break; sleep 0.1; done
"$ML" demo -n 60000 --dir "$T/demo" >/dev/null
in=("$T/demo/demo-images-idx3-ubyte" "$T/demo/demo-labels-idx1-ubyte")
"$ML" convert -q --chunk-size 4000000 --type float32 --shards 8 --to cbf "${in[@]}" "$T/local/"
"$ML" convert -q --chunk-size 4000000 --type float32 --shards 8 --to cbf "${in[@]}" s3://bench/shards/
size=$(cat "$T"/local/* | wc -c)
URL=s3://bench/shards/

sweep() { # seconds of one sweep (the whole command); its CPU seconds appended to $T/cpu; the
  # --cache-stats line to $T/stats
  local t
  t=$( { TIMEFORMAT='%R %U %S'; time "$ML" batches --mb-size 256 --sweeps 1 --window 4 "$@" >/dev/null 2>"$T/stats"; } 2>&1)
  awk '{print $2 + $3}' <<<"$t" >>"$T/cpu"
  awk '{print $1}' <<<"$t"
}
cpu() { tail -n 1 "$T/cpu" >>"$1"; }
fetched() { sed -n 's/^cache: fetched \([0-9]*\) bytes.*read past the cache [0-9]* objects (\([0-9]*\) bytes).*/\1 \2/p' "$T/stats" | awk '{print $1+$2}'; }
median() { sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
cat "$T"/local/* >/dev/null
for _ in 1 2; do sweep "$URL" >/dev/null; done # warm up the server
sweep --cache "$T/warm" --cache-stats "$URL" >/dev/null
for _ in 1 2 3 4 5; do
  sweep "$T/local/" >>"$T/loc"
  cpu "$T/loc.c"
  sweep "$URL" >>"$T/rem"
  cpu "$T/rem.c"
  rm -rf "$T/cold"
  sweep --cache "$T/cold" --cache-stats "$URL" >>"$T/cold.t"
  cpu "$T/cold.c"
  fetched >>"$T/cold.f"
  sweep --cache "$T/warm" --cache-stats "$URL" >>"$T/warm.t"
  cpu "$T/warm.c"
  fetched >>"$T/warm.f"
done
# The warm sweep against local, whose difference is small beside a loaded machine's noise: 16
# more rounds of these two (21 in all).
for _ in $(seq 16); do
  sweep "$T/local/" >>"$T/loc"
  cpu "$T/loc.c"
  sweep --cache "$T/warm" --cache-stats "$URL" >>"$T/warm.t"
  cpu "$T/warm.c"
done
# Four ranks of a job start together on a cold cache.
rm -rf "$T/ranks"
for r in 0 1 2 3; do
  "$ML" batches --mb-size 256 --sweeps 1 --window 4 --workers 4 --rank $r --cache "$T/ranks" --cache-stats "$URL" >/dev/null 2>"$T/rank$r" &
done
wait $(jobs -p | grep -v "^$pid$") 2>/dev/null || true
ranks=0
for r in 0 1 2 3; do
  cp "$T/rank$r" "$T/stats"
  ranks=$((ranks + $(fetched)))
done
# A cache that holds half the data set: three sweeps, watching its size.
half=$((size / 2))
rm -rf "$T/half"
: >"$T/half.f"
peak=0
for _ in 1 2 3; do
  "$ML" batches --mb-size 256 --sweeps 1 --window 4 --cache "$T/half:$half" --cache-stats "$URL" >/dev/null 2>"$T/stats" &
  bp=$!
  while kill -0 $bp 2>/dev/null; do
    # Under the cache's own lock, which evictions and new fills hold: a listing taken
    # between an eviction and the fill it makes room for would count both.
    u=$( (flock "$T/half/lock" find "$T/half/data" "$T/half/tmp" -type f -printf '%s\n' 2>/dev/null || true) | awk '{s+=$1} END {print s+0}')
    [ "$u" -gt "$peak" ] && peak=$u
    sleep 0.01
  done
  wait $bp
  fetched >>"$T/half.f"
done
m() { median <"$T/$1"; }
awk -v size="$size" -v loc="$(m loc)" -v rem="$(m rem)" -v cold="$(m cold.t)" -v warm="$(m warm.t)" \
  -v locc="$(m loc.c)" -v remc="$(m rem.c)" -v coldc="$(m cold.c)" -v warmc="$(m warm.c)" \
  -v coldf="$(m cold.f)" -v warmf="$(m warm.f)" -v ranks="$ranks" -v half="$half" -v peak="$peak" \
  -v halff="$(tr '\n' ' ' <"$T/half.f" | sed 's/ *$//; s/ /, /g')" 'BEGIN {
  printf "8 CBF shards, %.0f MB, on an S3-compatible server on loopback (versitygw); one sweep, median of 5 (local and warm: 21):\n", size / 1e6
  printf "  local files:            %6.0f ms (CPU %4.0f ms)\n", loc * 1000, locc * 1000
  printf "  s3, no cache:           %6.0f ms (CPU %4.0f ms): %.2fx local\n", rem * 1000, remc * 1000, rem / loc
  printf "  s3, cold cache (fill):  %6.0f ms (CPU %4.0f ms): %.2fx local, %.2fx no cache (goal <= 1.2x; CPU %.2fx), fetched %d bytes (%.3f of the data set)\n", cold * 1000, coldc * 1000, cold / loc, cold / rem, coldc / remc, coldf, coldf / size
  printf "  s3, warm cache:         %6.0f ms (CPU %4.0f ms): %.2fx local (goal <= 1.2x), fetched %d bytes\n", warm * 1000, warmc * 1000, warm / loc, warmf
  printf "  4 ranks on a cold cache fetched %d bytes together (%.3f of the data set)\n", ranks, ranks / size
  printf "  cache of half the data set (%d bytes): sweeps fetched %s bytes; the cache held at most %d bytes (%.3f of its limit)\n", half, halff, peak, peak / half
}'
