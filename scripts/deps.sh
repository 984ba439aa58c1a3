#!/usr/bin/env bash
# Installs what building and testing xmatune needs on Debian 12, unless it is there.
# Idempotent and quiet: safe to call from every other script.
set -euo pipefail
pkgs=(build-essential cmake pkg-config libyaml-dev libjansson-dev libiberty-dev
      uthash-dev check valgrind clang python3 clang-format clang-tidy cppcheck
      librsvg2-bin # rsvg-convert: the report picture's render test (integ_tool_report_svg_html)
      libhiredis-dev redis-server) # the remote tier's client (static), and its tests' server
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "xmatune: installing ${missing[*]}" >&2
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
