#!/usr/bin/env bash
# Can this machine build and boot the Pi stand-in VM (`make pi-vm`)? Prints one line and exits
#   0  yes ("pi-vm: can run: ...")
#   1  no, the machine lacks what QEMU and the build need ("pi-vm: cannot run here: REASON")
# KVM is NOT needed: the VM runs under TCG (software emulation), /dev/kvm is never opened.
# Needs: root (debootstrap, chroot, mount), qemu-system-arm, qemu-user-static and the build's
# other packages installed or installable from the configured apt sources, binfmt_misc mounted
# or mountable (debootstrap's arm64 second stage), 8 GB free for the cache
# ($PAIGOW_PI_VM_CACHE, default /var/cache/paigow-pi-vm; 1.7 GB used, measured 2026-12-07; the
# build needs room for its work files beside it), and network to
# deb.debian.org and PyPI the first time (the cache holds everything afterwards).
set -uo pipefail
CACHE="${PAIGOW_PI_VM_CACHE:-/var/cache/paigow-pi-vm}"
no() { echo "pi-vm: cannot run here: $*"; exit 1; }

[ "$(id -u)" -eq 0 ] || no "not root (debootstrap, chroot and mount need it)"
[ "$(uname -m)" = x86_64 ] || [ "$(uname -m)" = aarch64 ] || no "host architecture $(uname -m)"
for pkg in qemu-system-arm qemu-user-static debootstrap gcc-aarch64-linux-gnu linux-kbuild-6.1 \
           linux-source-6.1 device-tree-compiler; do
    if ! dpkg-query -W -f='${Status}\n' "$pkg" 2>/dev/null | grep -qx 'install ok installed'; then
        cand="$(apt-cache policy "$pkg" 2>/dev/null | sed -n 's/^ *Candidate: //p')"
        if [ -z "$cand" ] || [ "$cand" = "(none)" ]; then
            no "$pkg is neither installed nor installable (apt sources)"
        fi
    fi
done
mkdir -p "$CACHE" 2>/dev/null || no "cannot create $CACHE"
free_kb="$(df -Pk "$CACHE" | awk 'NR==2 {print $4}')"
if [ ! -e "$CACHE/current/root.img" ] && [ "${free_kb:-0}" -lt $((8 * 1024 * 1024)) ]; then
    no "$((free_kb / 1024 / 1024)) GB free under $CACHE, 8 GB needed for an empty cache"
fi
if [ ! -e /proc/sys/fs/binfmt_misc/register ]; then
    if mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc 2>/dev/null; then
        umount /proc/sys/fs/binfmt_misc
    else
        no "binfmt_misc cannot be mounted (arm64 programs cannot run in the root being built)"
    fi
fi
kvm="no KVM needed (TCG)"
echo "pi-vm: can run: root, packages available, $((free_kb / 1024 / 1024)) GB free, binfmt_misc, $kvm"
