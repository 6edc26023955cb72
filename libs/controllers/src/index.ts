export * from './namespace.controller.js';
export * from './owner.graph.js';
export * from './work.queue.js';
export * from './garbage-collector.controller.js';
export * from './leader-election.js';
export * from './token-cleaner.controller.js';
export * from './bootstrap-signer.controller.js';
