export * from './authorizer.port.js';
export * from './authorizer.modes.js';
export * from './forbidden.message.js';
