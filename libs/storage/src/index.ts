export * from './storage.interface.js';
export * from './storage.keys.js';
export * from './mvcc.storage.js';
