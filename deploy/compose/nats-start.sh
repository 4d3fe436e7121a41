#!/bin/sh
# nats-server for docker compose, with every component's NATS password in its environment:
# auth.conf names them as $NATS_<COMPONENT>_PASSWORD, which nats-server resolves from there.
# They are compose secrets (files), so no password is written in docker-compose.yml or has to
# be exported on the host. Arguments go to nats-server (compose: --config /etc/nats/nats.conf).
set -eu

secrets_dir="${NATS_SECRETS_DIR:-/run/secrets}"
for component in table scoring bots operator provisioner; do
    file="$secrets_dir/nats-$component-password"
    password="$(cat "$file")"
    if [ -z "$password" ]; then
        echo "nats-start: $file is empty" >&2
        exit 1
    fi
    export "NATS_$(echo "$component" | tr '[:lower:]' '[:upper:]')_PASSWORD=$password"
done
unset password

exec nats-server "$@"
