#!/bin/sh
# Gives the service user its data directory and read access to the config,
# then lets systemd know about the (new or upgraded) unit. The service is not
# enabled or started here: the config usually needs editing first.
set -e

install -d -m 0750 -o iggy-kafka -g iggy-kafka /var/lib/iggy-kafka
if [ -f /etc/iggy-kafka/config.yaml ]; then
	chown root:iggy-kafka /etc/iggy-kafka/config.yaml
	chmod 0640 /etc/iggy-kafka/config.yaml
fi

if [ -d /run/systemd/system ]; then
	systemctl daemon-reload >/dev/null 2>&1 || true
	# On upgrade, restart a running service onto the new binary.
	systemctl try-restart iggy-kafka.service >/dev/null 2>&1 || true
fi
