#!/usr/bin/env bash
# Install the pai gow table controller on Raspberry Pi OS (Bookworm or later), as root:
#
#   sudo deploy/install.sh              install or upgrade from this source tree
#   deploy/install.sh --dry-run         print every step, change nothing (no root needed)
#   sudo deploy/install.sh --no-uart    leave the UART lines of config.txt and cmdline.txt alone
#   sudo deploy/install.sh --no-boot    leave /boot/firmware/config.txt and cmdline.txt alone
#   sudo deploy/install.sh --wheelhouse DIR   install offline from a wheelhouse (pi-release);
#                                       a release's (make release) holds its wheel: installed,
#                                       and its manifest: the installed software compared
#   sudo deploy/install.sh --release-manifest FILE   compare with this release manifest
#
# What it does, in order (each step is safe to repeat):
#   1. apt packages: python3-venv, python3-pip, sqlite3 (no compiler: lgpio comes as a wheel);
#      skipped when they are installed already (an offline table)
#   2. the system user `paigow` (no login, no home) in the groups gpio, spi and dialout
#   3. /opt/paigow/venv: the runtime dependencies exactly as deploy/requirements.lock pins them
#      (every file checked against its SHA-256, binary wheels only: lgpio's aarch64 wheel), from
#      PyPI or from the wheelhouse (deploy/wheelhouse.sh), then this package built with the
#      locked setuptools (no index)
#   4. /etc/paigow/table.toml from deploy/config.example.toml (never overwritten), root:paigow 0640
#   5. /var/lib/paigow for the journal, paigow:paigow 0750
#   6. the journal's forward-secure sealing key ([journal] seal_key, /var/lib/paigow/journal.seal),
#      made once as paigow by `tablectl journal setup-keys`, which prints the verification key
#      (kept off the Pi); a kept configuration with key_file gets its static key as before
#   7. the udev rules of deploy/udev/ (stable /dev/paigow-shoe and /dev/paigow-shuffler)
#   8. /etc/modules-load.d/paigow-table.conf: usbserial and cdc_acm loaded at boot, so the
#      unit's DeviceAllow=char-ttyUSB / char-ttyACM rules exist when it starts
#   9. config.txt: SPI0 with one chip select for the MAX7219 chain (dtparam=spi=on,
#      dtoverlay=spi0-1cs), outputs released to inputs when the service dies
#      (dtparam=strict_gpiod), and the PL011 UART on GPIO 14/15 for SAS (Bluetooth moved off
#      it, serial console removed)
#  10. time synchronisation (systemd-timesyncd): a Pi has no RTC
#  11. the systemd unit paigow-table.service; then the installed software (the packages' files and
#      the unit) compared with the release's manifest (the wheelhouse's software-packages.manifest,
#      --release-manifest FILE, else the one deploy/manifest.sh makes of this source tree): a
#      difference stops the install, naming the files, before anything is approved; then
#      /etc/paigow/software.manifest, the approved manifest the service compares its power-up
#      hash with (controller/service/selfcheck.py: the packages, the unit, the interpreter, the
#      dependencies); the unit enabled (started only when the configuration passes
#      `tablectl config check`)
# A reboot is needed after step 9 changes the boot files; the script says so.
set -euo pipefail

PREFIX=/opt/paigow
VENV="$PREFIX/venv"
SERVICE_USER=paigow
CONF_DIR=/etc/paigow
CONF="$CONF_DIR/table.toml"
STATE_DIR=/var/lib/paigow
UNIT=paigow-table.service
MODULES_CONF=/etc/modules-load.d/paigow-table.conf
SRC="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
LOCK="$SRC/deploy/requirements.lock"
MANIFEST="$CONF_DIR/software.manifest"

DRY_RUN=0
CONFIGURE_UART=1
CONFIGURE_BOOT=1
WHEELHOUSE=""
RELEASE_MANIFEST=""
REBOOT_NEEDED=0
NEW_CONFIG=0

usage() {
    sed -n '2,11p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
}

while [ "$#" -gt 0 ]; do
    case "$1" in
        --dry-run) DRY_RUN=1 ;;
        --no-uart) CONFIGURE_UART=0 ;;
        --no-boot) CONFIGURE_BOOT=0 ;;
        --wheelhouse)
            if [ "$#" -lt 2 ]; then
                echo "install.sh: --wheelhouse needs a directory" >&2; exit 2
            fi
            WHEELHOUSE="$2"; shift ;;
        --release-manifest)
            if [ "$#" -lt 2 ]; then
                echo "install.sh: --release-manifest needs a file" >&2; exit 2
            fi
            RELEASE_MANIFEST="$2"; shift ;;
        -h|--help) usage; exit 0 ;;
        *) echo "install.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
    esac
    shift
