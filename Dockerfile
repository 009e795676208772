# One image per service: docker build --build-arg SERVICE=runtime -t hermes-runtime .
FROM node:22-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json tsconfig.base.json tsconfig.build.json ./
COPY libs ./libs
COPY services ./services
COPY tools ./tools
COPY tests/package.json ./tests/package.json
RUN npm ci --no-audit --no-fund && npm run build && npm prune --omit=dev

FROM node:22-bookworm-slim
ARG SERVICE
ENV NODE_ENV=production SERVICE=${SERVICE}
WORKDIR /app
COPY --from=build --chown=node:node /app /app
USER node
# hostService handles SIGTERM (drain, bounded exit); node as PID 1 receives it directly.
CMD ["sh", "-c", "exec node services/${SERVICE}/dist/main.js"]
