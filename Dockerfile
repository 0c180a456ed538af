# dms-keeper container: config and credentials are mounted as files, state on a volume.
#   docker run -v /etc/dms-keeper/dms-keeper.yaml:/etc/dms-keeper/dms-keeper.yaml:ro \
#              -v /etc/dms-keeper/credentials:/run/secrets:ro -v dms-keeper-state:/var/lib/dms-keeper \
#              -p 127.0.0.1:9464:9464 dms-keeper
# Our main handles SIGTERM/SIGINT itself (graceful stop, a second signal forces exit), so it can
# run as PID 1; `docker run --init` is fine too.

FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY src ./src
RUN npm run build

FROM node:20-bookworm-slim
ENV NODE_ENV=production \
    STATE_DIRECTORY=/var/lib/dms-keeper \
    CREDENTIALS_DIRECTORY=/run/secrets \
    DMS_KEEPER_SERVER__LISTEN=0.0.0.0:9464
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist/src ./dist/src
COPY config ./config
RUN mkdir -p /var/lib/dms-keeper && chown node:node /var/lib/dms-keeper
USER node
VOLUME ["/var/lib/dms-keeper"]
EXPOSE 9464
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:9464/healthz').then(r => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["node", "dist/src/main.js"]
CMD ["run", "--config", "/etc/dms-keeper/dms-keeper.yaml"]
