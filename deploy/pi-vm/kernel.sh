#!/usr/bin/env bash
# Stage "kernel" of `make pi-vm`: Debian's arm64 kernel packages and gpio-sim.ko for them.
#
#   deploy/pi-vm/kernel.sh OUT ABI VERSION       (APT_CONFIG: the private arm64 apt of build.sh)
#
# Debian's 6.1 kernels build neither gpio-sim nor IRQ_SIM, so drivers/gpio/gpio-sim.c and
# kernel/irq/irq_sim.c from linux-source-6.1 (the same Debian version as the arm64 image) are
# compiled together out of tree into one gpio-sim.ko against the arm64 headers with the host's
# kbuild, cross-compiled. irq_to_desc() is not exported to modules, so irq_sim.c's
# handle_simple_irq(irq_to_desc(n)) becomes generic_handle_irq(n) (shared/reference/pi-vm.md).
# Fills OUT/debs (linux-image, linux-headers) and OUT/gpio-sim.ko. Never touches the host's dpkg.
set -euo pipefail
OUT="$1"; ABI="$2"; VERSION="$3"
: "${APT_CONFIG:?kernel.sh needs the arm64 APT_CONFIG of build.sh}"
mkdir -p "$OUT/debs" "$OUT/hdr" "$OUT/mod"
chown _apt "$OUT/debs" 2>/dev/null || true  # apt downloads as _apt
(cd "$OUT/debs" && apt-get download -qq "linux-image-$ABI-arm64=$VERSION" \
    "linux-headers-$ABI-arm64=$VERSION" "linux-headers-$ABI-common=$VERSION")
for deb in "$OUT"/debs/linux-headers-*.deb; do dpkg-deb -x "$deb" "$OUT/hdr"; done
# the headers' scripts/ and tools point at /usr/lib/linux-kbuild-6.1: the host's (amd64) kbuild
mkdir -p "$OUT/hdr/usr/lib"
ln -sfn /usr/lib/linux-kbuild-6.1 "$OUT/hdr/usr/lib/linux-kbuild-6.1"
# its Makefile includes /usr/src/linux-headers-$ABI-common/Makefile: the extracted copy instead
printf 'include %s/hdr/usr/src/linux-headers-%s-common/Makefile\n' "$OUT" "$ABI" \
    >"$OUT/hdr/usr/src/linux-headers-$ABI-arm64/Makefile"

src=linux-source-6.1
tar -xJf /usr/src/$src.tar.xz -C "$OUT" "$src/drivers/gpio/gpio-sim.c" "$src/drivers/gpio/gpiolib.h" \
    "$src/kernel/irq/irq_sim.c"
cp "$OUT/$src/drivers/gpio/gpio-sim.c" "$OUT/mod/gpio-sim-core.c"
cp "$OUT/$src/drivers/gpio/gpiolib.h" "$OUT/mod/gpiolib.h"
cp "$OUT/$src/kernel/irq/irq_sim.c" "$OUT/mod/irq_sim.c"
rm -rf "${OUT:?}/$src"
sed -i 's/handle_simple_irq(irq_to_desc(\([^)]*\)))/generic_handle_irq(\1)/' "$OUT/mod/irq_sim.c"
if grep -q irq_to_desc "$OUT/mod/irq_sim.c"; then
    echo "kernel.sh: irq_sim.c still calls irq_to_desc (not exported): the patch no longer" \
         "applies to this linux-source-6.1" >&2
    exit 1
fi
printf 'obj-m := gpio-sim.o\ngpio-sim-y := gpio-sim-core.o irq_sim.o\n' >"$OUT/mod/Kbuild"
DEB_BUILD_ARCH=amd64 DEB_HOST_ARCH=arm64 DEB_HOST_GNU_TYPE=aarch64-linux-gnu \
    make -s -C "$OUT/hdr/usr/src/linux-headers-$ABI-arm64" M="$OUT/mod" ARCH=arm64 \
    CROSS_COMPILE=aarch64-linux-gnu- modules
cp "$OUT/mod/gpio-sim.ko" "$OUT/gpio-sim.ko"
vermagic="$(tr '\0' '\n' <"$OUT/gpio-sim.ko" | sed -n 's/^vermagic=//p' | head -1)"
case "$vermagic" in
    "$ABI-arm64 "*) ;;
    *) echo "kernel.sh: gpio-sim.ko has vermagic '$vermagic', not $ABI-arm64" >&2; exit 1 ;;
esac
rm -rf "${OUT:?}/hdr" "${OUT:?}/mod"
echo "kernel.sh: gpio-sim.ko for $ABI-arm64 ($VERSION)"
