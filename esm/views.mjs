// ESM entry point for the `./views` subpath: re-exports the CommonJS build (see index.mjs).
export * from '../dist/views/index.js';
