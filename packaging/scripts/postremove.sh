#!/bin/sh
# Forgets the removed unit. The data in /var/lib/iggy-kafka and the user are
# kept, even on purge: removing a package must never delete a store, and a
# deleted user's id could be reused by another account that would then own
# the data left behind.
set -e

if [ -d /run/systemd/system ]; then
	systemctl daemon-reload >/dev/null 2>&1 || true
fi
