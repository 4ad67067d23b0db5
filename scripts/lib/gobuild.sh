# shellcheck shell=bash
# go_build_progress WHAT OUT PKG [go build flags...]: builds PKG into OUT, saying what it does:
# a line when it starts, then (while packages compile) how many of them are done, every few
# seconds, and the time it took. A build whose packages are all in Go's cache says nothing
# more than its result.
go_build_progress() {
  local what=$1 out=$2 pkg=$3
  shift 3
  local total start
  start=$(date +%s)
  total=$(go list -deps "$@" "$pkg" 2>/dev/null | wc -l)
  echo "$what: compiling $pkg ($total packages; the first build takes a minute or two, later ones seconds)" >&2
  local n=0 last=$start rc=0
  # go build -v names each package as it compiles it (cached ones are not named).
  while IFS= read -r line; do
    case $line in
      rc=*) rc=${line#rc=}; continue ;;
      # A package is one import path (no spaces); what else go build says (errors,
      # "# pkg" headers, file:line: lines) is passed on.
      *' '*|\#*|*.go:*|'') echo "$line" >&2 ;;
      *) n=$((n + 1)) ;;
    esac
    now=$(date +%s)
    if [ $((now - last)) -ge 5 ]; then
      echo "$what: compiled $n of up to $total packages ($((now - start)) s)" >&2
      last=$now
    fi
  done < <(go build -v "$@" -o "$out" "$pkg" 2>&1; echo "rc=$?")
  if [ "$rc" != 0 ]; then
    echo "$what: go build failed" >&2
    return "$rc"
  fi
  echo "$what: built $out in $(( $(date +%s) - start )) s" >&2
}
