// ESM entry point for the `./stats` subpath: re-exports the CommonJS build (see index.mjs).
export * from '../dist/instrumentation/stats/index.js';
