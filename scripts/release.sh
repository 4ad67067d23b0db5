#!/usr/bin/env bash
# Builds mlfeed's release artifacts from this checkout into dist/ (docs/release.md):
#   mlfeed_VERSION_OS_ARCH.tar.gz (.zip for windows): the CLI for linux/amd64, linux/arm64,
#     darwin/amd64, darwin/arm64, windows/amd64 (pure Go, CGO_ENABLED=0, -trimpath, stripped,
#     version and commit stamped with -ldflags -X), with LICENSE, NOTICE, README.md and
#     THIRD_PARTY_LICENSES.txt (the licences of what is linked in, from go-licenses);
#   mlfeed-VERSION.tar.gz: the Python sdist (the package and the Go sources; building it needs
#     Go and a C compiler);
#   mlfeed-VERSION-py3-none-manylinux_X_Y_ARCH.whl: the Python wheel holding libmlfeed.so, for
#     x86_64 and, when Debian's cross compiler is installed (apt-get install
#     gcc-aarch64-linux-gnu libc6-dev-arm64-cross), aarch64; X_Y is the glibc the library was linked against;
#   SHA256SUMS.
#
# usage: bash scripts/release.sh [--out DIR] [--only STEP,...] [--allow-dirty] VERSION
#   VERSION   MAJOR.MINOR.PATCH; CHANGELOG.md must have its entry ("## VERSION ...").
#   --out     where the artifacts go (default dist/).
#   --only    build only these steps: cli (all five), cli-linux-amd64, cli-linux-arm64,
#             cli-darwin-amd64, cli-darwin-arm64, cli-windows-amd64, sdist, wheel-x86_64,
#             wheel-aarch64 (default: all of them).
#   --allow-dirty  build from a checkout with uncommitted changes (stamped as modified); a
#             release is refused otherwise.
# Needs Go, /usr/bin/python3 with setuptools and wheel (Debian: python3-setuptools,
# python3-wheel), gcc, binutils, zip (for the windows archive); the first run installs go-licenses (pinned below) from
# the Go module proxy into $MLFEED_TOOLS (default ~/.cache/mlfeed-tools).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

GO_LICENSES=github.com/google/go-licenses
GO_LICENSES_VERSION=v1.6.0
PYTHON=${PYTHON:-/usr/bin/python3}
CLI_TARGETS="linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64"

die() { echo "release: $*" >&2; exit 1; }
usage() { sed -n '/^# usage:/,/^# Needs/p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

out=dist only="" allow_dirty=false version=""
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=${2:?--out needs a directory}; shift 2 ;;
    --only) only=${2:?--only needs steps}; shift 2 ;;
    --allow-dirty) allow_dirty=true; shift ;;
    -h|--help) usage ;;
    -*) echo "release: unknown flag $1" >&2; usage ;;
    *) [ -z "$version" ] || usage; version=$1; shift ;;
  esac
done
[ -n "$version" ] || usage
[[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] ||
  die "version $version is not MAJOR.MINOR.PATCH (for example 0.3.0)"
grep -Eq "^## \[?${version//./\\.}\]?( |$)" CHANGELOG.md ||
  die "CHANGELOG.md has no entry for $version: add a \"## $version - DATE\" section first"

all_steps="cli-linux-amd64 cli-linux-arm64 cli-darwin-amd64 cli-darwin-arm64 cli-windows-amd64 sdist wheel-x86_64 wheel-aarch64"
steps=""
for s in ${only//,/ }; do
  case " cli $all_steps " in *" $s "*) ;; *) die "unknown step $s (steps: cli $all_steps)" ;; esac
  [ "$s" = cli ] && s="cli-linux-amd64 cli-linux-arm64 cli-darwin-amd64 cli-darwin-arm64 cli-windows-amd64"
  steps="$steps $s"
done
[ -n "$steps" ] || steps=$all_steps
want() { case " $steps " in *" $1 "*) return 0 ;; esac; return 1; }

# Progress: every step says when it starts and how long it took.
t0=$(date +%s)
step() { echo "release: [$(( $(date +%s) - t0 ))s] $*" >&2; }

for tool in go git gcc tar gzip sha256sum objdump readelf strings; do
  command -v "$tool" >/dev/null || die "$tool is not installed"
