#!/usr/bin/env bash
# Regenerates the profiles that `go build` optimises mlfeed with (profile-guided
# optimisation: cmd/mlfeed/default.pgo for the command, capi/default.pgo for the Python
# package's library, the same profile). Go uses a main package's default.pgo on its own
# (-pgo=auto), so `go install`, `go build ./cmd/mlfeed`, scripts/python.sh and
# `pip install ./python` all build with it; nothing else needs it.
#
# It builds mlfeed with the pgoprofile tag (cmd/mlfeed/pgo_profile.go: $MLFEED_CPUPROFILE
# receives the CPU profile of a run), runs the work the benchmarks time and users run most
# (converting CTF with a dense and a sparse stream to CBF with and without --compat ctf2bin,
# MNIST to IDX float32 and CBF, randomized and in-order minibatch sweeps over IDX, CBF and
# CTF, reading CTF and CBF through `cat`), and merges the profiles. Rerun it when the hot
# code changes much; a stale profile only optimises less (Go ignores what it no longer finds).
# Needs ../shared/testdata/mnist.
set -euo pipefail
cd "$(dirname "$0")/.."
MN=${MLFEED_SHARED:-../shared}/testdata/mnist
[ -f "$MN/train-images-idx3-ubyte.gz" ] || { echo "pgo.sh: $MN/train-images-idx3-ubyte.gz is absent" >&2; exit 1; }
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
go build -pgo=off -tags pgoprofile -o "$T/mlfeed" ./cmd/mlfeed
go build -pgo=off -o "$T/cbfbench" ./format/cbf/internal/cbfbench
"$T/cbfbench" genctf "$T/in.ctf" 200
n=0
run() { n=$((n + 1)); MLFEED_CPUPROFILE="$T/$n.pprof" "$T/mlfeed" "$@" > /dev/null; }
in=(--input features:dense:32:F --input labels:sparse:10000:S)
for _ in 1 2 3 4 5 6; do
  run convert -q "${in[@]}" --compat ctf2bin --chunk-size 33554432 "$T/in.ctf" "$T/compat.cbf"
  rm "$T/compat.cbf"
done
run convert -q "${in[@]}" "$T/in.ctf" "$T/in.cbf"
run cat "${in[@]}" "$T/in.ctf"
run cat "$T/in.cbf"
for _ in 1 2; do
  run convert -q "$MN/train-images-idx3-ubyte.gz" "$T/images.idx" --type float32
  rm "$T/images.idx"
done
"$T/mlfeed" convert -q "$MN/train-images-idx3-ubyte.gz" "$T/images.idx" --type float32
"$T/mlfeed" convert -q "$MN/train-labels-idx1-ubyte.gz" "$T/labels.idx"
run convert -q --type float32 "$T/images.idx" "$T/labels.idx" "$T/mnist.cbf"
for f in "$T/images.idx $T/labels.idx" "$T/mnist.cbf"; do
  # shellcheck disable=SC2086 # two files, or one
  run batches --mb-size 256 --sweeps 40 --seed 1 $f
  # shellcheck disable=SC2086
  run batches --mb-size 256 --sweeps 40 --seed 1 --no-randomize $f
done
run batches --mb-size 256 --sweeps 2 --seed 1 "${in[@]}" "$T/in.ctf"
go tool pprof -proto "$T"/*.pprof > cmd/mlfeed/default.pgo
cp cmd/mlfeed/default.pgo capi/default.pgo
echo "wrote cmd/mlfeed/default.pgo and capi/default.pgo from $n profiles" >&2
