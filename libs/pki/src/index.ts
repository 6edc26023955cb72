export * from './pki.js';
export * from './csr.js';
