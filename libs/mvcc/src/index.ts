export * from './mvcc.types.js';
export * from './mvcc.codec.js';
export * from './event.bus.js';
export * from './mvcc.store.js';
export * from './proposer.port.js';
export * from './local.proposer.js';
