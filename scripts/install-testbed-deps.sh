#!/usr/bin/env bash
# Install the host tools the namespace testbed drives (python -m approxnet.testbed):
#   ip, tc (iproute2), nft (nftables), ethtool (to turn off veth segmentation offloads).
# Installs a Debian package only when its command is missing; safe to run twice.
# Usage: sudo scripts/install-testbed-deps.sh
set -euo pipefail

declare -A pkg_for=(
  [ip]=iproute2
  [tc]=iproute2
  [nft]=nftables
  [ethtool]=ethtool
)

missing=()
for cmd in ip tc nft ethtool; do
  if ! command -v "$cmd" >/dev/null 2>&1 && ! [ -x "/usr/sbin/$cmd" ] && ! [ -x "/sbin/$cmd" ]; then
    pkg="${pkg_for[$cmd]}"
    [[ " ${missing[*]-} " == *" $pkg "* ]] || missing+=("$pkg")
  fi
done

if [ "${#missing[@]}" -eq 0 ]; then
  echo "testbed deps: all present (ip, tc, nft, ethtool)"
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  echo "testbed deps: missing ${missing[*]}; run this script as root" >&2
  exit 1
fi

echo "testbed deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
