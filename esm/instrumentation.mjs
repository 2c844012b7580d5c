// ESM entry point for the `./instrumentation` subpath: re-exports the CommonJS build (see index.mjs).
export * from '../dist/instrumentation/index.js';
