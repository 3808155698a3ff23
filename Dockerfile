# syntax=docker/dockerfile:1
# Arbor: one image, three commands — `serve` (API + STS, the default), `reconcile`
# (Kubernetes custom resources) and `migrate`. See deploy/base for how they are run.
# Node.js 24 LTS (maintained until April 2028), pinned to the exact release that CI tests
# on (scripts/node-lts/install.sh). Pin by digest too where the build can reach the
# registry: FROM node:24.21.0-slim@sha256:<digest of `docker buildx imagetools inspect`>.
ARG NODE_VERSION=24.21.0
FROM node:${NODE_VERSION}-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY console ./console
COPY scripts/console ./scripts/console
COPY scripts/pglite-template.mjs ./scripts/
RUN npm run build && npm prune --omit=dev

FROM node:${NODE_VERSION}-slim
ENV NODE_ENV=production \
    DATA_DIR=/data
WORKDIR /app
COPY --from=build --chown=root:root /app/package.json ./
COPY --from=build --chown=root:root /app/node_modules ./node_modules
COPY --from=build --chown=root:root /app/dist ./dist
# The embedded database and generated keys live in DATA_DIR, the one writable path
# (a volume in Kubernetes, where the root filesystem is read-only).
RUN mkdir -p /data && chown node:node /data
# The `node` user of the base image (uid 1000), as deploy/base's securityContext expects.
USER node
EXPOSE 8080
# An 8 MB young generation and an old one that grows by half past what a full GC left
# live keep a worker under 200 MB of RSS under load, with a quarter (Node 20) to a half
# (Node 24) less time in the garbage collector than the 4 MB alone (docs/operations.md,
# "Memory"); cluster workers inherit the flags.
ENTRYPOINT ["node", "--max-semi-space-size=8", "--heap-growing-percent=50", "dist/src/main.js"]
CMD ["serve"]
