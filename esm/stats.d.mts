// Types for esm/stats.mjs, read as ESM (see index.d.mts).
export * from '../dist/instrumentation/stats/index.js';
