# dms-keeper container image (docs/operations.md, "Container"). The config and the key files are
# mounted as files, state on a volume:
#
#   docker run -d --name dms-keeper --stop-timeout 20 \
#     -v /etc/dms-keeper/dms-keeper.yaml:/etc/dms-keeper/dms-keeper.yaml:ro \
#     -v /etc/dms-keeper/credentials:/run/secrets:ro \
#     -v dms-keeper-state:/var/lib/dms-keeper \
#     -p 127.0.0.1:9464:9464 dms-keeper
#
# - Key files named `{ file: NAME }` in the config are read from /run/secrets (CREDENTIALS_DIRECTORY;
#   Docker/Compose secrets land there too). The rule is the systemd unit's: readable by the keeper's
#   user and nobody else. Here no systemd copies them for that user, so on the host they belong to
#   uid 1000 (`node`): `chown 1000:1000 FILE && chmod 0400 FILE`. Kubernetes writes Secret files as
#   root: deploy/kubernetes/ copies them for uid 1000 in an init container (docs/operations.md).
# - The keeper handles SIGTERM/SIGINT itself (graceful stop within 15 s), so it runs as PID 1;
#   `docker run --init` is optional. Give it 20 s to stop, as the systemd unit does: --stop-timeout 20
#   (Compose: stop_grace_period: 20s; Kubernetes: terminationGracePeriodSeconds: 20); Docker's
#   default of 10 s would SIGKILL it mid-stop.
# - Ops endpoints listen on 0.0.0.0:9464 inside the container (no authentication): publish the port
#   on loopback or a private network only.
# - Other commands: `docker run --rm -v ...:ro dms-keeper check-config --config /etc/dms-keeper/dms-keeper.yaml`.
# - The demo (README.md, "Quick start"; what `npm start` runs), nothing to mount:
#     docker run --rm -p 127.0.0.1:9464:9464 --entrypoint node dms-keeper scripts/demo.mjs
#   scripts/demo.mjs writes the simulator's public throwaway demo keys to the state volume
#   (/var/lib/dms-keeper/demo-credentials) when it starts, then runs the keeper on
#   config/dms-keeper.example.yaml against its embedded simulator. No key is in the image.

FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts/build.mjs ./scripts/
COPY src ./src
# The build (scripts/build.mjs, esbuild) does not check types: the image's check is here.
RUN npx tsc -p tsconfig.build.json --noEmit && npm run build

FROM node:20-bookworm-slim
# STATE_DIRECTORY / CREDENTIALS_DIRECTORY: what systemd's StateDirectory= / LoadCredential= would set.
# DMS_KEEPER_STATE_DIR: the volume is the only writable place, so it wins over a config's state_dir.
# NODE_OPTIONS: V8 heap limits sized for up to 10,000 accounts; `dms-keeper check-config` prints the
# line for a config (docs/operations.md, "Memory"). Override with -e NODE_OPTIONS=... for more.
ENV NODE_ENV=production \
    NODE_OPTIONS="--max-old-space-size=192 --max-semi-space-size=4" \
    STATE_DIRECTORY=/var/lib/dms-keeper \
    DMS_KEEPER_STATE_DIR=/var/lib/dms-keeper \
    CREDENTIALS_DIRECTORY=/run/secrets \
    DMS_KEEPER_SERVER__LISTEN=0.0.0.0:9464
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist/src ./dist/src
COPY config ./config
# The demo's entry (see the top): the keys it writes are public and generated at run time.
COPY scripts/demo.mjs scripts/demo-credentials.mjs ./scripts/
RUN mkdir -p /var/lib/dms-keeper && chown node:node /var/lib/dms-keeper && chmod 0700 /var/lib/dms-keeper
USER node
VOLUME ["/var/lib/dms-keeper"]
EXPOSE 9464
# Liveness (/healthz) on the port DMS_KEEPER_SERVER__LISTEN names; node, since the image has no curl.
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "const l = process.env.DMS_KEEPER_SERVER__LISTEN || '0.0.0.0:9464'; fetch('http://127.0.0.1:' + l.slice(l.lastIndexOf(':') + 1) + '/healthz', { signal: AbortSignal.timeout(4000) }).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["node", "dist/src/main.js"]
CMD ["run", "--config", "/etc/dms-keeper/dms-keeper.yaml"]
