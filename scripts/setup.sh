#!/usr/bin/env bash
# Install exactly the Debian 12 packages amrma needs to build, test and demo. Idempotent:
# does nothing (not even apt-get update) when everything is already installed.
#   scripts/setup.sh [PKG...]   also the named extra packages
#                                (scripts/test.sh --clang: clang and its fuzzer runtime)
set -euo pipefail

PKGS=(
	build-essential pkg-config meson ninja-build	# toolchain
	dpdk dpdk-dev libdpdk-dev			# DPDK 22.11: libs, PMDs, testpmd, telemetry
	libnuma-dev					# NUMA placement
	libcmocka-dev					# unit tests
	python3						# dpdk-telemetry.py, bench/plot helpers
	tshark						# Wireshark dissector test
	gnuplot-nox					# bench plots
	valgrind					# memory checking (scripts/test.sh --valgrind)
	iproute2 procps					# veth pairs and sysctl (af_packet tests)
	nftables					# frame loss on a bridge (bridge_loss test)
	"$@"
)

missing=()
for p in "${PKGS[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
	exit 0
fi
echo "setup: installing ${missing[*]}"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
# through sudo the environment is reset: hand the frontend setting over explicitly
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
	"${missing[@]}" >/dev/null
