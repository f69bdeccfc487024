#!/usr/bin/env bash
# CI's arm64 container check (called by .ci/run, after .ci/container.sh; CI_SKIP_CONTAINER=1 skips
# both): the image a Raspberry Pi pulls, built on this x64 machine and run under emulation
# (qemu-aarch64-static through binfmt_misc), without a registry or a Docker daemon. Proves:
#  1. the Dockerfile, unmodified, builds for linux/arm64 with buildah (`--platform linux/arm64`)
#     from an arm64 stand-in for node:24-bookworm-slim (.ci/make-node-base-arm64.sh, made when
#     missing; the x64 one, ../shared/container/make-node-base.sh, first when that is missing too):
#     its build stage runs natively and cross-compiles the better-sqlite3 addon (the check fails if
#     the build log does not say so); the image is an arm64 one;
#  2. the image's CLI runs (`--version`, `--help`) on arm64;
#  3. the gateway starts in it under podman (runc), with a mounted config and a named volume
#     published on 127.0.0.1 only; /healthz answers, and so does the HEALTHCHECK's command (run
#     with podman exec: emulation is slower than the HEALTHCHECK's timeout allows for);
#  4. one paid session, as .ci/container.sh drives it for x64: the host's OCPP 2.0.1 simulator
#     connects to the published port, the session is minted, quoted, started, charges and settles;
#     `ledger verify` passes in the container;
#  5. SIGTERM stops it cleanly (exit 0, "gateway stopped");
#  6. removes its containers, volume and image (the two bases stay, as .ci/container.sh keeps its own).
# Not here (the x64 check covers them and they do not depend on the architecture): a second
# container on the same volume. Not proven: a real arm64 machine.
#
# Measured in the CI rehearsal at 7f28f72 (2026-12-06, the 2-core development machine: 2 x AMD
# EPYC, a Firecracker VM), buildah 1.28, qemu-user-static 7.2, the arm64 stand-in already made:
# the image built in 206 s (536 MB), the whole check 267 s. Making the stand-in, once per machine,
# took 23 min at a load average of 15 to 21 (1401 s with the apt installs).
set -euo pipefail
cd "$(dirname "$0")/.."
started=$SECONDS
NODE_BASE_VERSION=24.21.0 # as .ci/container.sh: the pinned Node
ROOT=${CONTAINER_ROOT:-${XDG_CACHE_HOME:-$HOME/.cache}/fleet-containers}
export CONTAINERS_STORAGE_CONF=$ROOT/storage.conf
IMAGE=localhost/fleet-gateway:arm64-ci
tag=$$
NAME=fleetgw-arm64-$tag
VOLUME=fleetgw-arm64-data-$tag
API_KEY=fgk_ci_arm64_container_only_0000000000001
DRIVER=ada@ci-fleet.ng
CHARGER=CP-DC-01
mkdir -p "$ROOT"
podman() { command podman "$@" 2> >(grep -v 'systemd connection' >&2); }
disk() { echo "disk $1: $(df -h --output=used,avail "$ROOT" | tail -1) used/available; container storage $(du -sh "$ROOT" | cut -f1)"; }
load() { echo "load average $(cut -d' ' -f1-3 /proc/loadavg)"; }
disk before
load

