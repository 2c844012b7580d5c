// ESM entry point: Node's CommonJS interop exposes the compiled module's named exports.
export * from '../dist/index.js';
