export * from './namespace.controller.js';
