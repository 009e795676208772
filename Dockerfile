# syntax=docker/dockerfile:1
# One image holds all five services; which one runs is the command (Helm and compose set it):
#   docker build -t hermes .
#   docker run --rm hermes node services/gateway/dist/main.js
# Or bake a default: docker build --build-arg SERVICE=runtime -t hermes-runtime .
ARG NODE_IMAGE=node:22-bookworm-slim

# 1. Build: every workspace's dev dependencies, TypeScript compiled to dist/.
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json tsconfig.base.json tsconfig.build.json ./
COPY libs ./libs
COPY services ./services
COPY tools ./tools
COPY tests/package.json ./tests/package.json
COPY bench/package.json ./bench/package.json
RUN npm ci --no-audit --no-fund && npm run build

# 2. Production dependencies only, for the five services and the libraries they use.
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY --from=build /app/package.json /app/package-lock.json ./
# npm needs every workspace's package.json to resolve the lockfile; only the services' trees are installed.
COPY --from=build /app/libs ./libs
COPY --from=build /app/services ./services
COPY --from=build /app/tools ./tools
COPY --from=build /app/tests/package.json ./tests/package.json
COPY --from=build /app/bench/package.json ./bench/package.json
# The build stage's node_modules (dev dependencies, also nested in workspaces) are not carried over.
RUN find . -name node_modules -type d -prune -exec rm -rf {} + \
 && npm ci --omit=dev --no-audit --no-fund --ignore-scripts \
      --workspace services/dispatcher --workspace services/gateway --workspace services/runtime \
      --workspace services/toolbus --workspace services/memory \
 && rm -rf libs/*/src services/*/src libs/*/test services/*/test tools libs/testkit \
 && find libs services -name '*.tsbuildinfo' -delete

# 3. Runtime: non-root, read-only friendly (writes only to /tmp), tini as PID 1 so SIGTERM reaches
#    node (never npm) and MCP stdio servers the toolbus spawns are reaped.
FROM ${NODE_IMAGE}
RUN apt-get update && apt-get install -y --no-install-recommends tini && rm -rf /var/lib/apt/lists/*
ARG SERVICE=gateway
# Services listen on loopback unless told otherwise; in a container, probes and clients come from outside.
ENV NODE_ENV=production HERMES_SERVICE=${SERVICE} HERMES_BIND_HOST=0.0.0.0
WORKDIR /app
COPY --from=deps --chown=root:root /app /app
USER node
# 8080: gateway HTTP API; 9090: /healthz and /readyz (HEALTH_PORT); 9464: Prometheus (METRICS_PORT).
EXPOSE 8080 9090 9464
ENTRYPOINT ["/usr/bin/tini", "--"]
# `exec` replaces the shell, so node is tini's child and gets SIGTERM directly.
CMD ["sh", "-c", "exec node services/${HERMES_SERVICE}/dist/main.js"]
