#!/usr/bin/env bash
# Reads the MNIST training images (60000 x 28 x 28 uint8) with mlfeed and with numpy in one run:
# load every pixel into memory and sum them, plain and gzip-compressed; prints the median of 5
# runs each and the ratio mlfeed/numpy (below 1 means mlfeed is faster).
# Needs ../shared/testdata/mnist; installs Debian's python3-numpy if missing.
set -euo pipefail
cd "$(dirname "$0")/.."
MN=${MLFEED_SHARED:-../shared}/testdata/mnist
[ -f "$MN/train-images-idx3-ubyte.gz" ] || { echo "skipped: $MN/train-images-idx3-ubyte.gz is absent"; exit 0; }
PY=/usr/bin/python3
if ! $PY -c 'import numpy' 2>/dev/null; then
  sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo apt-get update -qq && $sudo apt-get install -y -qq python3-numpy >/dev/null
fi
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
gz=$MN/train-images-idx3-ubyte.gz
plain=$T/train-images-idx3-ubyte
gzip -dc "$gz" > "$plain"
go build -o "$T/idxread" ./bench/idxread
cat "$plain" > /dev/null # page cache

numpy() {
  $PY - "$1" <<'PY'
import gzip, sys, time, statistics
import numpy as np
name = sys.argv[1]
times = []
for _ in range(5):
    t = time.perf_counter()
    opener = gzip.open if name.endswith('.gz') else open
    with opener(name, 'rb') as f:
        data = f.read()
    dims = np.frombuffer(data, dtype='>u4', count=data[3], offset=4)
    a = np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * data[3]).reshape(dims)
    total = int(a.sum(dtype=np.uint64))
    times.append(time.perf_counter() - t)
print(f"{statistics.median(times):.6f} {total}")
PY
}

printf '%-28s %12s %12s %8s\n' "case (60000x28x28 uint8)" "mlfeed s" "numpy s" "ratio"
for f in "$plain" "$gz"; do
  read -r ms msum < <("$T/idxread" -runs 5 "$f")
  read -r ns nsum < <(numpy "$f")
  [ "$msum" = "$nsum" ] || { echo "pixel sums differ: mlfeed $msum numpy $nsum"; exit 1; }
  case $f in *.gz) what="gzip";; *) what="plain (mmap)";; esac
  awk -v w="$what" -v m="$ms" -v n="$ns" 'BEGIN { printf "%-28s %12.4f %12.4f %7.2fx\n", w, m, n, m / n }'
done
