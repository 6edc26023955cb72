export * from './storage.interface.js';
