export * from './grpc.h2-server.js';
export * from './grpc.h2-framing.js';
