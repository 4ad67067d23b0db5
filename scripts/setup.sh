#!/usr/bin/env bash
# Installs what mlfeed needs on a fresh Debian machine with Go: the HDF5 C library (for
# Binsparse files, through cgo) and, for the interoperability tests and benchmarks,
# Debian's python3-numpy, python3-h5py and python3-scipy. Idempotent and quiet when all is
# there. Sourced by scripts/demo.sh and scripts/test.sh; sets MLFEED_TAGS.
set -euo pipefail

need=()
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }
for p in libhdf5-dev pkg-config python3-numpy python3-h5py python3-scipy; do
  have_pkg "$p" || need+=("$p")
done
# scikit-learn: the independent checker of format/libsvm's tests and bench/libsvm.sh.
for p in python3-sklearn; do
  have_pkg "$p" || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo"
  echo "setup: installing ${need[*]} (apt)" >&2
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq >&2
  $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >&2
fi

# Go modules (from the module proxy), once.
go mod download

# Build with the HDF5 container when the library is there.
if pkg-config --exists hdf5 2>/dev/null || [ -e /usr/include/hdf5/serial/hdf5.h ] || [ -e /usr/include/hdf5.h ]; then
  export MLFEED_TAGS=hdf5
else
  export MLFEED_TAGS=
  echo "setup: libhdf5 not found; building without Binsparse HDF5 support" >&2
fi
