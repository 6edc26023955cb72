export * from './kind.types.js';
export * from './kind.registry.js';
export * from './table.js';
export * from './machinery.port.js';
export * from './admission.port.js';
export * from './generic.store.js';
