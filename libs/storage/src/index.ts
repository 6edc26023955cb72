export * from './storage.interface.js';
export * from './storage.keys.js';
export * from './mvcc.storage.js';
export * from './continue.token.js';
export * from './mvcc.state-machine.js';
export * from './raft.proposer.js';
export * from './cluster.storage.js';
