// Types for esm/exporters.mjs, read as ESM (see index.d.mts).
export * from '../dist/exporters/index.js';