done

say() { printf '==> %s\n' "$*"; }

# Run a command, or only print it with --dry-run.
run() {
    if [ "$DRY_RUN" -eq 1 ]; then
        printf '    %s\n' "$*"
    else
        "$@"
    fi
}

if [ "$DRY_RUN" -eq 0 ] && [ "$(id -u)" -ne 0 ]; then
    echo "install.sh: run as root (sudo $0), or with --dry-run to see the steps" >&2
    exit 1
fi
for needed in "$SRC/pyproject.toml" "$SRC/deploy/config.example.toml" "$LOCK" \
              "$SRC/systemd/$UNIT" "$SRC/deploy/modules-load.d/paigow-table.conf"; do
    if [ ! -f "$needed" ]; then
        echo "install.sh: $needed is missing: run the script from the source tree" >&2
        exit 1
    fi
done

# An offline install needs this release's wheelhouse: its copy of the lock is the source tree's.
if [ -n "$WHEELHOUSE" ] && ! cmp -s "$WHEELHOUSE/requirements.lock" "$LOCK"; then
    echo "install.sh: $WHEELHOUSE is not a wheelhouse of this release (its requirements.lock" \
         "differs from $LOCK or is missing): build it with deploy/wheelhouse.sh DIR" >&2
    exit 1
fi

# The boot files moved to /boot/firmware in Bookworm.
BOOT=/boot/firmware
[ -d "$BOOT" ] || BOOT=/boot
CONFIG_TXT="$BOOT/config.txt"
CMDLINE_TXT="$BOOT/cmdline.txt"

# --- 1. packages -----------------------------------------------------------------------------
# No python3-dev, swig or liblgpio-dev: liblgpio-dev is not in Debian main (plain Debian would
# abort here), and lgpio 0.2.2.0 ships a manylinux_2_34_aarch64 wheel that installs on Bookworm
# (glibc 2.36) without a compiler (docs: shared/reference/pi-release.md).
APT_PACKAGES=(python3-venv python3-pip sqlite3)
if [ "$DRY_RUN" -eq 0 ] && dpkg-query -W -f='${Status}\n' "${APT_PACKAGES[@]}" 2>/dev/null \
        | grep -c '^install ok installed$' | grep -qx "${#APT_PACKAGES[@]}"; then
    say "apt packages ${APT_PACKAGES[*]}: installed already"
else
    say "apt packages"
    run apt-get update
    run apt-get install -y --no-install-recommends "${APT_PACKAGES[@]}"
fi

# --- 2. system user --------------------------------------------------------------------------
say "system user $SERVICE_USER (groups gpio, spi, dialout)"
for group in gpio spi dialout; do
    if ! getent group "$group" >/dev/null; then
        run groupadd --system "$group"
    fi
done
if id "$SERVICE_USER" >/dev/null 2>&1; then
    run usermod --append --groups gpio,spi,dialout "$SERVICE_USER"
else
    run useradd --system --no-create-home --home-dir "$STATE_DIR" \
        --shell /usr/sbin/nologin --groups gpio,spi,dialout "$SERVICE_USER"
fi

# --- 3. virtual environment and the package ---------------------------------------------------
say "virtual environment $VENV: the locked dependencies (hashes checked), then this package"
run install -d -m 0755 "$PREFIX" "$PREFIX/share" "$CONF_DIR"
if [ ! -x "$VENV/bin/python" ]; then
    run python3 -m venv "$VENV"
fi
pip_source=()
if [ -n "$WHEELHOUSE" ]; then
    pip_source=(--no-index --find-links "$WHEELHOUSE")
fi
# exactly the locked files (the lock includes pip and setuptools); binary wheels only, so no
# compiler is ever needed (lgpio's aarch64 wheel)
run "$VENV/bin/pip" install "${pip_source[@]}" --require-hashes --only-binary=:all: -r "$LOCK"
# this package: the release's wheel when the wheelhouse holds one (make release puts it there),
# else built from the source tree with the locked setuptools: nothing unpinned fetched
release_wheel=""
if [ -n "$WHEELHOUSE" ]; then
    release_wheel="$(find "$WHEELHOUSE" -maxdepth 1 -name 'paigow_table_controller-*.whl' | sort | tail -n 1)"
fi
if [ -n "$release_wheel" ]; then
    run "$VENV/bin/pip" install --no-index --no-deps --force-reinstall "$release_wheel"
