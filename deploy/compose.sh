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
# `up` returns only once every service answers SERVING on its gRPC health service and the gateway's
# /readyz answers 200, then prints the web client's address; a stack that does not come up (an image
# pull that failed, a service crash-looping) fails loudly: which service, what it answered, the
# containers' states and their last log lines (libs/service_runtime/stack_health.py).
python="${POKER_PYTHON:-$here/../.venv/bin/python}"
timeout="${POKER_UP_TIMEOUT_SECONDS:-180}"
case "${1:-}" in
  up) if ! "${compose[@]}" -f "$here/compose.yaml" up -d; then
        echo "compose.sh: FAILED: compose could not start the stack (see above)" >&2; exit 1
      fi
      if ! "$python" -m service_runtime.stack_health --timeout "$timeout" \
          lobby=127.0.0.1:50051 table=127.0.0.1:50052 cashier=127.0.0.1:50053 \
          fairness=127.0.0.1:50054 history=127.0.0.1:50055 gateway=http://127.0.0.1:50056/readyz; then
        "${compose[@]}" -f "$here/compose.yaml" ps >&2 || true
        "${compose[@]}" -f "$here/compose.yaml" logs --tail 20 >&2 || true
        echo "compose.sh: FAILED: the stack is not healthy (above: what each service answered, the containers, their logs); \`make down\` stops it" >&2
        exit 1
      fi
      echo "services on 127.0.0.1:50051-50055 (lobby, table, cashier, fairness, history); \`make down\` stops them"
      echo "the web client: http://127.0.0.1:50056/ (the gateway; development sign-in by name)" ;;
  down) "${compose[@]}" -f "$here/compose.yaml" down ;;
  *) echo "usage: $0 up|down" >&2; exit 2 ;;
esac
