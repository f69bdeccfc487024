#!/usr/bin/env bash
# CI's container check (called by .ci/run; CI_SKIP_CONTAINER=1 skips it there, nothing else does).
# Builds the Dockerfile unmodified with buildah and runs it with podman, without a Docker daemon:
#  1. builds a local stand-in for node:24-bookworm-slim when missing (../shared/container/make-node-base.sh),
#  2. builds the image, prints its size,
#  3. runs the gateway in it with a mounted config and a named volume, published on 127.0.0.1 only,
#  4. waits for the image's HEALTHCHECK (podman healthcheck run), seeds it,
#  5. drives one paid session: a simulated OCPP 2.0.1 charger on the host connects to the published
#     port, the session is minted, quoted and started over the API, charges, and settles,
#  6. stops the container with SIGTERM: it must exit 0 promptly and log "gateway stopped",
#  7. runs a new container on the same volume: the settled session is there, `ledger verify` passes,
#  8. removes its containers, volume and image (vfs layers are large), prints disk use.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$SECONDS
NODE_BASE_VERSION=24.21.0 # the Node of the node:24-bookworm-slim stand-in (the pinned Node)
ROOT=${CONTAINER_ROOT:-${XDG_CACHE_HOME:-$HOME/.cache}/fleet-containers}
export CONTAINERS_STORAGE_CONF=$ROOT/storage.conf
IMAGE=localhost/fleet-gateway:ci
tag=$$
NAME=fleetgw-ci-$tag
VOLUME=fleetgw-ci-data-$tag
API_KEY=fgk_ci_container_check_only_000000000001
DRIVER=ada@ci-fleet.ng
CHARGER=CP-DC-01
mkdir -p "$ROOT"
# podman 4.3 logs an error for every health-check timer it cannot hand to systemd (there is none
# here); `podman healthcheck run` below is the check. Everything else podman says passes through.
podman() { command podman "$@" 2> >(grep -v 'systemd connection' >&2); }
disk() { echo "disk $1: $(df -h --output=used,avail "$ROOT" | tail -1) used/available; container storage $(du -sh "$ROOT" | cut -f1)"; }
disk before