done
if want cli-windows-amd64; then command -v zip >/dev/null || die "zip is not installed (apt-get install zip)"; fi
"$PYTHON" -c 'import setuptools, wheel' 2>/dev/null ||
  die "$PYTHON lacks setuptools or wheel (Debian: apt-get install python3-setuptools python3-wheel)"

# What the binaries are stamped with.
dirty=$(git status --porcelain)
if [ -n "$dirty" ]; then
  $allow_dirty || die "the checkout has uncommitted changes (commit them, or --allow-dirty):
$dirty"
  modified=true
else
  modified=false
fi
commit=$(git rev-parse HEAD)
commit_time=$(TZ=UTC0 git log -1 --format=%cd --date=format-local:%Y-%m-%dT%H:%M:%SZ)
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct)}
ldflags="-s -w -X main.version=$version -X main.commit=$commit -X main.commitTime=$commit_time -X main.modified=$modified"

mkdir -p "$out"
out=$(cd "$out" && pwd)
rm -f "$out"/mlfeed_"$version"_* "$out"/mlfeed-"$version".tar.gz "$out"/mlfeed-"$version"-*.whl "$out"/SHA256SUMS
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
step "mlfeed $version from $commit (modified: $modified) into $out: $steps"

# --- licences ---------------------------------------------------------------------------------
# THIRD_PARTY_LICENSES.txt for one build (package, GOOS, GOARCH, CGO_ENABLED): the Go
# distribution's licence and go-licenses' `save` of every module linked in (licence files and
# NOTICE files), with the list of those modules and their versions. Builds that link the same
# modules share one file.
tools=${MLFEED_TOOLS:-${XDG_CACHE_HOME:-$HOME/.cache}/mlfeed-tools}
golicenses=$tools/go-licenses
if ! go version -m "$golicenses" 2>/dev/null | grep -q "mod	$GO_LICENSES	$GO_LICENSES_VERSION"; then
  step "installing $GO_LICENSES@$GO_LICENSES_VERSION into $tools (once; about a minute)"
  GOBIN=$tools GOFLAGS=-buildvcs=false go install "$GO_LICENSES@$GO_LICENSES_VERSION"
fi

# linked PKG GOOS GOARCH CGO: "import-path module-path version" of every package the build links
# from other modules.
linked() {
  GOOS=$2 GOARCH=$3 CGO_ENABLED=$4 go list -deps \
    -f '{{with .Module}}{{if not .Main}}{{$.ImportPath}} {{.Path}} {{.Version}}{{end}}{{end}}' "$1" | LC_ALL=C sort -u
}

