# kapi API server image: one node per container.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build && npm prune --omit=dev

FROM node:20-bookworm-slim
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/proto ./proto
EXPOSE 6443 2380
ENTRYPOINT ["node", "dist/apps/apiserver/src/main.js"]
CMD ["--data-dir", "/var/lib/kapi", "--bind-address", "0.0.0.0"]
