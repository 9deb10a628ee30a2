#!/bin/sh
# Stops and disables the service when the package is removed, but not when it
# is upgraded: deb passes "remove" and rpm passes 0 for a real removal.
set -e

case "$1" in
remove | purge | 0)
	if [ -d /run/systemd/system ]; then
		systemctl disable --now iggy-kafka.service >/dev/null 2>&1 || true
	fi
	;;
esac
