#!/usr/bin/env bash
# Build the wheelhouse for an offline install (a table without internet):
#
#   deploy/wheelhouse.sh DIR             the locked wheels for Raspberry Pi OS Bookworm
#                                        (aarch64, CPython 3.11, glibc 2.36)
#   deploy/wheelhouse.sh --native DIR    the locked wheels for this machine instead
#   deploy/wheelhouse.sh --x86-64 DIR    the locked wheels for Debian 12 on x86-64 (CPython 3.11)
#
# Runs on any machine with internet and Python 3 (no Pi needed): `pip download` of exactly the
# versions and files in deploy/requirements.lock, every file checked against the lock's hashes
# (--require-hashes), binary wheels only (no compiler on the table). DIR then holds the wheels,
# a copy of the lock and SHA256SUMS. Copy DIR and this source tree to the table and run
#   sudo deploy/install.sh --wheelhouse DIR
# which installs from DIR alone (--no-index) and checks the same hashes again.
set -euo pipefail

SRC="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
LOCK="$SRC/deploy/requirements.lock"
PYTHON="${PYTHON:-python3}"
NATIVE=0
ARCH=aarch64
DIR=""

while [ "$#" -gt 0 ]; do
    case "$1" in
        --native) NATIVE=1 ;;
        --x86-64) ARCH=x86_64 ;;
        -h|--help) sed -n '2,14p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) echo "wheelhouse.sh: unknown option $1" >&2; exit 2 ;;
        *) DIR="$1" ;;
    esac
    shift
done
if [ -z "$DIR" ]; then
    echo "wheelhouse.sh: give the directory to fill (deploy/wheelhouse.sh DIR)" >&2
    exit 2
fi

target=()
if [ "$NATIVE" -eq 0 ]; then
    # lgpio 0.2.2.0 ships manylinux_2_34_aarch64, tornado manylinux_2_17/2_28 aarch64 (abi3);
    # glibc 2.36 on Bookworm accepts all of them (shared/reference/pi-release.md)
    target=(--python-version 3.11 --implementation cp
            --platform "manylinux_2_34_$ARCH" --platform "manylinux_2_28_$ARCH"
            --platform "manylinux_2_17_$ARCH" --platform "manylinux2014_$ARCH")
fi

mkdir -p "$DIR"
"$PYTHON" -m pip download --quiet --require-hashes --no-deps --only-binary=:all: \
    "${target[@]}" --dest "$DIR" -r "$LOCK"
cp "$LOCK" "$DIR/requirements.lock"
(cd "$DIR" && sha256sum -- *.whl requirements.lock >SHA256SUMS)
printf 'wheelhouse %s: %s wheels for %s\n' "$DIR" "$(find "$DIR" -name '*.whl' | wc -l)" \
    "$([ "$NATIVE" -eq 1 ] && echo 'this machine' || echo "$ARCH, CPython 3.11")"
