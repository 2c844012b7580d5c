// ESM entry point for the `./exporters` subpath: re-exports the CommonJS build (see index.mjs).
export * from '../dist/exporters/index.js';
