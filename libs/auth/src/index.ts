export * from './client-cert.authenticator.js';
