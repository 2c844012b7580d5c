// Types for esm/views.mjs, read as ESM (see index.d.mts).
export * from '../dist/views/index.js';