# licences PKG GOOS GOARCH CGO: sets lic_file to the path of the build's
# THIRD_PARTY_LICENSES.txt, generating it (in the background: wait_licences waits) the first
# time its set of linked packages is seen. What go-licenses saved for a set of packages is kept
# in $tools/licences/ and reused by later runs.
lic_pids=""
licences() {
  local pkgs key dir cache
  pkgs=$(linked "$@")
  key=$(printf '%s\n' "$GO_LICENSES_VERSION" "$pkgs" | sha256sum | cut -c1-16)
  dir=$work/licences/$key
  cache=$tools/licences/$key
  if [ ! -d "$dir" ]; then
    mkdir -p "$dir"
    printf '%s\n' "$pkgs" | cut -d' ' -f2- | LC_ALL=C sort -u >"$dir/modules"
    (
      if [ -d "$cache" ]; then
        cp -r "$cache" "$dir/saved"
      else
        GOOS=$2 GOARCH=$3 CGO_ENABLED=$4 "$golicenses" save "$1" --save_path "$dir/saved" \
          --ignore github.com/mlfeed/mlfeed >"$dir/log" 2>&1 ||
          { echo "release: go-licenses save $1 ($2/$3) failed:" >&2; grep -v '^W' "$dir/log" >&2; exit 1; }
        # For a reciprocal or restricted licence (MPL, GPL, ...) go-licenses saves the sources:
        # shipping those is a decision to make, not something a new dependency does unnoticed.
        src=$(cd "$dir/saved" && find . -type f \( -name '*.go' -o -name '*.[chs]' \) | sed 's|^\./||; s|/[^/]*$||' | sort -u)
        [ -z "$src" ] || { echo "release: these dependencies of $1 ($2/$3) have a reciprocal or restricted licence (go-licenses saved their sources): $src" >&2; exit 1; }
        # go-licenses takes the first licence-like file it meets walking up from each package,
        # so a package directory's README can hide its module's LICENSE and NOTICE (Apache
        # Thrift's lib/go/thrift): add the licence and notice files at each module's root that
        # it did not save, from the module cache.
        (cd "$dir/saved" && find . -type f -exec sha256sum {} + | cut -c1-64) >"$dir/hashes"
        go list -m -f '{{.Path}} {{.Dir}}' all | while read -r m d; do
          grep -q "^$m " "$dir/modules" && [ -n "$d" ] || continue
          find "$d" -maxdepth 1 -type f \( -iname 'licen[cs]e*' -o -iname 'notice*' -o -iname 'copying*' \) |
            while read -r f; do
              grep -qx "$(sha256sum "$f" | cut -c1-64)" "$dir/hashes" && continue
              mkdir -p "$dir/saved/$m"
              [ -e "$dir/saved/$m/${f##*/}" ] || cp "$f" "$dir/saved/$m/${f##*/}"
            done
        done
        mkdir -p "$tools/licences"
        cp -r "$dir/saved" "$cache.$$" && { mv -T "$cache.$$" "$cache" 2>/dev/null || rm -rf "$cache.$$"; }
      fi
      {
        echo "Third-party licences of mlfeed $version ($1 for $2/$3)"
        echo
        echo "Everything linked into this program besides mlfeed itself (LICENSE, NOTICE): the Go"
        echo "standard library and runtime, and these modules, whose licence and notice files"
        echo "follow, as $GO_LICENSES $GO_LICENSES_VERSION saved them from the module graph:"
        echo
        sed 's/^/  /' "$dir/modules"
        echo
        echo "================================================================================"
        echo "Go $(go env GOVERSION): the standard library and runtime ($(go env GOROOT)/LICENSE)"
        echo "================================================================================"
        cat "$(go env GOROOT)/LICENSE"
        (cd "$dir/saved" && find . -type f | sed 's|^\./||' | LC_ALL=C sort) | while read -r f; do
          echo
          echo "================================================================================"
          echo "$f"
          echo "================================================================================"
          cat "$dir/saved/$f"
        done
      } >"$dir/THIRD_PARTY_LICENSES.txt"
    ) &
    lic_pids="$lic_pids $!"
  fi
  lic_file=$dir/THIRD_PARTY_LICENSES.txt
}
wait_licences() {
  local p
  [ -z "$lic_pids" ] || step "waiting for go-licenses"
  for p in $lic_pids; do wait "$p" || die "generating the licences failed"; done
  lic_pids=""
}

declare -A lic_of
step "finding the modules linked into each build; go-licenses runs in the background"
for t in $CLI_TARGETS; do
  if want "cli-${t/\//-}"; then licences ./cmd/mlfeed "${t%/*}" "${t#*/}" 0; lic_of[$t]=$lic_file; fi
done
cross_cc=aarch64-linux-gnu-gcc
if want wheel-aarch64 && ! echo '#include <stdio.h>' | $cross_cc -x c -fsyntax-only - 2>/dev/null; then
  echo "release: WARNING: no aarch64 wheel: Debian's cross compiler is missing or lacks the C library's headers (apt-get install gcc-aarch64-linux-gnu libc6-dev-arm64-cross)" >&2
  steps=${steps/wheel-aarch64/}
fi
if want sdist || want wheel-x86_64; then licences ./capi linux amd64 1; lic_of[wheel-x86_64]=$lic_file; fi
if want wheel-aarch64; then licences ./capi linux arm64 1; lic_of[wheel-aarch64]=$lic_file; fi

# --- the CLI ----------------------------------------------------------------------------------
# archive DIR FILE: a reproducible .tar.gz or .zip of DIR (times set to the commit's).
archive() {
  local dir=$1 file=$2
  find "$work/pkg/$dir" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
  case "$file" in
    *.zip) (cd "$work/pkg" && TZ=UTC0 zip -q -X -r -9 "$file" "$dir") ;;
    *) tar -C "$work/pkg" --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$SOURCE_DATE_EPOCH" \
         -cf - "$dir" | gzip -n -9 >"$file" ;;
  esac
}

