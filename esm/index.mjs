// ESM entry point. It re-exports the CommonJS build rather than shipping a second copy, so a
// process that both imports and requires the package has one instance of its state; Node's
// CommonJS interop exposes the compiled module's named exports.
export * from '../dist/index.js';
