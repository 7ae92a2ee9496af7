#!/usr/bin/env bash
# Build the arm64 Raspberry Pi stand-in VM of `make pi-vm` (root), cached by content:
#
#   deploy/pi-vm/build.sh            build what changed; print the image directory last
#
# Stages, each in $PAIGOW_PI_VM_CACHE (default /var/cache/paigow-pi-vm, outside the checkout)
# under a key that hashes everything it is made of, so a rerun skips what has not changed:
#   kernel-KEY  Debian's linux-image/headers for arm64 and gpio-sim.ko   (kernel.sh; the version
#               of linux-source-6.1 on this host, the arm64 ABI, kernel.sh)
#   base-KEY    debootstrap'd Bookworm arm64 root, kernel and initramfs  (base.sh + kernel key)
#   image-KEY   the project installed by deploy/install.sh --wheelhouse, root.img, device trees
#               (image.sh, guest/, machine.env + base key + the lock, the installer, the
#               wheelhouse script and every file of the release: pyproject.toml, fsm/, drivers/,
#               controller/, deploy/, systemd/, the two docs install.sh copies)
# $PAIGOW_PI_VM_CACHE/current points at the image; stages of other keys are removed.
# The heavy steps run under `nice -n 10` (a shared machine). binfmt_misc is mounted and qemu's
# aarch64 handler registered only while the emulated steps run, and only when they were not
# there already; both are undone on exit.
set -euo pipefail
SRC="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
HERE="$SRC/deploy/pi-vm"
CACHE="${PAIGOW_PI_VM_CACHE:-/var/cache/paigow-pi-vm}"
export PYTHON="${PYTHON:-python3}"
NICE=(nice -n 10)
T0=$SECONDS

say() { printf 'pi-vm: %s\n' "$*"; }
die() { printf 'pi-vm: %s\n' "$*" >&2; exit 1; }
key() { sha256sum | cut -c1-16; }

[ "$(id -u)" -eq 0 ] || die "run as root (sudo make pi-vm): debootstrap, chroot and mount need it"
bash "$HERE/host-deps.sh"
mkdir -p "$CACHE"

# --- the arm64 package lists, private to the cache (the host's dpkg architectures untouched) ---
APT="$CACHE/apt"
mkdir -p "$APT/etc/apt/apt.conf.d" "$APT/etc/apt/preferences.d" "$APT/state/lists/partial" \
    "$APT/cache/archives/partial"
cat >"$APT/etc/apt/sources.list" <<SOURCES
deb [arch=arm64 signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bookworm main
deb [arch=arm64 signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian-security bookworm-security main
SOURCES
cat >"$APT/apt.conf" <<CONF
APT::Architecture "arm64";
APT::Architectures { "arm64"; };
Dir::Etc "$APT/etc/apt";
Dir::Etc::sourceparts "-";
Dir::State "$APT/state";
Dir::State::status "$APT/state/status";
Dir::Cache "$APT/cache";
CONF
touch "$APT/state/status"
export APT_CONFIG="$APT/apt.conf"
# the arm64 kernel of the same Debian version as the host's linux-source-6.1 (gpio-sim's source)
VERSION="$(dpkg-query -W -f='${Version}' linux-source-6.1)"
abi() {
    apt-cache depends "linux-image-arm64=$VERSION" 2>/dev/null \
        | sed -n 's/^ *Depends: linux-image-\(6\.1\.0-[0-9]*\)-arm64$/\1/p' | head -1 || true
}
ABI="$(abi)"
if [ -z "$ABI" ]; then
    apt-get update -qq
    ABI="$(abi)"
fi
[ -n "$ABI" ] || die "no arm64 linux-image-arm64=$VERSION in bookworm(-security): the host's" \
    "linux-source-6.1 ($VERSION) and the archive differ; apt-get update && apt-get install" \
    "linux-source-6.1 on the host, then make pi-vm again"

# --- binfmt_misc for the emulated steps (debootstrap's second stage, the installer) ---
MOUNTED_BINFMT=0
REGISTERED=0
BINFMT=/proc/sys/fs/binfmt_misc
binfmt_up() {
    if [ ! -e "$BINFMT/register" ]; then
        mount -t binfmt_misc binfmt_misc "$BINFMT" || die "cannot mount binfmt_misc (needed to run" \
            "arm64 programs in the root being built)"
        MOUNTED_BINFMT=1
    fi
    if [ ! -e "$BINFMT/qemu-aarch64" ]; then
        grep '^:qemu-aarch64:' /usr/lib/binfmt.d/qemu-aarch64.conf >"$BINFMT/register"
        REGISTERED=1
    fi
}
binfmt_down() {
    if [ "$REGISTERED" -eq 1 ] && [ -e "$BINFMT/qemu-aarch64" ]; then
        echo -1 >"$BINFMT/qemu-aarch64"
    fi
    if [ "$MOUNTED_BINFMT" -eq 1 ]; then umount "$BINFMT" || true; fi
    REGISTERED=0; MOUNTED_BINFMT=0
}
trap binfmt_down EXIT

# stage NAME KEY COMMAND...: run COMMAND with OUT=$CACHE/NAME-KEY.tmp unless NAME-KEY exists
stage() {
    local name="$1" k="$2"; shift 2
    local dir="$CACHE/$name-$k" start=$SECONDS
    if [ -d "$dir" ]; then
        say "$name: cached ($dir)"
        return
    fi
    rm -rf "$dir.tmp"
    say "$name: building ($dir)"
    "$@" "$dir.tmp"
    mv "$dir.tmp" "$dir"
    say "$name: built in $((SECONDS - start)) s"
    # other keys of this stage are out of date
    find "$CACHE" -maxdepth 1 -name "$name-*" ! -name "$name-$k" -exec rm -rf {} +
}

KERNEL_KEY="$( { echo "$VERSION $ABI"; cat "$HERE/kernel.sh"; } | key)"
build_kernel() { "${NICE[@]}" bash "$HERE/kernel.sh" "$1" "$ABI" "$VERSION"; }
stage kernel "$KERNEL_KEY" build_kernel

BASE_KEY="$( { echo "$KERNEL_KEY"; cat "$HERE/base.sh"; } | key)"
build_base() { binfmt_up; "${NICE[@]}" bash "$HERE/base.sh" "$1" "$CACHE/kernel-$KERNEL_KEY" "$ABI"; }
stage base "$BASE_KEY" build_base

# the release: what install.sh installs from the source tree
FILES="$(mktemp)"
(cd "$SRC" && git ls-files --cached --others --exclude-standard -- pyproject.toml fsm drivers \
    controller deploy systemd docs/operator-guide.md docs/wiring.md README.md \
    | while read -r f; do [ -f "$f" ] && printf '%s\n' "$f"; done | sort) >"$FILES"
IMAGE_KEY="$( { echo "$BASE_KEY"; cat "$HERE/image.sh"; (cd "$SRC" && xargs -d '\n' sha256sum <"$FILES"); } | key)"
build_image() { binfmt_up; "${NICE[@]}" bash "$HERE/image.sh" "$1" "$CACHE/base-$BASE_KEY" "$ABI" "$FILES"; }
stage image "$IMAGE_KEY" build_image
rm -f "$FILES"
binfmt_down

ln -sfn "image-$IMAGE_KEY" "$CACHE/current"
say "image ready in $((SECONDS - T0)) s: $CACHE/current -> image-$IMAGE_KEY (linux $ABI-arm64, $VERSION)"