else
    run "$VENV/bin/pip" install --no-index --no-deps --no-build-isolation --force-reinstall "$SRC"
fi
run install -m 0644 "$SRC/docs/operator-guide.md" "$PREFIX/share/operator-guide.md"
run install -m 0644 "$SRC/docs/wiring.md" "$PREFIX/share/wiring.md"
run ln -sf "$VENV/bin/tablectl" /usr/local/bin/tablectl

# --- 4. configuration -------------------------------------------------------------------------
say "configuration $CONF"
run install -d -m 0755 "$CONF_DIR"
if [ -e "$CONF" ]; then
    say "keeping the existing $CONF (the example is $SRC/deploy/config.example.toml)"
else
    run install -m 0640 -o root -g "$SERVICE_USER" "$SRC/deploy/config.example.toml" "$CONF"
    NEW_CONFIG=1
    say "edit $CONF: table id, asset number, SAS address, supervisors (tablectl config hash-pin)"
fi

# --- 5. journal directory ---------------------------------------------------------------------
say "journal directory $STATE_DIR"
run install -d -m 0750 -o "$SERVICE_USER" -g "$SERVICE_USER" "$STATE_DIR"

# --- 6. journal sealing key (forward-secure seals; docs/journal.md) --------------------------
# The configuration's [journal] seal_key (the example's: /var/lib/paigow/journal.seal): made once,
# as the service user who overwrites it after every entry, by `tablectl journal setup-keys`, which
# prints the VERIFICATION KEY once (a string and a QR code) for the back office and the
# regulator: it is not kept on the Pi. Never made over an existing key, nor beside a journal that
# already holds entries (that journal has its own key; a new journal begins with `tablectl
# journal carry`). A kept configuration that still names key_file (the static keyed chain of
# journals made before seals) gets that key as before: 32 random bytes as 64 hex digits,
# root:paigow 0440, never overwritten.
journal_setting() {  # the value of KEY = "..." in the [journal] section of FILE
    sed -n '/^\[journal\]/,/^\[/ s/^'"$1"' *= *"\([^"]*\)".*/\1/p' "$2" | head -n 1
}
if [ -e "$CONF" ]; then installed_conf="$CONF"; else installed_conf="$SRC/deploy/config.example.toml"; fi
SEAL_FILE="$(journal_setting seal_key "$installed_conf")"
KEY_FILE="$(journal_setting key_file "$installed_conf")"
JOURNAL_DB="$(journal_setting path "$installed_conf")"
if [ -n "$SEAL_FILE" ]; then
    if [ -e "$SEAL_FILE" ]; then
        say "journal sealing key $SEAL_FILE exists: kept"
    elif [ -n "$JOURNAL_DB" ] && [ -s "$JOURNAL_DB" ]; then
        say "journal sealing key $SEAL_FILE is missing but the journal $JOURNAL_DB exists: no key made"
        say "  (restore the journal's sealing key, or begin a new journal: tablectl journal carry)"
    else
        say "journal sealing key $SEAL_FILE (forward-secure seals)"
        run install -d -m 0750 -o "$SERVICE_USER" -g "$SERVICE_USER" "$(dirname "$SEAL_FILE")"
        say "PRINT THE VERIFICATION KEY BELOW for the back office and the regulator: it is shown once"
        run runuser -u "$SERVICE_USER" -- "$VENV/bin/tablectl" journal setup-keys --seal-key "$SEAL_FILE"
    fi
elif [ -n "$KEY_FILE" ]; then
    if [ -e "$KEY_FILE" ]; then
        say "journal key $KEY_FILE exists: kept (static keyed chain; new journals use seal_key)"
    else
        say "journal key $KEY_FILE (static keyed chain; new journals use seal_key)"
        if [ "$DRY_RUN" -eq 1 ]; then
            printf '    %s\n' "od -An -tx1 -N32 /dev/urandom | tr -d ' \\n' > $KEY_FILE"
        else
            (umask 0277 && od -An -tx1 -N32 /dev/urandom | tr -d ' \n' > "$KEY_FILE")
        fi
        run chown "root:$SERVICE_USER" "$KEY_FILE"
        run chmod 0440 "$KEY_FILE"
    fi
else
    say "no [journal] seal_key in $installed_conf: the journal is not sealed (docs/journal.md)"
fi
# --- 6. end ----------------------------------------------------------------------------------

