// Types for esm/instrumentation.mjs, read as ESM (see index.d.mts).
export * from '../dist/instrumentation/index.js';
