export * from './user.info.js';
export * from './authenticator.port.js';
export * from './authenticator.chain.js';
export * from './client-cert.authenticator.js';
