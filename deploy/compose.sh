#!/usr/bin/env bash
# `make up` / `make down`: runs deploy/compose.yaml with whichever compose this machine has.
#   deploy/compose.sh up|down
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
if [[ $EUID == 0 ]]; then export CONTAINERS_CONF="${CONTAINERS_CONF:-$here/podman/containers.conf}"; fi
if command -v podman-compose >/dev/null 2>&1; then compose=(podman-compose)
elif command -v podman >/dev/null 2>&1 && podman compose version >/dev/null 2>&1; then compose=(podman compose)
elif command -v docker >/dev/null 2>&1 && docker compose version >/dev/null 2>&1; then compose=(docker compose)
else
  echo "compose.sh: no compose found: install podman-compose (apt-get install podman-compose) or docker compose" >&2
  exit 3
fi
case "${1:-}" in
  up) "${compose[@]}" -f "$here/compose.yaml" up -d
      echo "services on 127.0.0.1:50051-50055 (lobby, table, cashier, fairness, history); \`make down\` stops them" ;;
  down) "${compose[@]}" -f "$here/compose.yaml" down ;;
  *) echo "usage: $0 up|down" >&2; exit 2 ;;
esac
