#!/usr/bin/env bash
# The release's manifest of a source tree (issue 28 item 2), on stdout:
#
#   deploy/manifest.sh TREE
#
# `sha256sum` lines, sorted by path as `controller.service.selfcheck.manifest_text` sorts them:
# the systemd unit as installed (/etc/systemd/system/paigow-table.service, from TREE/systemd/),
# then every .py and .toml file of fsm/, drivers/ and controller/ (the certified code, pay tables,
# house ways and the configuration's schema). deploy/release.sh ships it with the release as
# software-packages.manifest; deploy/install.sh compares the installed software with it
# (`python -m controller.service.selfcheck --release-manifest`) and stops on a difference. The
# interpreter and the dependencies' RECORDs are not in it: they are the table's (its OS build and
# architecture); pip checks every locked file's hash as it installs them.
set -euo pipefail
TREE="${1:?usage: deploy/manifest.sh TREE}"
cd "$TREE"
printf '%s  %s\n' "$(sha256sum systemd/paigow-table.service | cut -d' ' -f1)" \
    /etc/systemd/system/paigow-table.service
find fsm drivers controller \( -name '*.py' -o -name '*.toml' \) -not -path '*/__pycache__/*' \
    | LC_ALL=C sort | xargs sha256sum
