export * from './authorizer.port.js';
export * from './authorizer.modes.js';
export * from './forbidden.message.js';
export * from './rbac.rules.js';
export * from './rbac.policy.js';
export * from './rbac.authorizer.js';
export * from './rbac.aggregation.js';
export * from './rbac.escalation.js';
