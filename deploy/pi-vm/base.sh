#!/usr/bin/env bash
# Stage "base" of `make pi-vm`: an arm64 Debian Bookworm root (what Raspberry Pi OS Bookworm is
# built on) with systemd as init, udev, Python 3.11, the Debian arm64 kernel (initramfs made in
# the root) and gpio-sim.ko from the kernel stage.
#
#   deploy/pi-vm/base.sh OUT KERNEL_DIR ABI        (root; binfmt for aarch64 set up by build.sh)
#
# debootstrap's second stage and the kernel's postinst (update-initramfs) run emulated by
# qemu-user-static through binfmt_misc. Only /proc is mounted in the root, and only while dpkg runs.
set -euo pipefail
OUT="$1"; KERNEL="$2"; ABI="$3"
MIRROR="${PAIGOW_PI_VM_MIRROR:-http://deb.debian.org/debian}"
# What install.sh finds already installed on Raspberry Pi OS (python3-venv, python3-pip,
# sqlite3, systemd-timesyncd), what a table's Pi runs anyway (systemd, udev, kmod), and what
# the kernel package needs (linux-base, initramfs-tools).
PACKAGES=systemd,systemd-sysv,udev,kmod,linux-base,initramfs-tools,python3,python3-venv,python3-pip,sqlite3,systemd-timesyncd,procps,gpiod,usbutils
ROOT="$OUT/root"
# the root's commands run with a clean environment: nothing of the build host's (PIP_*, PYTHON*)
in_root() {
    env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
        LANG=C.UTF-8 chroot "$ROOT" "$@"
}
mkdir -p "$OUT"
debootstrap --arch=arm64 --variant=minbase --include="$PACKAGES" bookworm "$ROOT" "$MIRROR" \
    >"$OUT/debootstrap.log" 2>&1 || { tail -30 "$OUT/debootstrap.log" >&2; exit 1; }

cleanup() { umount "$ROOT/proc" 2>/dev/null || true; }
trap cleanup EXIT
mount -t proc proc "$ROOT/proc"
# the initramfs needs only what mounts the root on QEMU's virt board (virtio-mmio, virtio-blk,
# ext4): MODULES=most takes minutes longer under emulation
printf 'MODULES=list\nCOMPRESS=gzip\n' >"$ROOT/etc/initramfs-tools/conf.d/pi-vm.conf"
printf 'virtio_mmio\nvirtio_pci\nvirtio_blk\next4\n' >>"$ROOT/etc/initramfs-tools/modules"
cp "$KERNEL"/debs/linux-image-*.deb "$ROOT/tmp/"
in_root sh -c 'dpkg -i /tmp/linux-image-*.deb' >"$OUT/kernel-install.log" 2>&1 \
    || { tail -30 "$OUT/kernel-install.log" >&2; exit 1; }
rm -f "$ROOT"/tmp/linux-image-*.deb
install -D -m 0644 "$KERNEL/gpio-sim.ko" "$ROOT/lib/modules/$ABI-arm64/extra/gpio-sim.ko"
in_root depmod "$ABI-arm64"
in_root apt-get clean
rm -rf "$ROOT"/var/lib/apt/lists/*
umount "$ROOT/proc"
trap - EXIT
test -f "$ROOT/boot/vmlinuz-$ABI-arm64" && test -f "$ROOT/boot/initrd.img-$ABI-arm64"
echo "base.sh: Bookworm arm64 root with linux $ABI-arm64 and gpio-sim"