work=$(mktemp -d)
sim_pid=
cleanup() {
  [ -n "$sim_pid" ] && kill "$sim_pid" 2>/dev/null || true
  podman rm -f -t 0 "$NAME" "$NAME-2" >/dev/null 2>&1 || true
  podman volume rm -f "$VOLUME" >/dev/null 2>&1 || true
  podman rmi -f "$IMAGE" >/dev/null 2>&1 || true
  podman image prune -f >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

if ! command -v podman >/dev/null 2>&1 || ! podman image exists docker.io/library/node:24-bookworm-slim; then
  echo "== building the node:24-bookworm-slim stand-in (Node $NODE_BASE_VERSION)"
  bash ../shared/container/make-node-base.sh "$NODE_BASE_VERSION"
fi
[ -f dist/simulators/ocpp201/cli.js ] || npm run --silent build

echo "== building the image"
t0=$SECONDS
buildah bud --isolation chroot --pull=never --format docker -q -t "$IMAGE" . >/dev/null
echo "image built in $((SECONDS - t0)) s; size: $(podman image inspect "$IMAGE" --format '{{.Size}}' | awk '{printf "%.0f MB", $1 / 1e6}')"

# The site: one OCPP 2.0.1 DC charger (the demo's), one fleet with one driver.
port=$(node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")
sed -n '/^chargers:/,$d; p' config/demo.yaml |
  sed 's/^siteId: .*/siteId: ci-container/; s/^  host: 127.0.0.1/  host: 0.0.0.0/; s|^  path: ../.data/demo.db|  path: /data/gateway.db|' >"$work/gateway.yaml"
# The CLI on the pinned Node (the system's may be one the CLI refuses); computed first, so that a
# failure stops the check here rather than writing an empty hash into the config.
hash=$(node_modules/.bin/node dist/cli.js hash-password demo-dc-charger-secret-01)
cat >>"$work/gateway.yaml" <<YAML
chargers:
  - id: $CHARGER
    passwordHash: $hash
    # The simulator delivers its 120 kW --time-factor times faster than real time: the
    # plausibility bound is scaled by simulation.timeFactor, copied from config/demo.yaml.
    connectors:
      - { id: '1', tariff: dc-fast, maxPowerKw: 120 }
YAML
cat >"$work/seed.json" <<JSON
{ "fleets": [ { "id": "ci-fleet", "name": "CI Fleet", "apiKeys": ["$API_KEY"],
  "drivers": [ { "id": "drv-ada", "email": "$DRIVER", "openingBalance": 50000 } ] } ] }
JSON
chmod 755 "$work" && chmod 644 "$work"/*
grep -q 'path: /data/gateway.db' "$work/gateway.yaml" && grep -q 'host: 0.0.0.0' "$work/gateway.yaml"

run_gateway() {
  # --health-interval disable: podman's timed checks need systemd (not here); the image's
  # HEALTHCHECK stays, and `podman healthcheck run` runs it.
  podman --runtime runc run -d --name "$1" --health-interval disable \
    --ulimit nofile="$(ulimit -Hn):$(ulimit -Hn)" --ulimit nproc=32768:32768 \
    -p "127.0.0.1:$port:8080" -v "$VOLUME:/data" -v "$work:/etc/fleet-gateway:ro" "$IMAGE" >/dev/null
}
wait_healthy() {
  for _ in $(seq 1 60); do
    if podman healthcheck run "$1" >/dev/null 2>&1; then return 0; fi
    sleep 1
  done
  podman logs "$1" | tail -20
  echo "the container's HEALTHCHECK never passed" >&2
  return 1
}
# The session's state and end reason, read in the container (the API has no session read).
session_state() {
  podman exec "$1" node -e "
    const db = new (require('better-sqlite3'))('/data/gateway.db', { readonly: true });
    const row = db.prepare('SELECT state, end_reason FROM sessions WHERE id = ?').get(process.argv[1]);
    console.log(row ? row.state + ' ' + row.end_reason : 'missing');" "$2"
}

echo "== run, seed, health check"
podman volume create "$VOLUME" >/dev/null
run_gateway "$NAME"
# Seed once the gateway answers, i.e. has migrated the new database: a seed racing the gateway's
# first migration on an empty file can fail with "table ... already exists".
wait_healthy "$NAME"
podman exec "$NAME" node dist/cli.js seed /etc/fleet-gateway/seed.json
podman healthcheck run "$NAME" && echo "podman healthcheck run: healthy"

echo "== one paid session through the published port"
node dist/simulators/ocpp201/cli.js --url "ws://127.0.0.1:$port/ocpp" --id "$CHARGER" \
  --password demo-dc-charger-secret-01 --time-factor 60 \
  --plug '1:model=Hyundai Ioniq 5,batteryKwh=77.4,soc=35,maxPowerW=220000' >"$work/sim.log" 2>&1 &
sim_pid=$!
session=$(node .ci/container-session.mjs "http://127.0.0.1:$port" "$API_KEY" "$DRIVER" "$CHARGER" 1000)
state=
for _ in $(seq 1 60); do
  state=$(session_state "$NAME" "$session")
  [ "${state%% *}" = settled ] && break
  sleep 1
done
echo "session $session: $state"
[ "${state%% *}" = settled ] || { tail -20 "$work/sim.log"; podman logs "$NAME" | tail -20; exit 1; }
kill "$sim_pid" && wait "$sim_pid" 2>/dev/null || true
sim_pid=
podman exec "$NAME" node dist/cli.js ledger verify | tail -n 1

echo "== graceful stop (SIGTERM)"
t0=$SECONDS
podman stop -t 30 "$NAME" >/dev/null
stop_s=$((SECONDS - t0))
code=$(podman inspect "$NAME" --format '{{.State.ExitCode}}')
echo "stopped in ${stop_s} s, exit code $code"
podman logs "$NAME" 2>&1 | grep -q '"msg":"gateway stopped"' || { podman logs "$NAME" | tail -5; echo "no graceful stop logged" >&2; exit 1; }
[ "$code" = 0 ] && [ "$stop_s" -lt 20 ] || { echo "SIGTERM did not stop the gateway cleanly and promptly" >&2; exit 1; }
podman rm "$NAME" >/dev/null

echo "== a new container on the same volume"
run_gateway "$NAME-2"
wait_healthy "$NAME-2"
state=$(session_state "$NAME-2" "$session")
echo "session $session after the restart: $state"
[ "${state%% *}" = settled ]
podman exec "$NAME-2" node dist/cli.js ledger verify | tail -n 1
podman stop -t 30 "$NAME-2" >/dev/null

cleanup
trap - EXIT
disk after
echo "container check passed in $((SECONDS - started)) s"
