#!/usr/bin/env bash
# CBF speed, in one run:
#  1. read: a generated CBF file of about 600 MB, dense and then sparse, decoded chunk by chunk
#     (format/cbf/internal/cbfbench) against `cat FILE > /dev/null` on the same page-cached
#     file, in five interleaved rounds; prints medians and mlfeed's throughput as a fraction
#     of cat's (goal: at least 0.5): decoding only, decoding and summing every value, and the
#     latter with one goroutine per core; by wall time, and by CPU time (user + system, the
#     fairer figure on a machine that other work shares).
#  2. convert: a generated CTF file of about 200 MB (a dense and a sparse stream) to CBF with
#     `mlfeed convert --compat ctf2bin` and with CNTK's ctf2bin.py, in three interleaved rounds;
#     prints the median wall and CPU times of both, the ratios (ctf2bin.py / mlfeed) by wall
#     time and per CPU-second (the latter is what one core of mlfeed does against ctf2bin.py's
#     one core, whatever else the machine runs), the cores mlfeed kept busy (CPU / wall), and
#     whether the two outputs are byte-identical. Goal: a wall-clock ratio of 30.
#
# The peer, ctf2bin.py, is not part of this repository. Get it from CNTK (MIT licence):
#   https://github.com/microsoft/CNTK/blob/master/Scripts/ctf2bin.py
#   (raw: https://raw.githubusercontent.com/microsoft/CNTK/master/Scripts/ctf2bin.py; last
#   changed by commit 9c6a1692b "ctf2bin.py upgraded to Python 3.3+", 2017-06-27)
# and point CTF2BIN at it (CTF2BIN=/path/to/ctf2bin.py bench/cbf.sh), or put it on the PATH.
# Without it the convert step times mlfeed alone and says so. Under Python 3 that version
# loses every sparse value (SparseConverter.add_sample keeps a map() iterator that its own
# range check has already consumed), so the script runs a copy with that one line fixed
# (`pairs = list(map(...))`), the fix the Python 2 original did not need; the copy lives in the
# temporary directory. It runs with /usr/bin/python3, which needs nothing beyond the standard
# library for it.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
READ_MB=${READ_MB:-600}
CTF_MB=${CTF_MB:-200}
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
go build -o "$T/mlfeed" ./cmd/mlfeed
go build -o "$T/cbfbench" ./format/cbf/internal/cbfbench

# Wall time of a command, without a process of ours between the two clock readings.
timeit() { local a=$EPOCHREALTIME; "$@"; local b=$EPOCHREALTIME; awk -v a="$a" -v b="$b" 'BEGIN { printf "%.6f\n", b - a }'; }
catfile() { cat "$1" > /dev/null; }

echo "== read (${READ_MB} MB files, page-cached; seconds, medians; ratio = cat time / mlfeed time)"
echo "load average $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores: on a loaded machine the CPU times (user + system) are the fairer figures"
printf '%-10s %5s %8s %9s %9s %9s %9s %9s %9s\n' kind MB cat decode ratio dec+sum ratio par+sum ratio
for kind in dense sparse; do
  f=$T/$kind.cbf
  "$T/cbfbench" gen "$kind" "$f" "$READ_MB"
  cat "$f" > /dev/null
  mb=$(( $(stat -c %s "$f") / 1048576 ))
  # Five rounds, each timing cat and then mlfeed's three ways (each the median of 3 runs in
  # one process), so that all of them see the same machine load; medians over the rounds.
  # Wall times in c d m p, CPU times in the same names with a C.
  : > "$T/c"; : > "$T/d"; : > "$T/m"; : > "$T/p"; : > "$T/cC"; : > "$T/dC"; : > "$T/mC"; : > "$T/pC"
  for _ in 1 2 3 4 5; do
    timeit catfile "$f" >> "$T/c"
    ( TIMEFORMAT='%U %S'; { time cat "$f" > /dev/null; } 2>&1 ) | awk '{ print $1 + $2 }' >> "$T/cC"
    "$T/cbfbench" read -runs 3 -sum=false "$f" | awk -v w="$T/d" -v c="$T/dC" '{ print $1 >> w; print $3 >> c }'
    "$T/cbfbench" read -runs 3 "$f" | awk -v w="$T/m" -v c="$T/mC" '{ print $1 >> w; print $3 >> c }'
    "$T/cbfbench" read -runs 3 -parallel "$(nproc)" "$f" | awk -v w="$T/p" -v c="$T/pC" '{ print $1 >> w; print $3 >> c }'
  done
  for t in "" C; do
    c=$(median < "$T/c$t"); d=$(median < "$T/d$t"); m=$(median < "$T/m$t"); p=$(median < "$T/p$t")
    awk -v k="$kind$([ -n "$t" ] && echo ' CPU' || echo ' wall')" -v mb="$mb" -v c="$c" -v d="$d" -v m="$m" -v p="$p" \
      'BEGIN { printf "%-10s %5d %8.4f %9.4f %8.2fx %9.4f %8.2fx %9.4f %8.2fx\n", k, mb, c, d, c / d, m, c / m, p, c / p }'
  done
  rm -f "$f"