clis=""
for t in $CLI_TARGETS; do
  want "cli-${t/\//-}" || continue
  goos=${t%/*} goarch=${t#*/}
  name=mlfeed_${version}_${goos}_${goarch}
  exe=mlfeed; [ "$goos" = windows ] && exe=mlfeed.exe
  step "building the CLI for $t"
  mkdir -p "$work/pkg/$name"
  CGO_ENABLED=0 GOOS=$goos GOARCH=$goarch go build -trimpath -ldflags "$ldflags" \
    -o "$work/pkg/$name/$exe" ./cmd/mlfeed
  clis="$clis $t"
done
if want cli-linux-amd64 && [ "$(go env GOHOSTOS)/$(go env GOHOSTARCH)" = linux/amd64 ]; then
  got=$("$work/pkg/mlfeed_${version}_linux_amd64/mlfeed" version --json)
  v=$(printf '%s' "$got" | "$PYTHON" -c 'import json,sys; j=json.load(sys.stdin); print(j["version"], j["commit"])')
  [ "$v" = "$version $commit" ] || die "the linux/amd64 CLI prints version/commit '$v', want '$version $commit'"
fi
wait_licences
for t in $clis; do
  goos=${t%/*} goarch=${t#*/}
  name=mlfeed_${version}_${goos}_${goarch}
  cp LICENSE NOTICE README.md "${lic_of[$t]}" "$work/pkg/$name/"
  if [ "$goos" = windows ]; then archive "$name" "$out/$name.zip"; else archive "$name" "$out/$name.tar.gz"; fi
done

# --- the Python sdist -------------------------------------------------------------------------
# The package directory (python/, without tests and examples) with the version written into
# mlfeed/__init__.py, LICENSE, NOTICE, the wheel's THIRD_PARTY_LICENSES.txt, and the Go module's
# sources (no tests, test data, docs or scripts) under gosrc/, where setup.py finds them.
if want sdist || want wheel-x86_64 || want wheel-aarch64; then
  step "building the sdist"
  sd=$work/sdist/mlfeed-$version
  mkdir -p "$sd/gosrc"
  git ls-files -co --exclude-standard python | grep -Ev '^python/(tests|examples)/' |
    sed 's|^python/||' | (cd python && xargs -d '\n' cp --parents -t "$sd")
  git ls-files -co --exclude-standard | grep -Ev '(^|/)testdata/|_test\.go$|^(python|bench|docs|scripts)/|(^|/)\.' |
    xargs -d '\n' cp --parents -t "$sd/gosrc"
  sed -i "s/^__version__ = \".*\"\$/__version__ = \"$version\"/" "$sd/mlfeed/__init__.py"
  grep -qx "__version__ = \"$version\"" "$sd/mlfeed/__init__.py" ||
    die "could not write the version into python/mlfeed/__init__.py's __version__ line"
  wait_licences
  cp LICENSE NOTICE "$sd/"
  cp "${lic_of[wheel-x86_64]:-${lic_of[wheel-aarch64]}}" "$sd/THIRD_PARTY_LICENSES.txt"
  printf '%s\n' "graft gosrc" "include LICENSE NOTICE THIRD_PARTY_LICENSES.txt" \
    "global-exclude __pycache__ *.py[co] *.so" >"$sd/MANIFEST.in"
  find "$sd" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
  (cd "$sd" && "$PYTHON" -c 'import sys; from setuptools import build_meta as b; b.build_sdist(sys.argv[1])' \
     "$work/sdist-out" >"$work/sdist.log" 2>&1) || { cat "$work/sdist.log" >&2; die "building the sdist failed"; }
  sdist=$work/sdist-out/mlfeed-$version.tar.gz
  [ -f "$sdist" ] || die "the sdist is missing: $(ls "$work/sdist-out")"
  if want sdist; then cp "$sdist" "$out/"; fi
fi

