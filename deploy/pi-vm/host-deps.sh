#!/usr/bin/env bash
# Debian packages `make pi-vm` builds and boots the arm64 Raspberry Pi stand-in with (root,
# idempotent: installs only what is missing):
#   qemu-system-arm        qemu-system-aarch64 (TCG: no KVM needed)
#   qemu-user-static       debootstrap's second stage and the installer in the arm64 chroot
#   debootstrap            the Bookworm arm64 root
#   gcc-aarch64-linux-gnu  linux-kbuild-6.1 linux-source-6.1   gpio-sim.ko, built out of tree
#   device-tree-compiler   the device trees naming a Pi 5 / Pi 4
#   e2fsprogs              mke2fs -d: the root image without mounting anything
set -euo pipefail
pkgs=(qemu-system-arm qemu-user-static debootstrap gcc-aarch64-linux-gnu linux-kbuild-6.1
      linux-source-6.1 device-tree-compiler e2fsprogs xz-utils zstd binutils)
need=()
for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -qx 'install ok installed' || need+=("$p")
done
if [ "${#need[@]}" -eq 0 ]; then exit 0; fi
if [ "$(id -u)" -ne 0 ]; then
    echo "pi-vm: missing ${need[*]}; run as root: sudo make pi-vm" >&2
    exit 1
fi
echo "pi-vm: installing ${need[*]}"
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}"
