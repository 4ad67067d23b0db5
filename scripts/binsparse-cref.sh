#!/usr/bin/env bash
# Checks mlfeed's Binsparse files against the Binsparse C reference implementation
# (github.com/GraphBLAS/binsparse-reference-c), both ways, on the Matrix Market files of
# ../shared/testdata/binsparse:
#
#   1. the reference reads what `mlfeed convert x.mtx y.bsp.h5` writes (CSR, COO, CSC) and
#      check_equivalence finds it equal to x.mtx as the reference reads it;
#   2. mlfeed reads what the reference's mtx2bsp writes (deflate level 1) and converts it back to
#      Matrix Market; check_equivalence finds that equal to mtx2bsp's file;
#   3. `mlfeed convert --write-opt minimize=true` writes the same arrays, of the same types, as
#      mtx2bsp (check_equivalence compares types too).
#
# Usage: scripts/binsparse-cref.sh SOURCE_DIR   (or $BINSPARSE_C_SRC): a checkout of the
# reference. The tools are built here with gcc against Debian's libhdf5-dev and libcjson-dev
# (apt-get install -y libhdf5-dev libcjson-dev); the reference's CMake fetches cJSON from the
# network, so it is not used. A manual check, not run by CI (CI has no copy of the reference).
set -euo pipefail
cd "$(dirname "$0")/.."
src=${1:-${BINSPARSE_C_SRC:-}}
if [ -z "$src" ] || [ ! -f "$src/examples/check_equivalence.c" ]; then
	echo "usage: $0 BINSPARSE_REFERENCE_C_SOURCE_DIR (git clone https://github.com/GraphBLAS/binsparse-reference-c)" >&2
	exit 2
fi
if [ ! -e /usr/include/hdf5/serial/hdf5.h ] || [ ! -e /usr/include/cjson/cJSON.h ]; then
	echo "$0: needs libhdf5-dev and libcjson-dev (apt-get install -y libhdf5-dev libcjson-dev)" >&2
	exit 2
fi
data=../shared/testdata/binsparse
work=$(mktemp -d "${TMPDIR:-/tmp}/mlfeed-cref.XXXXXX")
trap 'rm -rf "$work"' EXIT

# The reference includes <cJSON/cJSON.h>; Debian installs <cjson/cJSON.h>.
mkdir -p "$work/inc/cJSON" "$work/bin"
echo '#include <cjson/cJSON.h>' >"$work/inc/cJSON/cJSON.h"
for tool in mtx2bsp check_equivalence; do
	gcc -O2 -std=gnu11 -I"$src/include" -I"$work/inc" -I/usr/include/hdf5/serial \
		-o "$work/bin/$tool" "$src/examples/$tool.c" "$src"/src/*.c \
		-L/usr/lib/x86_64-linux-gnu/hdf5/serial -lhdf5 -lcjson -lm
done
go build -o "$work/bin/mlfeed" ./cmd/mlfeed
ref=$(git -C "$src" log -1 --format=%h 2>/dev/null || echo "unknown commit")
echo "Binsparse C reference ($ref) against mlfeed"

fail=0
# same CHECK_NAME FILE1 FILE2: check_equivalence's verdict ("OK!" on its last line).
same() {
	local out
	out=$("$work/bin/check_equivalence" "$2" "$3" 2>&1 | tail -1)
	if [ "$out" = "OK!" ]; then
		printf '  %-44s ok\n' "$1"
	else
		printf '  %-44s FAIL: %s\n' "$1" "$out"
		fail=1
	fi
}
for m in "$data"/finch-2024/b1_ss.mtx "$data"/finch-2024/farm.mtx "$data"/reference-c/herm.mtx "$data"/reference-c/sympat.mtx; do
	n=$(basename "$m" .mtx)
	for f in CSR COO CSC; do
		w="$work/$n.$f"
		"$work/bin/mlfeed" convert -O structure=keep --write-opt format=$f "$m" "$w.mlfeed.bsp.h5"
		same "C reads mlfeed's $n $f" "$m" "$w.mlfeed.bsp.h5"
		"$work/bin/mtx2bsp" "$m" "$w.c.bsp.h5" $f 1 >/dev/null
		"$work/bin/mlfeed" convert -O structure=keep "$w.c.bsp.h5" "$w.mlfeed.mtx"
		same "mlfeed reads C's $n $f" "$w.c.bsp.h5" "$w.mlfeed.mtx"
		"$work/bin/mlfeed" convert -O structure=keep --write-opt format=$f --write-opt minimize=true "$m" "$w.min.bsp.h5"
		same "minimize=true writes as mtx2bsp: $n $f" "$w.c.bsp.h5" "$w.min.bsp.h5"
	done
done
[ $fail = 0 ] && echo "all equal" || { echo "some checks failed" >&2; exit 1; }
