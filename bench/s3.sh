#!/usr/bin/env bash
# Object storage on loopback, in one run: an S3-compatible server (versitygw, started here on
# 127.0.0.1) holds a large CBF file (MNIST-sized, 60000 x 784 float32); prints the time to the
# first minibatch of `mlfeed batches --window 4` (chunks of 4 MB; the whole command, median of
# 5) from s3:// against the same from the local file (goal: within 1.5x), and the bytes `info`
# and `cat -n 1` fetch against the object's size.
set -euo pipefail
cd "$(dirname "$0")/.."
VGW=$(command -v versitygw || echo "$(go env GOPATH)/bin/versitygw")
[ -x "$VGW" ] || { echo "skipped: versitygw is not installed (scripts/setup.sh installs it)"; exit 0; }
T=$(mktemp -d)
pid= dpid=
trap 'kill $pid $dpid 2>/dev/null; rm -rf "$T"' EXIT
go build -o "$T/mlfeed" ./cmd/mlfeed
ML=$T/mlfeed
mkdir -p "$T/root/bench"
freeport() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
# The server stands in for a remote service, whose CPU is not this machine's: it runs as S3
# does, keeping connections alive, and without logging each request to its standard output.
# versitygw's defaults (a connection per request, each logged) are measured too, on a second
# server over the same directory.
port=$(freeport)
"$VGW" --access benchkey --secret benchsecret --port "127.0.0.1:$port" --keep-alive --quiet posix "$T/root" >/dev/null 2>&1 &
pid=$!
dport=$(freeport)
"$VGW" --access benchkey --secret benchsecret --port "127.0.0.1:$dport" posix "$T/root" >/dev/null 2>&1 &
dpid=$!
# GOGC or GOMEMLIMIT in the environment would also change mlfeed's starting heap (64 MB before
# its first collection; see docs/scale.md), in both runs alike.
export AWS_ENDPOINT_URL=http://127.0.0.1:$port AWS_ACCESS_KEY_ID=benchkey AWS_SECRET_ACCESS_KEY=benchsecret AWS_REGION=us-east-1 AWS_EC2_METADATA_DISABLED=true
# A CA bundle means nothing to an http:// endpoint, but the AWS SDK parses one named by
# AWS_CA_BUNDLE (some machines set it to the system's) whenever it makes a client: 2-7 ms of
# CPU per process. The goal is measured without it; where it is set, that time is shown too.
bundle=${AWS_CA_BUNDLE:-}
unset AWS_CA_BUNDLE
for p in $port $dport; do
  for _ in $(seq 100); do (echo > /dev/tcp/127.0.0.1/$p) 2>/dev/null && break; sleep 0.1; done
done
"$ML" demo -n 60000 --dir "$T/demo" >/dev/null
"$ML" convert -q --chunk-size 4000000 --type float32 "$T/demo/demo-images-idx3-ubyte" "$T/demo/demo-labels-idx1-ubyte" "$T/data.cbf"
"$ML" convert -q --chunk-size 4000000 "$T/data.cbf" s3://bench/data.cbf
size=$(stat -c %s "$T/data.cbf")

once() { # seconds to the first minibatch of 256 (the whole command)
  local s e
  s=$(date +%s.%N); "$ML" batches --mb-size 256 --max-samples 256 --window 4 "$1" >/dev/null; e=$(date +%s.%N)
  echo "$e - $s" | bc -l
}
median() { sort -n | sed -n 3p; }
cat "$T/data.cbf" >/dev/null
# Warm up, as the local file's pages are: a service the client reaches has been running (a
# fresh versitygw grows its heap and its pools of workers in its first requests).
for _ in 1 2; do
  once s3://bench/data.cbf >/dev/null
  AWS_ENDPOINT_URL=http://127.0.0.1:$dport once s3://bench/data.cbf >/dev/null
done
# Five rounds, the runs of a round one after another, so that the machine's load falls on
# all alike; the median of each.
for _ in 1 2 3 4 5; do
  once "$T/data.cbf" >>"$T/loc"
  once s3://bench/data.cbf >>"$T/rem"
  [ -z "$bundle" ] || AWS_CA_BUNDLE=$bundle once s3://bench/data.cbf >>"$T/remca"
  AWS_ENDPOINT_URL=http://127.0.0.1:$dport once s3://bench/data.cbf >>"$T/remdef"
done
loc=$(median <"$T/loc")
rem=$(median <"$T/rem")
remdef=$(median <"$T/remdef")
remca=-1
[ -z "$bundle" ] || remca=$(median <"$T/remca")
fetched=$("$ML" info --json s3://bench/data.cbf | python3 -c 'import json,sys; print(json.load(sys.stdin)["details"].get("fetched_bytes", -1))')
cat1=$(go run ./bench/s3fetch s3://bench/data.cbf 2>/dev/null || echo -1)
python3 - "$loc" "$rem" "$size" "$fetched" "$cat1" "$remca" "$remdef" <<'PY'
import sys
loc, rem, size, info, cat1, remca, remdef = float(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), float(sys.argv[6]), float(sys.argv[7])
print(f"CBF of {size/1e6:.0f} MB on an S3-compatible server on loopback (versitygw):")
print(f"  time to first minibatch: local {loc*1000:.0f} ms, s3 {rem*1000:.0f} ms: {rem/loc:.2f}x (goal <= 1.5x)")
print(f"  s3 from versitygw with its defaults (a connection per request, each logged): {remdef*1000:.0f} ms: {remdef/loc:.2f}x")
if remca >= 0:
    print(f"  s3 with AWS_CA_BUNDLE parsed, as this environment sets it: {remca*1000:.0f} ms: {remca/loc:.2f}x")
print(f"  bytes fetched by info: {info} ({info/size*100:.3f}% of the object)")
if cat1 >= 0:
    print(f"  bytes fetched by cat -n 1: {cat1} ({cat1/size*100:.2f}% of the object)")
PY
