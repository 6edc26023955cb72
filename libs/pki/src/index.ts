export * from './pki.js';
