#!/bin/sh
# System libraries Diligence needs beyond Python packages:
# - Pango and HarfBuzz (with its subsetter) for WeasyPrint's PDF rendering;
#   without libharfbuzz-subset0 WeasyPrint falls back to a far slower subsetter.
# - A CJK font so Chinese text renders in pages and packets.
# - poppler-utils for pdfsig/pdftotext, used to check signed packets.
# - gettext to compile the translations (zh-hans).
# With the argument "test", also Chromium for the browser tests, npm (for axe-core)
# and SoftHSM2, the software token the PKCS#11 signing tests sign with.
# Installs them when run as root on Debian/Ubuntu; otherwise prints the command.
set -eu
PACKAGES="libpango-1.0-0 libpangoft2-1.0-0 libharfbuzz0b libharfbuzz-subset0 fonts-noto-cjk poppler-utils gettext"
if [ "${1:-}" = "test" ]; then
  PACKAGES="$PACKAGES chromium softhsm2"
fi

missing=""
for pkg in $PACKAGES; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing="$missing $pkg"
  fi
done
# npm installs axe-core for the browser tests' accessibility checks; a Node.js that
# brings its own npm (not Debian's package) is fine too.
if [ "${1:-}" = "test" ] && ! command -v npm >/dev/null 2>&1; then
  missing="$missing nodejs npm"
fi
[ -z "$missing" ] && exit 0

if ! command -v apt-get >/dev/null 2>&1; then
  echo "Diligence needs these system packages (Debian names):$missing" >&2
  echo "Install their equivalents with your system's package manager." >&2
  exit 0
fi
if [ "$(id -u)" = "0" ]; then
  echo "Installing system packages:$missing"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing
else
  echo "Diligence needs system packages that are not installed. Run:" >&2
  echo "  sudo apt-get update && sudo apt-get install -y$missing" >&2
  exit 1
fi