# --- the Python wheels ------------------------------------------------------------------------
# Built from the sdist, as pip would build it, with the library stripped; tagged
# py3-none-manylinux_X_Y_ARCH for the glibc X.Y the C compiler links against. Checked: the
# library is for ARCH, needs only libraries manylinux allows and no glibc symbol newer than X.Y.
glibc_of() { # CC: the version of the glibc that CC links against
  local libc
  libc=$(readlink -f "$("$1" -print-file-name=libc.so.6)")
  strings -a "$libc" | sed -n 's/.*release version \([0-9]*\.[0-9]*\).*/\1/p' | head -1
}
wheel() { # ARCH GOARCH CC OBJDUMP ELF-MACHINE
  local arch=$1 goarch=$2 cc=$3 objdump=$4 machine=$5 glibc plat dir whl lib newest needed
  glibc=$(glibc_of "$cc")
  [ -n "$glibc" ] || die "cannot tell which glibc $cc links against"
  plat=manylinux_${glibc/./_}_$arch
  step "building the $arch wheel ($plat) from the sdist"
  dir=$work/wheel-$arch
  mkdir -p "$dir"
  tar -C "$dir" -xzf "$sdist"
  (cd "$dir/mlfeed-$version" && MLFEED_WHEEL_PLAT=$plat MLFEED_LDFLAGS="-s -w" GOARCH=$goarch CC=$cc CGO_ENABLED=1 \
     "$PYTHON" -c 'import sys; from setuptools import build_meta as b; b.build_wheel(sys.argv[1])' \
     "$dir/out" >"$dir/log" 2>&1) ||
    { grep -Ev '^(copying|creating|running|writing|reading|adding|installing|  File |    |Traceback)' "$dir/log" | tail -40 >&2
      die "building the $arch wheel failed"; }
  whl=$dir/out/mlfeed-$version-py3-none-$plat.whl
  [ -f "$whl" ] || die "the $arch wheel is missing: $(ls "$dir/out")"
  "$PYTHON" -m zipfile -e "$whl" "$dir/unpacked"
  lib=$dir/unpacked/mlfeed/libmlfeed.so
  readelf -h "$lib" | grep -q "Machine: *$machine" || die "$whl: libmlfeed.so is not for $machine"
  newest=$("$objdump" -T "$lib" | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -V | tail -1)
  [ "$(printf '%s\n%s\n' "$newest" "$glibc" | sort -V | tail -1)" = "$glibc" ] ||
    die "$whl: libmlfeed.so needs GLIBC_$newest, newer than its tag's $glibc"
  needed=$(readelf -d "$lib" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' |
    grep -Ev '^(libc\.so\.6|libm\.so\.6|libpthread\.so\.0|libdl\.so\.2|librt\.so\.1|libresolv\.so\.2|ld-linux.*)$' || true)
  [ -z "$needed" ] || die "$whl: libmlfeed.so needs libraries manylinux does not allow: $needed"
  grep -qx 'License: Apache-2.0' "$dir/unpacked/mlfeed-$version.dist-info/METADATA" ||
    die "$whl: the metadata does not name the licence"
  for f in LICENSE NOTICE THIRD_PARTY_LICENSES.txt; do
    [ -f "$dir/unpacked/mlfeed-$version.dist-info/$f" ] || die "$whl: $f is missing from its dist-info"
  done
  step "$arch wheel: newest glibc symbol GLIBC_$newest (tag $glibc), needs $(readelf -d "$lib" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')"
  if [ "$arch" = "$(uname -m)" ]; then # it loads, and names the CLI's version
    v=$(cd "$work" && PYTHONPATH=$dir/unpacked MLFEED_LIBRARY= "$PYTHON" -c \
      'import mlfeed; assert "idx" in mlfeed.formats(); print(mlfeed.__version__)')
    [ "$v" = "$version" ] || die "$whl: mlfeed.__version__ is $v, want $version"
  fi
  cp "$whl" "$out/"
}
if want wheel-x86_64; then wheel x86_64 amd64 gcc objdump 'Advanced Micro Devices X86-64'; fi
if want wheel-aarch64; then wheel aarch64 arm64 $cross_cc aarch64-linux-gnu-objdump AArch64; fi

# --- checksums --------------------------------------------------------------------------------
(cd "$out" && find . -maxdepth 1 -type f \( -name "mlfeed_${version}_*" -o -name "mlfeed-${version}.tar.gz" \
  -o -name "mlfeed-${version}-*.whl" \) | sed 's|^\./||' | LC_ALL=C sort | xargs -r sha256sum >SHA256SUMS)
step "done in $(( $(date +%s) - t0 )) s:"
(cd "$out" && ls -l $(cut -c67- SHA256SUMS) SHA256SUMS | awk '{printf "  %10d  %s\n", $5, $9}') >&2
