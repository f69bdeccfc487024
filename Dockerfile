# syntax=docker/dockerfile:1
# Node 22, not 24: from Node 24.19 on, better-sqlite3 12 (the last major that runs on Node 20)
# aborts the process when the garbage collector finalizes a statement (README, "Runtime").
# Build: compile TypeScript and better-sqlite3 (from source) with the full toolchain.
FROM node:22-bookworm-slim AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY simulators ./simulators
RUN npm run build && npm prune --omit=dev

# Run: no compiler, no dev dependencies, not root.
FROM node:22-bookworm-slim
# MALLOC_MMAP_THRESHOLD_: each charger's scrypt password check allocates 16 MB on a libuv thread;
# with glibc's moving threshold those buffers stay resident after a reconnect storm. Fixed at
# 128 KiB they go back to the system: 103 -> 64 KB of RSS per charger at 2,000 chargers (README,
# "Benchmarks").
ENV NODE_ENV=production \
    FLEET_GATEWAY_CONFIG=/etc/fleet-gateway/gateway.yaml \
    MALLOC_MMAP_THRESHOLD_=131072
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY config ./config
RUN mkdir -p /data /etc/fleet-gateway && chown node:node /data
USER node
# The database (and its WAL files) live here; back this volume up (README, "Operations").
VOLUME ["/data"]
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.HEALTH_PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
ENTRYPOINT ["node", "dist/cli.js"]
CMD ["serve"]
