#!/usr/bin/env bash
# Writes the image's Debian base as a root filesystem tarball, from Debian packages only (no
# container registry): bookworm, minbase, Python 3.11 with venv (pip's wheel for the build stage).
#   deploy/image/base.sh OUT.tar
# build.sh caches the tarball (keyed on this file) and `podman import`s it.
set -euo pipefail
out="$1"
suite=bookworm
mirror="${POKER_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
security="${POKER_DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}"
command -v mmdebstrap >/dev/null || { echo "base.sh: mmdebstrap is missing (apt-get install mmdebstrap)" >&2; exit 3; }
mmdebstrap --quiet --format=tar --variant=minbase --include=python3,python3-venv,ca-certificates \
    --dpkgopt='path-exclude=/usr/share/man/*' \
    --dpkgopt='path-exclude=/usr/share/doc/*' \
    --dpkgopt='path-include=/usr/share/doc/*/copyright' \
    --dpkgopt='path-exclude=/usr/share/locale/*' \
    --dpkgopt='path-exclude=/usr/share/info/*' \
    --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*' \
    "$suite" "$out" \
    "deb $mirror $suite main" "deb $mirror $suite-updates main" "deb $security $suite-security main"