work=$(mktemp -d)
sim_pid=
cleanup() {
  [ -n "$sim_pid" ] && kill "$sim_pid" 2>/dev/null || true
  podman rm -f -t 0 "$NAME" >/dev/null 2>&1 || true
  podman volume rm -f "$VOLUME" >/dev/null 2>&1 || true
  podman rmi -f "$IMAGE" >/dev/null 2>&1 || true
  podman image prune -f >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

echo "== the arm64 node:24-bookworm-slim stand-in"
t0=$SECONDS
if ! command -v podman >/dev/null 2>&1 || ! podman image exists localhost/node:24-bookworm-slim; then
  bash ../shared/container/make-node-base.sh "$NODE_BASE_VERSION"
fi
bash .ci/make-node-base-arm64.sh --binfmt
if ! podman image exists localhost/node:24-bookworm-slim-arm64 ||
  ! podman manifest exists docker.io/library/node:24-bookworm-slim 2>/dev/null; then
  bash .ci/make-node-base-arm64.sh "$NODE_BASE_VERSION"
fi
echo "base ready in $((SECONDS - t0)) s"
[ -f dist/simulators/ocpp201/cli.js ] && [ -f dist/cli.js ] || npm run --silent build </dev/null

echo "== building the image for linux/arm64 (the build stage native, the SQLite addon cross-compiled)"
t0=$SECONDS
# buildah 1.28 (Debian 12's) sets TARGETARCH from --platform (not from --arch) but leaves
# BUILDPLATFORM empty in a FROM line, which would put the build stage under emulation: given here,
# as BuildKit sets it on its own.
timeout 3000 buildah bud --platform linux/arm64 --build-arg "BUILDPLATFORM=linux/$(dpkg --print-architecture)" \
  --isolation chroot --pull=never --format docker -t "$IMAGE" . >"$work/build.log" 2>&1 ||
  { tail -30 "$work/build.log"; echo "the arm64 image build failed" >&2; exit 1; }
# The addon was cross-compiled in a native build stage (scripts/build-sqlite.mjs says so), not
# compiled under emulation: the reason this check fits in .ci/run.
grep -q 'better-sqlite3: built .* for arm64' "$work/build.log" ||
  { grep better-sqlite3 "$work/build.log"; echo "the SQLite addon was not cross-compiled" >&2; exit 1; }
arch=$(podman image inspect "$IMAGE" --format '{{.Os}}/{{.Architecture}}')
echo "image built in $((SECONDS - t0)) s; $arch; size: $(podman image inspect "$IMAGE" --format '{{.Size}}' | awk '{printf "%.0f MB", $1 / 1e6}')"
load
[ "$arch" = linux/arm64 ] || { echo "the image is not an arm64 one" >&2; exit 1; }

# As .ci/container.sh: runc, and ulimits at or under this machine's hard limits (podman's defaults
# are above them).
run=(podman --runtime runc run --arch arm64 --ulimit "nofile=$(ulimit -Hn):$(ulimit -Hn)" --ulimit nproc=32768:32768)

echo "== the CLI in the image"
t0=$SECONDS
# One container (each one costs a copy of the image's layers with vfs): the Node, the CLI.
"${run[@]}" --rm --entrypoint sh "$IMAGE" -c 'node -p "process.platform + \"-\" + process.arch + \" \" + process.version" &&
  node dist/cli.js --version && node dist/cli.js --help | head -n 3'
echo "CLI ran in $((SECONDS - t0)) s"

# The site, as .ci/container.sh has it: one OCPP 2.0.1 DC charger, one fleet with one driver.
port=$(node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")
sed -n '/^chargers:/,$d; p' config/demo.yaml |
  sed 's/^siteId: .*/siteId: ci-container-arm64/; s/^  host: 127.0.0.1/  host: 0.0.0.0/; s|^  path: ../.data/demo.db|  path: /data/gateway.db|' >"$work/gateway.yaml"
# The CLI on the host's pinned Node (the system's may be one the CLI refuses); computed first, so
# that a failure stops the check here.
hash=$(node_modules/.bin/node dist/cli.js hash-password demo-dc-charger-secret-01)
cat >>"$work/gateway.yaml" <<YAML
chargers:
  - id: $CHARGER
    passwordHash: $hash
    connectors:
      - { id: '1', tariff: dc-fast, maxPowerKw: 120 }
YAML
cat >"$work/seed.json" <<JSON
{ "fleets": [ { "id": "ci-fleet", "name": "CI Fleet", "apiKeys": ["$API_KEY"],
  "drivers": [ { "id": "drv-ada", "email": "$DRIVER", "openingBalance": 50000 } ] } ] }
JSON
chmod 755 "$work" && chmod 644 "$work"/*
grep -q 'path: /data/gateway.db' "$work/gateway.yaml" && grep -q 'host: 0.0.0.0' "$work/gateway.yaml"

# The session's state and end reason, read in the container (the API has no session read).
session_state() {
  podman exec "$1" node -e "
    const db = new (require('better-sqlite3'))('/data/gateway.db', { readonly: true });
    const row = db.prepare('SELECT state, end_reason FROM sessions WHERE id = ?').get(process.argv[1]);
    console.log(row ? row.state + ' ' + row.end_reason : 'missing');" "$2"
}

echo "== run, health check, /healthz, seed"
t0=$SECONDS
podman volume create "$VOLUME" >/dev/null
"${run[@]}" -d --name "$NAME" --health-interval disable \
  -p "127.0.0.1:$port:8080" -v "$VOLUME:/data" -v "$work:/etc/fleet-gateway:ro" "$IMAGE" >/dev/null
# The gateway answers first, from the host; then the HEALTHCHECK's own command runs in the
# container. Not `podman healthcheck run`: its 5 s timeout is for real hardware, and under emulation
# on a loaded 2-core machine loading the CLI alone took 38 s (load average 8, 2026-12-06).
healthy=
for _ in $(seq 1 300); do
  if curl -fs --max-time 5 "http://127.0.0.1:$port/healthz" >/dev/null 2>&1; then healthy=1 && break; fi
  sleep 1
done
[ -n "$healthy" ] || { podman logs "$NAME" | tail -20; echo "the gateway in the container never answered" >&2; exit 1; }
echo "/healthz answered in $((SECONDS - t0)) s: $(curl -fsS --max-time 10 "http://127.0.0.1:$port/healthz")"
check=$(podman image inspect "$IMAGE" --format '{{json .Config.Healthcheck.Test}}')
[ "$check" = '["CMD","node","dist/cli.js","health","--timeout","4000"]' ] ||
  { echo "the image's HEALTHCHECK is not the one this check runs: $check" >&2; exit 1; }
podman exec "$NAME" node dist/cli.js health --timeout 4000
echo "the HEALTHCHECK's command passed in $((SECONDS - t0)) s"
podman exec "$NAME" node dist/cli.js seed /etc/fleet-gateway/seed.json

echo "== one paid session through the published port"
t0=$SECONDS
node dist/simulators/ocpp201/cli.js --url "ws://127.0.0.1:$port/ocpp" --id "$CHARGER" \
  --password demo-dc-charger-secret-01 --time-factor 60 \
  --plug '1:model=Hyundai Ioniq 5,batteryKwh=77.4,soc=35,maxPowerW=220000' >"$work/sim.log" 2>&1 &
sim_pid=$!
session=$(timeout 300 node .ci/container-session.mjs "http://127.0.0.1:$port" "$API_KEY" "$DRIVER" "$CHARGER" 1000)
state=
for _ in $(seq 1 90); do
  state=$(session_state "$NAME" "$session")
  [ "${state%% *}" = settled ] && break
  sleep 1
done
echo "session $session: $state (in $((SECONDS - t0)) s)"
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

cleanup
trap - EXIT
disk after
load
echo "arm64 container check passed in $((SECONDS - started)) s"
