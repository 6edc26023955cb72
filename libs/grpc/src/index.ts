export * from './grpc.h2-server.js';
export * from './grpc.h2-framing.js';
export { H2ClientConnection, H2_ERROR, type H2Stream, type H2StreamListener } from './h2/h2.connection.js';
export { encodeHeaders } from './h2/hpack.js';
export { tlsChannelCredentials, targetHost, serverNameFor, type TlsChannelOptions } from './grpc.tls-credentials.js';
