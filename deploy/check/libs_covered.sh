#!/bin/sh
# libs_covered.sh FBCD PKG...: every shared library the binary loads (ldd,
# and the libraries it loads on first use, `fbcd version --libraries`, with
# everything they load in turn) must come from a package the runtime stage
# installs, from one of their dependencies, or from the base image's
# required packages. Prints each library not covered and exits 1 if any.
set -eu
bin=$1; shift
covered=$(mktemp)
libs=$(mktemp)
trap 'rm -f "$covered" "$libs"' EXIT
{
	# the base image (debian:12-slim) holds the Priority: required packages
	dpkg-query -W -f='${Package} ${Priority}\n' | awk '$2 == "required" {print $1}'
	for p in "$@"; do
		echo "$p"
		apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts \
			--no-breaks --no-replaces --no-enhances "$p" 2>/dev/null |
			sed -n 's/^ *\(Pre\)\{0,1\}Depends: <\{0,1\}\([^>: ]*\).*/\2/p; s/^\([a-z0-9][^ ]*\)$/\1/p'
	done
} | sed 's/:.*//' | sort -u >"$covered"
missing=0
ldd "$bin" | awk '/=>/ {print $3}' >"$libs"
# api/lazy: libraries bound on first use are not in ldd's answer
for so in $("$bin" version --libraries); do
	path=$(/sbin/ldconfig -p | awk -v so="$so" '$1 == so && /x86-64|x86_64/ {print $NF; exit}')
	[ -n "$path" ] || path=$(/sbin/ldconfig -p | awk -v so="$so" '$1 == so {print $NF; exit}')
	if [ -z "$path" ]; then
		echo "libs_covered: $so (loaded on first use) is not installed here" >&2
		missing=1
		continue
	fi
	echo "$path" >>"$libs"
	ldd "$path" | awk '/=>/ {print $3}' >>"$libs"
done
for lib in $(sort -u "$libs"); do
	case $(basename "$lib") in
	libasan.so* | libubsan.so* | liblsan.so* | libtsan.so*)
		echo "libs_covered: $lib: sanitizer runtime of a test build, not shipped" >&2
		continue
		;;
	esac
	real=$(readlink -f "$lib")
	pkg=$(dpkg -S "$real" 2>/dev/null | head -1 | sed 's/:.*//') ||
		pkg=$(dpkg -S "$lib" 2>/dev/null | head -1 | sed 's/:.*//') || pkg=""
	[ -n "$pkg" ] || pkg=$(dpkg -S "$lib" 2>/dev/null | head -1 | sed 's/:.*//' || true)
	if [ -z "$pkg" ]; then
		echo "libs_covered: $lib belongs to no Debian package" >&2
		missing=1
	elif ! grep -qx "$pkg" "$covered"; then
		echo "libs_covered: $lib is in $pkg, which the runtime stage does not install" >&2
		missing=1
	fi
done
exit $missing
