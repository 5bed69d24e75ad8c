# ratelimitd container image. Build: docker build -t ratelimitd .
# Run, with a Redis on a network of their own (or `docker compose up` with compose.yaml):
#   docker network create ratelimitd
#   docker run -d --name redis --network ratelimitd redis:7-alpine
#   docker run --network ratelimitd -p 8080:8080 -p 8081:8081 -p 127.0.0.1:6070:6070 \
#     -v "$PWD/config/ratelimit:/data/ratelimit" \
#     -e RUNTIME_ROOT=/data -e RUNTIME_SUBDIRECTORY=ratelimit -e RUNTIME_WATCH_ROOT=false \
#     -e BACKEND_TYPE=redis -e REDIS_SOCKET_TYPE=tcp -e REDIS_URL=redis:6379 ratelimitd
# The rules are the YAML files in $RUNTIME_ROOT/$RUNTIME_SUBDIRECTORY/config (RUNTIME_APPDIRECTORY's default):
# mount config/ratelimit, which holds only config/*.yaml, not config/ (config/local.env is no rule file). The
# debug port has no authentication, so it is published on loopback only. docs/containers.md has the same
# lines; test/e2e/container-run-line.test.ts checks both and runs their layout.
# Build and runtime stages share one Debian release, so the native addon compiled in the first (better-sqlite3,
# linked against glibc) loads in the last. Node 26 is the Active LTS line (Node 20 reached end of life in
# April 2026). Envoy Gateway and Istio run the image as `/bin/ratelimit`: docs/envoy-gateway-istio.md;
# test/e2e/container-image.test.ts checks this file line by line.

# Dependencies: every package with install scripts off (--ignore-scripts, whatever npm the base image bundles;
# package.json's "allowScripts" says the same to an npm that reads it), then better-sqlite3's own install: a
# prebuilt binary when one can be fetched, else node-gyp compiles it, which needs python3, make and g++.
FROM node:26-bookworm-slim AS deps
WORKDIR /app
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund \
 && npm rebuild better-sqlite3 \
 && node -e "new (require('better-sqlite3'))(':memory:').close()"

# TypeScript → dist/ (generated protobuf code is committed under src/gen; nothing is generated here).
FROM deps AS build
COPY tsconfig.json tsconfig.build.json ./
COPY cmd ./cmd
COPY src ./src
RUN npm run build

# Production dependencies only, keeping the compiled addon but not its sources and object files (27 MB).
FROM deps AS prod-deps
RUN npm prune --omit=dev --ignore-scripts --no-audit --no-fund \
 && cd node_modules/better-sqlite3 \
 && rm -rf deps src build/deps build/Release/obj build/Release/obj.target build/Release/.deps \
      build/Release/sqlite3.a build/Release/test_extension.node \
 && node -e "new (require('better-sqlite3'))(':memory:').close()"

# Runtime: Node and the app. The reference's binary names are symlinks to the compiled entry points (each
# starts with `#!/usr/bin/env node`; `npm run build` made them executable): /bin/ratelimit is the daemon
# that ignores command-line arguments with one warning, as the reference's binary does (Envoy AI Gateway
# passes some), /bin/ratelimit_client and /bin/ratelimit_config_check are the CLI tools.
FROM node:26-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=prod-deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
RUN ln -s /app/dist/cmd/ratelimit.js /bin/ratelimit \
 && ln -s /app/dist/cmd/ratelimit-client.js /bin/ratelimit_client \
 && ln -s /app/dist/cmd/ratelimit-config-check.js /bin/ratelimit_config_check \
 && mkdir data && chmod 1777 data
# The users API's default SQLite database (DATABASE_URL=sqlite:./data/ratelimitd.db) goes in /app/data,
# writable by any UID (sticky, like /tmp). With a read-only root file system nothing is: the daemon then
# warns once and runs without the users and migrations APIs; mount an emptyDir there to have them.
# Nobody, as Envoy Gateway runs it (UID/GID 65534); any other non-root UID works as well.
USER 65534:65534
# HTTP (/json, /healthcheck), gRPC (Envoy, Connect, gRPC-Web), debug (/rlconfig, /stats, /metrics).
EXPOSE 8080 8081 6070
# GETs /healthcheck where the HTTP listener is (HOST and PORT; a wildcard HOST is reached on loopback), with
# Node itself: the image has no curl.
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "const h = process.env.HOST || '0.0.0.0'; const host = h === '0.0.0.0' ? '127.0.0.1' : h === '::' ? '::1' : h.replace(/^\\[|\\]$/g, ''); require('node:http').get({ host, port: process.env.PORT || 8080, path: '/healthcheck', timeout: 2000 }, (r) => process.exit(r.statusCode === 200 ? 0 : 1)).on('error', () => process.exit(1)).on('timeout', () => process.exit(1))"]
ENTRYPOINT ["node", "dist/cmd/ratelimitd.js"]
