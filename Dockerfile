# syntax=docker/dockerfile:1
# Arbor: one image, three commands — `serve` (API + STS, the default), `reconcile`
# (Kubernetes custom resources) and `migrate`. See deploy/base for how they are run.
FROM node:20-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build && npm prune --omit=dev

FROM node:20-slim
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
ENTRYPOINT ["node", "dist/src/main.js"]
CMD ["serve"]
