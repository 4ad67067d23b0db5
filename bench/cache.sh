#!/usr/bin/env bash
# The node cache (--cache) on loopback object storage, in one run: an S3-compatible server
# (versitygw on 127.0.0.1) holds an MNIST-sized data set as 8 CBF shards with a manifest
# (60000 x 784 float32, 189 MB). Prints the time of one sweep (`mlfeed batches --sweeps 1
# --window 4`, the whole command, median of 5 rounds; local and warm: of 21) from the local
# shards, from s3:// without a cache, with a cold cache (the first sweep) and a warm one (the
# second: goal within 1.2x of local), the bytes each fetched from the server (--cache-stats), then what 4 processes
# (ranks) starting together on a cold cache fetch, and sweeps of a cache that holds half the
# data set: bytes fetched, and the most the cache directory held against its limit.
set -euo pipefail
cd "$(dirname "$0")/.."
VGW=$(command -v versitygw || echo "$(go env GOPATH)/bin/versitygw")
[ -x "$VGW" ] || { echo "skipped: versitygw is not installed (scripts/setup.sh installs it)"; exit 0; }
T=$(mktemp -d)
pid=
trap 'kill $pid 2>/dev/null; rm -rf "$T"' EXIT
go build -o "$T/mlfeed" ./cmd/mlfeed
ML=$T/mlfeed
mkdir -p "$T/root/bench"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
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

sweep() { # seconds of one sweep (the whole command); the --cache-stats line to $T/stats
  local s e
  s=$(date +%s.%N)
  "$ML" batches --mb-size 256 --sweeps 1 --window 4 "$@" >/dev/null 2>"$T/stats"
  e=$(date +%s.%N)
  echo "$e - $s" | bc -l
}
fetched() { sed -n 's/^cache: fetched \([0-9]*\) bytes.*read past the cache [0-9]* objects (\([0-9]*\) bytes).*/\1 \2/p' "$T/stats" | awk '{print $1+$2}'; }
median() { sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
cat "$T"/local/* >/dev/null
for _ in 1 2; do sweep "$URL" >/dev/null; done # warm up the server
sweep --cache "$T/warm" --cache-stats "$URL" >/dev/null
for _ in 1 2 3 4 5; do
  sweep "$T/local/" >>"$T/loc"
  sweep "$URL" >>"$T/rem"
  rm -rf "$T/cold"
  sweep --cache "$T/cold" --cache-stats "$URL" >>"$T/cold.t"
  fetched >>"$T/cold.f"
  sweep --cache "$T/warm" --cache-stats "$URL" >>"$T/warm.t"
  fetched >>"$T/warm.f"
done
# The warm sweep against local, whose difference is small beside a loaded machine's noise: 16
# more rounds of these two (21 in all).
for _ in $(seq 16); do
  sweep "$T/local/" >>"$T/loc"
  sweep --cache "$T/warm" --cache-stats "$URL" >>"$T/warm.t"
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
    u=$( (find "$T/half/data" "$T/half/tmp" -type f -printf '%s\n' 2>/dev/null || true) | awk '{s+=$1} END {print s+0}')
    [ "$u" -gt "$peak" ] && peak=$u
    sleep 0.01
  done
  wait $bp
  fetched >>"$T/half.f"
done
python3 - "$size" "$(median <"$T/loc")" "$(median <"$T/rem")" "$(median <"$T/cold.t")" "$(median <"$T/warm.t")" \
  "$(median <"$T/cold.f")" "$(median <"$T/warm.f")" "$ranks" "$half" "$peak" "$(tr '\n' ' ' <"$T/half.f")" <<'PY'
import sys
size = int(sys.argv[1]); loc, rem, cold, warm = map(float, sys.argv[2:6])
coldf, warmf, ranks, half, peak = map(int, sys.argv[6:11]); halff = [int(x) for x in sys.argv[11].split()]
print(f"8 CBF shards, {size/1e6:.0f} MB, on an S3-compatible server on loopback (versitygw); one sweep, median of 5 (local and warm: 21):")
print(f"  local files:            {loc*1000:6.0f} ms")
print(f"  s3, no cache:           {rem*1000:6.0f} ms: {rem/loc:.2f}x local")
print(f"  s3, cold cache (fill):  {cold*1000:6.0f} ms: {cold/loc:.2f}x local, fetched {coldf} bytes ({coldf/size:.3f} of the data set)")
print(f"  s3, warm cache:         {warm*1000:6.0f} ms: {warm/loc:.2f}x local (goal <= 1.2x), fetched {warmf} bytes")
print(f"  4 ranks on a cold cache fetched {ranks} bytes together ({ranks/size:.3f} of the data set)")
print(f"  cache of half the data set ({half} bytes): sweeps fetched {', '.join(str(f) for f in halff)} bytes; the cache held at most {peak} bytes ({peak/half:.3f} of its limit)")
PY
