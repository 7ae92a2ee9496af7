#!/usr/bin/env bash
# Install the pai gow table controller on Raspberry Pi OS (Bookworm or later), as root:
#
#   sudo deploy/install.sh              install or upgrade from this source tree
#   deploy/install.sh --dry-run         print every step, change nothing (no root needed)
#   sudo deploy/install.sh --no-uart    leave /boot/firmware/config.txt and cmdline.txt alone
#
# What it does, in order (each step is safe to repeat):
#   1. apt packages: python3-venv, python3-dev, swig, liblgpio-dev (lgpio builds if no wheel)
#   2. the system user `paigow` (no login, no home) in the groups gpio and dialout
#   3. /opt/paigow/venv with this package and its `pi` extra (lgpio); `tablectl` in it
#   4. /etc/paigow/table.toml from deploy/config.example.toml (never overwritten), root:paigow 0640
#   5. /var/lib/paigow for the journal, paigow:paigow 0750
#   6. the udev rules of deploy/udev/ (stable /dev/paigow-shoe and /dev/paigow-shuffler)
#   7. the PL011 UART on GPIO 14/15 for SAS: Bluetooth moved off it, serial console removed
#   8. the systemd unit paigow-table.service, enabled (started only when the configuration passes
#      `tablectl config check`)
# A reboot is needed after step 7 changes the boot files; the script says so.
set -euo pipefail

PREFIX=/opt/paigow
VENV="$PREFIX/venv"
SERVICE_USER=paigow
CONF_DIR=/etc/paigow
CONF="$CONF_DIR/table.toml"
STATE_DIR=/var/lib/paigow
UNIT=paigow-table.service
SRC="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

DRY_RUN=0
CONFIGURE_UART=1
REBOOT_NEEDED=0
NEW_CONFIG=0

usage() {
    sed -n '2,9p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
}

for arg in "$@"; do
    case "$arg" in
        --dry-run) DRY_RUN=1 ;;
        --no-uart) CONFIGURE_UART=0 ;;
        -h|--help) usage; exit 0 ;;
        *) echo "install.sh: unknown option $arg" >&2; usage >&2; exit 2 ;;
    esac
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
for needed in "$SRC/pyproject.toml" "$SRC/deploy/config.example.toml" \
              "$SRC/systemd/$UNIT"; do
    if [ ! -f "$needed" ]; then
        echo "install.sh: $needed is missing: run the script from the source tree" >&2
        exit 1
    fi
done

# The boot files moved to /boot/firmware in Bookworm.
BOOT=/boot/firmware
[ -d "$BOOT" ] || BOOT=/boot
CONFIG_TXT="$BOOT/config.txt"
CMDLINE_TXT="$BOOT/cmdline.txt"

# --- 1. packages -----------------------------------------------------------------------------
say "apt packages"
run apt-get update
run apt-get install -y --no-install-recommends python3-venv python3-dev python3-pip swig \
    liblgpio-dev sqlite3

# --- 2. system user --------------------------------------------------------------------------
say "system user $SERVICE_USER (groups gpio, dialout)"
for group in gpio dialout; do
    if ! getent group "$group" >/dev/null; then
        run groupadd --system "$group"
    fi
done
if id "$SERVICE_USER" >/dev/null 2>&1; then
    run usermod --append --groups gpio,dialout "$SERVICE_USER"
else
    run useradd --system --no-create-home --home-dir "$STATE_DIR" \
        --shell /usr/sbin/nologin --groups gpio,dialout "$SERVICE_USER"
fi

# --- 3. virtual environment and the package ---------------------------------------------------
say "virtual environment $VENV with the pi extra"
run install -d -m 0755 "$PREFIX" "$PREFIX/share"
if [ ! -x "$VENV/bin/python" ]; then
    run python3 -m venv "$VENV"
fi
run "$VENV/bin/pip" install --upgrade pip
run "$VENV/bin/pip" install --upgrade "$SRC[pi]"
run install -m 0644 "$SRC/docs/operator-guide.md" "$PREFIX/share/operator-guide.md"
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

# --- 6. udev rules ----------------------------------------------------------------------------
say "udev rules"
shopt -s nullglob
rules=("$SRC"/deploy/udev/*.rules)
shopt -u nullglob
if [ "${#rules[@]}" -eq 0 ]; then
    say "no rules in deploy/udev/: the serial devices keep their kernel names"
else
    for rule in "${rules[@]}"; do
        run install -m 0644 "$rule" /etc/udev/rules.d/
    done
    run udevadm control --reload-rules
    run udevadm trigger --subsystem-match=tty
fi

# --- 7. PL011 UART for SAS --------------------------------------------------------------------
# The SAS link uses the PL011 UART on GPIO 14/15 (/dev/ttyAMA0). On a Pi 3/4 Bluetooth holds the
# PL011, so Bluetooth is disabled; on a Pi 5 the header UART is uart0. The serial console must
# not talk on that line.
add_boot_line() {
    local line="$1"
    if [ "$DRY_RUN" -eq 1 ]; then
        printf '    append "%s" to %s (if missing)\n' "$line" "$CONFIG_TXT"
    elif ! grep -qxF "$line" "$CONFIG_TXT"; then
        printf '%s\n' "$line" >>"$CONFIG_TXT"
        REBOOT_NEEDED=1
    fi
}
if [ "$CONFIGURE_UART" -eq 1 ]; then
    say "PL011 UART on GPIO 14/15 for SAS ($CONFIG_TXT, $CMDLINE_TXT)"
    model="$(cat /proc/device-tree/model 2>/dev/null | tr -d '\0' || true)"
    if [ "$DRY_RUN" -eq 0 ] && [ ! -f "$CONFIG_TXT" ]; then
        echo "install.sh: $CONFIG_TXT not found: not Raspberry Pi OS? (use --no-uart)" >&2
        exit 1
    fi
    if [ "$DRY_RUN" -eq 0 ] && ! grep -q '^# paigow-table' "$CONFIG_TXT"; then
        printf '\n# paigow-table: PL011 UART on GPIO 14/15 for the SAS link\n' >>"$CONFIG_TXT"
    fi
    add_boot_line "enable_uart=1"
    case "$model" in
        *"Raspberry Pi 5"*) add_boot_line "dtparam=uart0=on" ;;
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

# --- 8. systemd unit --------------------------------------------------------------------------
say "systemd unit $UNIT"
run install -m 0644 "$SRC/systemd/$UNIT" "/etc/systemd/system/$UNIT"
run systemctl daemon-reload
run systemctl enable "$UNIT"
if [ "$DRY_RUN" -eq 1 ]; then
    printf '    %s config check %s && systemctl restart %s\n' "$VENV/bin/tablectl" "$CONF" "$UNIT"
elif "$VENV/bin/tablectl" config check "$CONF"; then
    if [ "$NEW_CONFIG" -eq 1 ]; then
        say "not started: $CONF is the example; edit it, then systemctl start $UNIT"
    elif [ "$REBOOT_NEEDED" -eq 0 ]; then
        systemctl restart "$UNIT"
        say "started: systemctl status $UNIT; journalctl -u $UNIT"
    fi
else
    say "the configuration has problems (listed above): fix $CONF, then"
    say "  tablectl config check $CONF && systemctl restart $UNIT"
fi

if [ "$REBOOT_NEEDED" -eq 1 ]; then
    say "the boot configuration changed for the SAS UART: reboot to finish (sudo reboot)"
fi
say "done"
