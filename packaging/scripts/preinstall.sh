#!/bin/sh
# Creates the system user and group the service runs as, before the package's
# files are unpacked, so that the postinstall script can hand them over.
set -e

if ! getent group iggy-kafka >/dev/null 2>&1; then
	groupadd --system iggy-kafka
fi
if ! getent passwd iggy-kafka >/dev/null 2>&1; then
	useradd --system --gid iggy-kafka --home-dir /var/lib/iggy-kafka --no-create-home \
		--shell /usr/sbin/nologin --comment "iggy-kafka gateway" iggy-kafka
fi
