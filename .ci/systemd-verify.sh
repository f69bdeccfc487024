#!/usr/bin/env bash
# Checks deploy/systemd/fleet-gateway.service with `systemd-analyze verify`; any message, warning
# or error, fails. The unit names the install path /opt/fleet-gateway; the checked copy names this
# checkout instead, so the ExecStart check sees a real executable (node_modules/.bin/node).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v systemd-analyze >/dev/null 2>&1; then
  echo "installing systemd (for systemd-analyze)"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends systemd </dev/null >/dev/null
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sed "s|/opt/fleet-gateway|$PWD|g" deploy/systemd/fleet-gateway.service >"$tmp/fleet-gateway.service"
out=$(cd "$tmp" && SYSTEMD_LOG_LEVEL=notice systemd-analyze verify "$tmp/fleet-gateway.service" 2>&1) || {
  printf '%s\n' "$out"
  exit 1
}
if [ -n "$out" ]; then
  printf 'systemd-analyze verify printed (warnings fail the check):\n%s\n' "$out"
  exit 1
fi
echo "systemd unit: systemd-analyze verify clean"
(cd "$tmp" && systemd-analyze security --offline=yes "$tmp/fleet-gateway.service" 2>/dev/null | tail -1) || true
