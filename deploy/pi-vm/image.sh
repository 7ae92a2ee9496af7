#!/usr/bin/env bash
# Stage "image" of `make pi-vm`: the project installed into a copy of the base root by the real
# installer, then the root as an ext4 image with the kernel, initramfs and two device trees.
#
#   deploy/pi-vm/image.sh OUT BASE_DIR ABI FILE_LIST      (root; binfmt set up by build.sh)
#
# FILE_LIST names the source files (relative to the repository) the release is made of; they
# are copied to /opt/paigow-release/src in the root, the locked aarch64 wheels are fetched on the
# host by deploy/wheelhouse.sh (pip in the emulated root cannot verify the index's certificate),
# and `deploy/install.sh --wheelhouse DIR --no-boot` runs in the arm64 root under
# qemu-user-static. What it cannot do in a root being built it says, and systemd does at boot
# (udev rules, modules-load.d, the enabled unit). --no-boot: no firmware reads config.txt here
# (QEMU loads the kernel and device tree itself), so dtparam=spi/strict_gpiod and the UART lines
# have nothing to act on. Then the VM's own parts (guest/, never on a table) and the VM's
# table.toml: the 1-7 digit on seven pins (no SPI on QEMU's virt board), no sign, SAS off (the
# only PL011 is the console), a card-reading shoe.
set -euo pipefail
OUT="$1"; BASE="$2"; ABI="$3"; FILES="$4"
SRC="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
HERE="$SRC/deploy/pi-vm"
PYTHON="${PYTHON:-python3}"
# shellcheck source=deploy/pi-vm/machine.env
. "$HERE/machine.env"
ROOT="$OUT/root"
# the root's commands run with a clean environment: nothing of the build host's (PIP_*, PYTHON*)
in_root() {
    env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
        LANG=C.UTF-8 chroot "$ROOT" "$@"
}
REL=/opt/paigow-release

mkdir -p "$OUT"
cp -a "$BASE/root" "$ROOT"
mkdir -p "$ROOT$REL/src"
(cd "$SRC" && tar -cf - -T "$FILES") | tar -xf - -C "$ROOT$REL/src"
PYTHON="$PYTHON" bash "$SRC/deploy/wheelhouse.sh" "$ROOT$REL/wheelhouse" >"$OUT/wheelhouse.log" 2>&1 \
    || { cat "$OUT/wheelhouse.log" >&2; exit 1; }

cleanup() {
    umount "$ROOT/dev" 2>/dev/null || true
    umount "$ROOT/proc" 2>/dev/null || true
}
trap cleanup EXIT
mount -t proc proc "$ROOT/proc"
mount --bind /dev "$ROOT/dev"
if ! in_root "$REL/src/deploy/install.sh" --wheelhouse "$REL/wheelhouse" --no-boot \
        >"$OUT/install.log" 2>&1; then
    tail -40 "$OUT/install.log" >&2
    echo "image.sh: deploy/install.sh failed in the arm64 root (log: $OUT/install.log)" >&2
    exit 1
fi

# the VM's parts (deploy/pi-vm/guest): test agent, gpio-sim chip, gpio group rule, clock
install -m 0755 "$HERE/guest/pivm-agent" "$HERE/guest/pivm-gpio-sim" "$ROOT/usr/local/sbin/"
install -m 0644 "$HERE"/guest/*.service "$ROOT/etc/systemd/system/"
install -m 0644 "$HERE/guest/60-pivm-gpiochip.rules" "$ROOT/etc/udev/rules.d/"
in_root systemctl enable --quiet pivm-agent.service pivm-gpio-sim.service pivm-clock.service
# the serial console: a root shell for a person at QEMU's console; the tests use the agent
mkdir -p "$ROOT/etc/systemd/system/serial-getty@ttyAMA0.service.d"
cat >"$ROOT/etc/systemd/system/serial-getty@ttyAMA0.service.d/autologin.conf" <<'GETTY'
[Service]
ExecStart=
ExecStart=-/sbin/agetty --autologin root --keep-baud 115200,57600,38400,9600 %I $TERM
GETTY
echo paigow-pi >"$ROOT/etc/hostname"
printf '/dev/vda / ext4 rw,errors=remount-ro 0 1\n' >"$ROOT/etc/fstab"
mkdir -p "$ROOT/var/log/journal"

conf="$ROOT/etc/paigow/table.toml"
sed -i -e 's/^number_display = "max7219"/number_display = "segments"\ndisplay_segments = [2, 3, 4, 8, 9, 10, 11]/' \
    -e 's/^sign_modules = 1 /sign_modules = 0 /' \
    -e 's/^card_reading_shoe = false/card_reading_shoe = true/' "$conf"
awk '/^\[sas\]/ {s=1} /^\[/ && !/^\[sas\]/ {s=0} s && /^enabled = true/ {sub(/true/, "false")} {print}' \
    "$conf" >"$conf.new" && cat "$conf.new" >"$conf" && rm "$conf.new"
for want in '^number_display = "segments"' '^display_segments = ' '^sign_modules = 0 ' \
            '^card_reading_shoe = true' '^enabled = false'; do
    grep -q "$want" "$conf" || { echo "image.sh: table.toml edit '$want' did not apply" >&2; exit 1; }
done
in_root /opt/paigow/venv/bin/tablectl config check /etc/paigow/table.toml >>"$OUT/install.log" 2>&1 \
    || { tail -20 "$OUT/install.log" >&2; exit 1; }
umount "$ROOT/dev" "$ROOT/proc"
trap - EXIT

cp "$ROOT/boot/vmlinuz-$ABI-arm64" "$OUT/vmlinuz"
cp "$ROOT/boot/initrd.img-$ABI-arm64" "$OUT/initrd.img"
# device trees naming a Pi 5 and a Pi 4 (gpiozero reads model and linux,revision), dumped from
# the same QEMU machine the VM boots
# shellcheck disable=SC2086
qemu-system-aarch64 -M "$QEMU_BOARD,dumpdtb=$OUT/virt.dtb" $QEMU_OPTS -nographic >/dev/null 2>&1 || true
test -s "$OUT/virt.dtb"
dtc -q -I dtb -O dts -o "$OUT/virt.dts" "$OUT/virt.dtb"
make_dtb() {  # NAME MODEL REVISION
    sed -e "s/^\tmodel = \"linux,dummy-virt\";/\tmodel = \"$2\";/" "$OUT/virt.dts" >"$OUT/$1.dts"
    grep -q "model = \"$2\"" "$OUT/$1.dts"
    printf '\n/ {\n\tsystem {\n\t\tlinux,revision = <%s>;\n\t};\n};\n' "$3" >>"$OUT/$1.dts"
    dtc -q -I dts -O dtb -o "$OUT/$1.dtb" "$OUT/$1.dts"
}
make_dtb pi5 "Raspberry Pi 5 Model B Rev 1.0" 0xd04170
make_dtb pi4 "Raspberry Pi 4 Model B Rev 1.4" 0xc03114
rm -f "$OUT"/*.dts "$OUT/virt.dtb"

mke2fs -q -t ext4 -L pivm -d "$ROOT" "$OUT/root.img" 4G
rm -rf "${ROOT:?}"
echo "image.sh: root.img, vmlinuz, initrd.img, pi5.dtb, pi4.dtb in $OUT"
