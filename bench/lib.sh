# Functions the bench scripts share. A script sources it from the repository root, after its
# `cd "$(dirname "$0")/.."`: `. bench/lib.sh`. POSIX sh.

# median: the median of the numbers on standard input, one a line (of an even count, the
# lower of the two middle ones).
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# sweep_times: from the output of `mlfeed batches` on standard input, "FIRST STEADY": the
# seconds of the first sweep and of a steady sweep, as its "sweep times:" line gives them.
sweep_times() { awk '/^sweep times:/ { sub("s,", "", $4); sub("s", "", $7); print $4, $7 }'; }

# sweeps RUNS COMMAND...: runs COMMAND, an `mlfeed batches` line, RUNS times and prints
# "FIRST STEADY": the medians of its first-sweep and steady-sweep seconds.
sweeps() {
	_runs=$1
	shift
	_out=$(mktemp "${TMPDIR:-/tmp}/mlfeed-bench-sweeps.XXXXXX")
	_i=0
	while [ "$_i" -lt "$_runs" ]; do
		"$@" | sweep_times
		_i=$((_i + 1))
	done >"$_out"
	echo "$(cut -d' ' -f1 "$_out" | median) $(cut -d' ' -f2 "$_out" | median)"
	rm -f "$_out"
}

# gobench NAME UNIT FILE: the least value of UNIT that the benchmarks whose name matches the
# awk pattern NAME report in FILE, `go test -bench` output: for ns/op in seconds (the wall
# clock), for cpu-s/op as is (testutil.CPUTime's CPU seconds). Unformatted; empty if none.
gobench() {
	awk -v name="$1" -v unit="$2" '$1 ~ name { for (i = 2; i < NF; i++) if ($(i+1) == unit && (best == "" || $i + 0 < best + 0)) best = $i }
		END { if (best != "") print unit == "ns/op" ? best / 1e9 : best }' "$3"
}