# --- 7. udev rules ----------------------------------------------------------------------------
say "udev rules"
shopt -s nullglob
rules=("$SRC"/deploy/udev/*.rules)
shopt -u nullglob
if [ "${#rules[@]}" -eq 0 ]; then
    say "no rules in deploy/udev/: the serial devices keep their kernel names"
else
    run install -d -m 0755 /etc/udev/rules.d
    for rule in "${rules[@]}"; do
        run install -m 0644 "$rule" /etc/udev/rules.d/
    done
    if ! run udevadm control --reload-rules; then
        say "udev is not running (a chroot?): the rules apply at the next boot"
    else
        run udevadm trigger --subsystem-match=tty
    fi
fi

# --- 8. USB serial drivers loaded at boot -------------------------------------------------------
# systemd resolves DeviceAllow=char-ttyUSB / char-ttyACM from /proc/devices when the unit starts;
# a driver not loaded yet drops the rule and open() fails with EPERM until a restart.
say "kernel modules usbserial, cdc_acm at boot ($MODULES_CONF)"
run install -m 0644 "$SRC/deploy/modules-load.d/paigow-table.conf" "$MODULES_CONF"
run modprobe -a usbserial cdc_acm || say "modprobe failed (a chroot?): the modules load at boot"

# --- 9. boot configuration: SPI0, strict_gpiod, the PL011 UART for SAS -------------------------
# Lines go under an [all] filter after a marker, so a conditional section ([pi4], [cm5] ...) at
# the end of config.txt cannot swallow them.
add_boot_line() {
    local line="$1"
    if [ "$DRY_RUN" -eq 1 ]; then
        printf '    append "%s" to %s (if missing)\n' "$line" "$CONFIG_TXT"
    elif ! grep -qxF "$line" "$CONFIG_TXT"; then
        printf '%s\n' "$line" >>"$CONFIG_TXT"
        REBOOT_NEEDED=1
    fi
}
# PAIGOW_BOARD_MODEL stands in for /proc/device-tree/model (tests, --dry-run on another machine)
model="${PAIGOW_BOARD_MODEL:-$( (tr -d '\0' </proc/device-tree/model) 2>/dev/null || true)}"
if [ "$CONFIGURE_BOOT" -eq 1 ]; then
    say "boot configuration $CONFIG_TXT (model: ${model:-unknown})"
    if [ "$DRY_RUN" -eq 0 ] && [ ! -f "$CONFIG_TXT" ]; then
        echo "install.sh: $CONFIG_TXT not found: not Raspberry Pi OS? (use --no-boot)" >&2
        exit 1
    fi
    if [ "$DRY_RUN" -eq 0 ] && ! grep -q '^# paigow-table' "$CONFIG_TXT"; then
        printf '\n# paigow-table: SPI0 for the display chain, strict_gpiod, SAS UART\n[all]\n' \
            >>"$CONFIG_TXT"
    fi
    # SPI0 (MOSI 10, SCLK 11, CE0 8; MISO 9 is claimed too) for the MAX7219 chain; spi0-1cs
    # keeps CE1 (BCM 7) a GPIO, where the default plan has the shaker sensor.
    add_boot_line "dtparam=spi=on"
    add_boot_line "dtoverlay=spi0-1cs"
    # Raspberry Pi kernels keep a released output driven (raspberrypi/linux#6117); with
    # strict_gpiod a line the service no longer holds returns to an input, and the board's
    # pull-downs (docs/wiring.md) hold every driver dark after a crash.
    add_boot_line "dtparam=strict_gpiod"
fi
if [ "$CONFIGURE_BOOT" -eq 1 ] && [ "$CONFIGURE_UART" -eq 1 ]; then
    # The SAS link uses the PL011 UART on GPIO 14/15 (/dev/ttyAMA0). On a Pi 3/4 Bluetooth
    # holds the PL011, so Bluetooth is disabled; on a Pi 5, Pi 500 or CM5 the header UART is
    # uart0. The serial console must not talk on that line.
    say "PL011 UART on GPIO 14/15 for SAS ($CONFIG_TXT, $CMDLINE_TXT)"
    add_boot_line "enable_uart=1"
    case "$model" in
        *"Raspberry Pi 5"*|*"Compute Module 5"*)  # "Raspberry Pi 5" also matches the Pi 500
            add_boot_line "dtparam=uart0=on" ;;
        *) add_boot_line "dtoverlay=disable-bt" ;;
    esac
    if [ "$DRY_RUN" -eq 1 ]; then
        printf '    remove console=serial0,* and console=ttyAMA0,* from %s\n' "$CMDLINE_TXT"
    elif grep -Eq 'console=(serial0|ttyAMA0),[0-9]+' "$CMDLINE_TXT"; then
        cp "$CMDLINE_TXT" "$CMDLINE_TXT.paigow-backup"
        sed -i -E 's/ ?console=(serial0|ttyAMA0),[0-9]+//g' "$CMDLINE_TXT"
        REBOOT_NEEDED=1
    fi
    run systemctl disable --now hciuart.service serial-getty@ttyAMA0.service \
        serial-getty@serial0.service || true
fi

# --- 10. time synchronisation -------------------------------------------------------------------
# No RTC: until NTP sets the clock, timestamps are off. The unit waits up to 60 s for it
# (systemd-time-wait-sync) and the journal marks entries taken before it.
say "time synchronisation (systemd-timesyncd)"
run systemctl enable --now systemd-timesyncd.service || true

# --- 11. systemd unit, the release's manifest compared, the approved manifest ------------------
say "systemd unit $UNIT"
run install -m 0644 "$SRC/systemd/$UNIT" "/etc/systemd/system/$UNIT"
# The installed software (the packages' files and the unit) against the release's manifest, made
# when the release was built (issue 28 item 2): a difference stops here, before anything is
# approved, naming the files. Without a release (a source tree), the tree's own manifest: what
# pip installed must be what the tree holds.
if [ -z "$RELEASE_MANIFEST" ] && [ -n "$WHEELHOUSE" ] \
        && [ -f "$WHEELHOUSE/software-packages.manifest" ]; then
    RELEASE_MANIFEST="$WHEELHOUSE/software-packages.manifest"
fi
if [ -n "$RELEASE_MANIFEST" ]; then
    say "the installed software against the release's manifest $RELEASE_MANIFEST"
    compare_with="$RELEASE_MANIFEST"
else
    say "the installed software against this source tree's manifest (not a release's)"
    if [ "$DRY_RUN" -eq 1 ]; then
        compare_with="TREE.manifest"
        printf '    %s\n' "bash $SRC/deploy/manifest.sh $SRC > $compare_with"
    else
        compare_with="$(mktemp)"
        trap 'rm -f "$compare_with"' EXIT
        bash "$SRC/deploy/manifest.sh" "$SRC" >"$compare_with"
    fi
fi
# The approved software manifest: what the service compares its power-up hash with. Compare
# the hash printed here with the release's certified hash before the table opens.
if ! run "$VENV/bin/python" -m controller.service.selfcheck --release-manifest "$compare_with" \
        --write "$MANIFEST"; then
    echo "install.sh: stopped: the installed software is not the release's (above); nothing" \
         "approved ($MANIFEST unchanged), the service not restarted" >&2
    exit 1
fi
run chown "root:$SERVICE_USER" "$MANIFEST"
run chmod 0444 "$MANIFEST"
# systemd as PID 1 (sd_booted): not in a chroot or an image being built, where the unit is
# enabled (symlinks only) and starts at the next boot
SYSTEMD_RUNNING=0
[ -d /run/systemd/system ] && SYSTEMD_RUNNING=1
if [ "$SYSTEMD_RUNNING" -eq 1 ] || [ "$DRY_RUN" -eq 1 ]; then
    run systemctl daemon-reload
fi
run systemctl enable "$UNIT"
if [ "$DRY_RUN" -eq 1 ]; then
    # what the real run does next, with its conditions (it restarts the service only then)
    printf '    %s config check %s\n' "$VENV/bin/tablectl" "$CONF"
    printf '    then, if it passes, %s is not a new copy of the example, systemd runs and no\n' \
        "$CONF"
    printf '    reboot is needed: systemctl restart %s (otherwise it says why not)\n' "$UNIT"
elif "$VENV/bin/tablectl" config check "$CONF"; then
    if [ "$NEW_CONFIG" -eq 1 ]; then
        say "not started: $CONF is the example; edit it, then systemctl start $UNIT"
    elif [ "$SYSTEMD_RUNNING" -eq 0 ]; then
        say "systemd is not running here (a chroot?): $UNIT starts at the next boot"
    elif [ "$REBOOT_NEEDED" -eq 0 ]; then
        systemctl restart "$UNIT"
        say "started: systemctl status $UNIT; journalctl -u $UNIT"
    fi
else
    say "the configuration has problems (listed above): fix $CONF, then"
    say "  tablectl config check $CONF && systemctl restart $UNIT"
fi

if [ "$REBOOT_NEEDED" -eq 1 ]; then
    say "the boot configuration changed (SPI0, strict_gpiod, SAS UART): reboot to finish"
fi
say "done"
