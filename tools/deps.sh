#!/bin/sh
# deps.sh: make sure the build and test dependencies are present. As root on
# Debian it installs what is missing; otherwise it names the command to run.
set -eu
PKGS="build-essential pkg-config libpcre2-dev librdkafka-dev libcjson-dev
libsqlite3-dev zlib1g-dev libmicrohttpd-dev sqlite3 jq perl python3 time curl"
missing=""
for lib in libpcre2-8 rdkafka libcjson sqlite3 zlib libmicrohttpd; do
	pkg-config --exists "$lib" 2>/dev/null || missing="$missing $lib"
done
for cmd in cc make prove jq sqlite3 python3 /usr/bin/time curl; do
	command -v "$cmd" >/dev/null 2>&1 || missing="$missing $cmd"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
	echo "deps: installing packages for:$missing" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends $PKGS >/dev/null
	exit 0
fi
echo "deps: missing:$missing" >&2
echo "deps: run as root: apt-get install" $PKGS >&2
exit 1
