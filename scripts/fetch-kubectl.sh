#!/bin/sh
# Extracts kubectl 1.20 from Debian's kubernetes-client package into .tools/kubectl/ without installing it
# system-wide (on some images /usr/bin/kubectl belongs to another package, so `apt-get install` fails).
# Idempotent: does nothing when .tools/kubectl/usr/bin/kubectl already runs.
set -eu
cd "$(dirname "$0")/.."
dest=.tools/kubectl
if [ -x "$dest/usr/bin/kubectl" ] && "$dest/usr/bin/kubectl" version --client >/dev/null 2>&1; then
  exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# apt-get download needs package lists; a fresh machine may have none yet (apt-get update needs root).
if ! (cd "$tmp" && apt-get download kubernetes-client >/dev/null 2>&1); then
  if [ "$(id -u)" -eq 0 ]; then apt-get update -qq; elif command -v sudo >/dev/null; then sudo apt-get update -qq; fi
  (cd "$tmp" && apt-get download kubernetes-client >/dev/null)
fi
rm -rf "$dest" && mkdir -p "$dest"
dpkg-deb -x "$tmp"/kubernetes-client_*.deb "$dest"
"$dest/usr/bin/kubectl" version --client --short 2>/dev/null || "$dest/usr/bin/kubectl" version --client
