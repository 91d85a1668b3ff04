# Vexil, and Vexil Edge, in one image.
#   docker build -t vexil .
#   docker run -p 4242:4242 -v vexil-data:/data vexil                       # the server, embedded database in /data
#   docker run -p 3063:3063 -e UPSTREAM_URL=… -e TOKENS=… vexil node --disable-proto=throw --max-semi-space-size=2 dist/edge/main.js     # Vexil Edge

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
# declarations and source maps (28 MB of the 114), and their READMEs and change logs, are read by editors, debuggers
# and people, never by Node.
FROM node:26-trixie-slim AS production-dependencies
WORKDIR /app
COPY package.json package-lock.json ./
COPY src/domain/code-references/code-reading/languages.ts ./languages.ts
# The grammar packages ship 36 grammars and their sources (58 MB): `vexil refs scan` reads the ones languages.ts names,
# kept gzipped (2 MB; the scanner unzips them), with each package's package.json. stdlib (the experiments' special functions) ships each function as a package with its C sources, docs and an
# Apache licence and notice: Node reads only their lib/, and one copy of each identical licence and notice, hard-linked,
# keeps them with every package.
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force \
    && find node_modules -type f \( -name '*.d.ts' -o -name '*.d.mts' -o -name '*.d.cts' -o -name '*.map' \) -delete \
    && find node_modules -type f \( -iname 'README*' -o -iname 'CHANGELOG*' -o -iname 'HISTORY.md' \) -delete \
    && find node_modules/@stdlib -mindepth 2 -maxdepth 2 \( -name docs -o -name src -o -name include -o -name manifest.json \
        -o -name binding.gyp -o -name README.md \) -exec rm -rf {} + \
    && node -e "const fs=require('fs'),path=require('path');const root='node_modules/@stdlib';const seen=new Map();for(const name of fs.readdirSync(root))for(const kept of ['LICENSE','NOTICE']){const file=path.join(root,name,kept);if(!fs.existsSync(file))continue;const text=fs.readFileSync(file,'utf8');const first=seen.get(text);if(first===undefined){seen.set(text,file);continue;}fs.rmSync(file);fs.linkSync(first,file);}" \
    && node --input-type=module -e "import fs from 'node:fs';import path from 'node:path';import zlib from 'node:zlib';import {LANGUAGES} from './languages.ts';const kept=new Set(LANGUAGES.map((l)=>path.join('node_modules',l.grammar.package,l.grammar.file)));for(const pkg of new Set(LANGUAGES.map((l)=>l.grammar.package))){for(const entry of fs.readdirSync(path.join('node_modules',pkg),{recursive:true,withFileTypes:true})){const file=path.join(entry.parentPath,entry.name);if(!entry.isFile()||entry.name==='package.json')continue;if(kept.has(file))fs.writeFileSync(file+'.gz',zlib.gzipSync(fs.readFileSync(file),{level:9}));fs.rmSync(file);}}" \
    && rm languages.ts

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
