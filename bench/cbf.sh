#!/usr/bin/env bash
# CBF speed, in one run:
#  1. read: a generated CBF file of about 600 MB, dense and then sparse, decoded chunk by chunk
#     (format/cbf/internal/cbfbench) against `cat FILE > /dev/null` on the same page-cached
#     file, in five interleaved rounds; prints medians and mlfeed's throughput as a fraction
#     of cat's (goal: at least 0.5): decoding only, decoding and summing every value, and the
#     latter with one goroutine per core.
#  2. convert: a generated CTF file of about 200 MB (a dense and a sparse stream) to CBF with
#     `mlfeed convert --compat ctf2bin` and with CNTK's ctf2bin.py, when it is found ($CTF2BIN,
#     or ctf2bin.py on the PATH; skipped with a message otherwise); prints both times, the ratio,
#     and whether the two outputs are byte-identical.
# Needs Go, coreutils and awk; python3 for ctf2bin.py. Temporary files go to a directory under
# ${TMPDIR:-/tmp} that is removed at exit (about 1.8 GB at peak).
set -euo pipefail
cd "$(dirname "$0")/.."
READ_MB=${READ_MB:-600}
CTF_MB=${CTF_MB:-200}
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
go build -o "$T/mlfeed" ./cmd/mlfeed
go build -o "$T/cbfbench" ./format/cbf/internal/cbfbench

# Wall time of a command, without a process of ours between the two clock readings.
timeit() { local a=$EPOCHREALTIME; "$@"; local b=$EPOCHREALTIME; awk -v a="$a" -v b="$b" 'BEGIN { printf "%.6f\n", b - a }'; }
catfile() { cat "$1" > /dev/null; }
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

echo "== read (${READ_MB} MB files, page-cached; seconds, medians; ratio = cat time / mlfeed time)"
printf '%-7s %5s %8s %9s %9s %9s %9s %9s %9s\n' kind MB cat decode ratio dec+sum ratio par+sum ratio
for kind in dense sparse; do
  f=$T/$kind.cbf
  "$T/cbfbench" gen "$kind" "$f" "$READ_MB"
  cat "$f" > /dev/null
  mb=$(( $(stat -c %s "$f") / 1048576 ))
  # Five rounds, each timing cat and then mlfeed's three ways (each the median of 3 runs in
  # one process), so that all of them see the same machine load; medians over the rounds.
  : > "$T/c"; : > "$T/d"; : > "$T/m"; : > "$T/p"
  for _ in 1 2 3 4 5; do
    timeit catfile "$f" >> "$T/c"
    "$T/cbfbench" read -runs 3 -sum=false "$f" | cut -d' ' -f1 >> "$T/d"
    "$T/cbfbench" read -runs 3 "$f" | cut -d' ' -f1 >> "$T/m"
    "$T/cbfbench" read -runs 3 -parallel "$(nproc)" "$f" | cut -d' ' -f1 >> "$T/p"
  done
  c=$(median < "$T/c"); d=$(median < "$T/d"); m=$(median < "$T/m"); p=$(median < "$T/p")
  awk -v k="$kind" -v mb="$mb" -v c="$c" -v d="$d" -v m="$m" -v p="$p" \
    'BEGIN { printf "%-7s %5d %8.4f %9.4f %8.2fx %9.4f %8.2fx %9.4f %8.2fx\n", k, mb, c, d, c / d, m, c / m, p, c / p }'
  rm -f "$f"
done
echo "decode: every chunk decoded in order on one goroutine; dec+sum: and every value summed;"
echo "par+sum: the same with one goroutine per core ($(nproc)). Goal: ratio >= 0.5."

echo
echo "== convert (${CTF_MB} MB CTF -> CBF)"
in=$T/in.ctf
"$T/cbfbench" genctf "$in" "$CTF_MB"
printf 'features F dense 32\nlabels S sparse 10000\n' > "$T/header.txt"
cat "$in" > /dev/null
m=$(timeit "$T/mlfeed" convert -q --input features:dense:32:F --input labels:sparse:10000:S \
  --compat ctf2bin --chunk-size 33554432 "$in" "$T/mlfeed.cbf")
printf 'mlfeed convert --compat ctf2bin: %8.2f s  (%s MB CTF -> %s MB CBF)\n' "$m" \
  "$(( $(stat -c %s "$in") / 1048576 ))" "$(( $(stat -c %s "$T/mlfeed.cbf") / 1048576 ))"
CTF2BIN=${CTF2BIN:-$(command -v ctf2bin.py || true)}
if [ -z "$CTF2BIN" ] || [ ! -f "$CTF2BIN" ]; then
  echo "ctf2bin.py: skipped (not found; set CTF2BIN=/path/to/CNTK/Scripts/ctf2bin.py)"
  exit 0
fi
p=$(timeit python3 "$CTF2BIN" --input "$in" --header "$T/header.txt" --chunk_size 33554432 \
  --output "$T/ctf2bin.cbf")
printf 'ctf2bin.py:                      %8.2f s\n' "$p"
awk -v m="$m" -v p="$p" 'BEGIN { printf "ratio ctf2bin.py time / mlfeed time: %.1fx\n", p / m }'
if cmp -s "$T/mlfeed.cbf" "$T/ctf2bin.cbf"; then
  echo "outputs: byte-identical"
else
  echo "outputs: DIFFER ($(cmp "$T/mlfeed.cbf" "$T/ctf2bin.cbf" | head -1))"
  exit 1
fi
