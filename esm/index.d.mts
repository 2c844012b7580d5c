// Types for esm/index.mjs. A .d.mts file, so TypeScript reads this entry as ESM, as Node loads it.
export * from '../dist/index.js';
