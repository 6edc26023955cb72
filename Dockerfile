# kapi API server image: one node per container (docker-compose.yml runs three plus haproxy).
# Node 24, one of the Node lines the tests run on (npm run test:node24).
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build && npm prune --omit=dev

FROM node:24-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/proto ./proto
# Mount points owned by the unprivileged user: a fresh named volume takes the ownership of the
# image directory it is mounted on, so the server can write there without running as root.
RUN mkdir -p /var/lib/kapi/pki /var/lib/kapi/n1 /var/lib/kapi/n2 /var/lib/kapi/n3 /var/lib/kapi/data \
 && chown -R node:node /var/lib/kapi \
 && chmod 700 /var/lib/kapi/pki
USER node
# 6443 single node / balancer, 6444-6446 cluster nodes (HTTPS), 2380-2383 Raft peers.
EXPOSE 6443 6444 6445 6446 2380 2381 2382 2383
ENTRYPOINT ["node", "dist/apps/apiserver/src/main.js"]
CMD ["--data-dir", "/var/lib/kapi/data", "--bind-address", "0.0.0.0"]