done
echo "decode: every chunk decoded in order on one goroutine; dec+sum: and every value summed;"
echo "par+sum: the same with one goroutine per core ($(nproc)). Goal: ratio >= 0.5."
echo
echo "== convert (${CTF_MB} MB CTF -> CBF; three interleaved rounds, medians)"
in=$T/in.ctf
"$T/cbfbench" genctf "$in" "$CTF_MB"
printf 'features F dense 32\nlabels S sparse 10000\n' > "$T/header.txt"
cat "$in" > /dev/null
CTF2BIN=${CTF2BIN:-$(command -v ctf2bin.py || true)}
peer=
if [ -n "$CTF2BIN" ] && [ -f "$CTF2BIN" ]; then
  peer=$T/ctf2bin.py
  sed 's/^\( *pairs = \)map(\(.*\)$/\1list(map(\2/; s/^\( *\[pair.split(.:., 1) for pair in sample\]\))$/\1))/' "$CTF2BIN" > "$peer"
  if cmp -s "$CTF2BIN" "$peer"; then
    echo "ctf2bin.py: $CTF2BIN needs no Python 3 fix (not the 2017 CNTK version?); running it as it is"
  fi
else
  echo "ctf2bin.py: not found; timing mlfeed alone (see this script's header for where to get it)"
fi
# Wall, user and system seconds of a command, its output discarded (stderr to $T/log).
TIMEFORMAT='%R %U %S'
timed() { { time "$@" > /dev/null 2>> "$T/log"; } 2>&1; }
: > "$T/mw"; : > "$T/mc"; : > "$T/pw"; : > "$T/pc"
for _ in 1 2 3; do
  rm -f "$T/mlfeed.cbf"
  timed "$T/mlfeed" convert -q --input features:dense:32:F --input labels:sparse:10000:S \
    --compat ctf2bin --chunk-size 33554432 "$in" "$T/mlfeed.cbf" |
    awk -v w="$T/mw" -v c="$T/mc" '{ print $1 >> w; print $2 + $3 >> c }'
  if [ -n "$peer" ]; then
    rm -f "$T/ctf2bin.cbf"
    timed /usr/bin/python3 "$peer" --input "$in" --header "$T/header.txt" --chunk_size 33554432 \
      --output "$T/ctf2bin.cbf" | awk -v w="$T/pw" -v c="$T/pc" '{ print $1 >> w; print $2 + $3 >> c }'
  fi
done
mw=$(median < "$T/mw"); mc=$(median < "$T/mc")
printf 'mlfeed convert --compat ctf2bin: %7.3f s wall %7.3f s CPU (%.2f cores)  (%s MB CTF -> %s MB CBF)\n' \
  "$mw" "$mc" "$(awk -v w="$mw" -v c="$mc" 'BEGIN { print c / w }')" \
  "$(( $(stat -c %s "$in") / 1048576 ))" "$(( $(stat -c %s "$T/mlfeed.cbf") / 1048576 ))"
[ -n "$peer" ] || exit 0
pw=$(median < "$T/pw"); pc=$(median < "$T/pc")
printf 'ctf2bin.py:                      %7.3f s wall %7.3f s CPU\n' "$pw" "$pc"
awk -v mw="$mw" -v mc="$mc" -v pw="$pw" -v pc="$pc" 'BEGIN {
  printf "ratio ctf2bin.py / mlfeed: %.1fx by wall time (goal 30x), %.1fx per CPU-second\n", pw / mw, pc / mc }'
echo "load: $(cut -d' ' -f1-3 /proc/loadavg) (1, 5, 15 min) on $(nproc) cores"
if cmp -s "$T/mlfeed.cbf" "$T/ctf2bin.cbf"; then
  echo "outputs: byte-identical"
else
  echo "outputs: DIFFER ($(cmp "$T/mlfeed.cbf" "$T/ctf2bin.cbf" | head -1))"
  exit 1
fi
