# Vexil, and Vexil Edge, in one image.
#   docker build -t vexil .
#   docker run -p 4242:4242 -v vexil-data:/data vexil                       # the server, embedded database in /data
#   docker run -p 3063:3063 -e UPSTREAM_URL=… -e TOKENS=… vexil node --disable-proto=throw dist/edge/main.js     # Vexil Edge

# The build: every dependency (TypeScript, Vite), then the server and the admin UI into dist/.
FROM node:26-trixie-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts ./scripts
COPY src ./src
COPY web ./web
RUN node scripts/build.mjs

# What runs needs the production dependencies alone: the development ones are over 500 MB. Their type
# declarations and source maps (28 MB of the 114) are read by editors and debuggers, never by Node.
FROM node:26-trixie-slim AS production-dependencies
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force \
    && find node_modules -type f \( -name '*.d.ts' -o -name '*.d.mts' -o -name '*.d.cts' -o -name '*.map' \) -delete

FROM node:26-trixie-slim
ENV NODE_ENV=production \
    DATA_DIR=/data \
    # glibc's allocator gives memory back to the system sooner, with fewer arenas: an idle process keeps less
    # (measured on Vexil Edge; see docs/PERFORMANCE.md).
    MALLOC_ARENA_MAX=2 \
    MALLOC_TRIM_THRESHOLD_=131072
WORKDIR /app
COPY --from=production-dependencies /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
# The embedded database lives in /data, owned by the unprivileged user the image runs as ("node", uid 1000).
RUN mkdir /data && chown node:node /data
USER node
VOLUME ["/data"]
# The server listens on 4242 and the edge on 3063 unless PORT says otherwise; both on every interface.
EXPOSE 4242 3063
# /health of the server, or /internal-backstage/health of the edge (dist/healthcheck.js tells which runs).
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 CMD ["node", "dist/healthcheck.js"]
# Node itself is process 1 (no shell in between): SIGTERM reaches Vexil's own graceful shutdown.
CMD ["node", "--disable-proto=throw", "dist/main.js"]
