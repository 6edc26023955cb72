export * from './namespace-lifecycle.plugin.js';
