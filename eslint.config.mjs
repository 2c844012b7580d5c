// @ts-check
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

// ---------------------------------------------------------------------------------------------
// Import boundaries of the package's layout (each folder imports only downward):
//   views/            imports nothing of ours outside views/
//   instrumentation/  views/ and itself
//   exporters/        views/ and itself, never instrumentation/
//   top-level *.ts    the three folders and each other; never examples/, test/, bench/
//   examples/         the package only as 'omni-otel-metrics' (tsconfig paths) and examples/ files
//   bench/            the library and examples/, never test/
//   test/             anything
// None of the library (views, instrumentation, exporters, top-level .ts) imports the package by
// its own name.
//
// ESLint's core no-restricted-imports matches the import specifier, not the resolved file, so a
// relative path is judged by how many `../` it climbs. The blocks below are generated per folder
// and per depth: a file at depth d (views/a.ts is 1, views/store/b.ts is 2) reaches the
// repository root with exactly d `../`, and the segment after that names the top-level folder.
// ---------------------------------------------------------------------------------------------

const SOURCE_EXTENSIONS = '{ts,mts,cts,js,mjs,cjs}';
/** Deepest folder level generated; deeper files would get no boundary rule. */
const MAX_DEPTH = 8;
const PACKAGE_NAME = 'omni-otel-metrics';

/** Escapes a literal for use inside a RegExp. */
const literal = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Matches a specifier that climbs `d` levels: the rest after the last `..` starts with `$` or `/`. */
const climb = (d) => `^(?:\\.\\./){${d - 1}}\\.\\.`;

const ownName = {
  regex: `^${literal(PACKAGE_NAME)}(?:/|$)`,
  message: `The library imports its own files by relative path, never the package by its own name.`,
};

/**
 * `no-restricted-imports` blocks for every file of `folder` at depths 1..MAX_DEPTH.
 * `patterns(d)` gives the restricted patterns for a file d folders below the root.
 */
function boundary(folder, patterns) {
  return Array.from({ length: MAX_DEPTH }, (_, i) => {
    const depth = i + 1;
    return {
      name: `boundaries/${folder}/depth-${depth}`,
      files: [`${folder}/${'*/'.repeat(depth - 1)}*.${SOURCE_EXTENSIONS}`],
      rules: { 'no-restricted-imports': ['error', { patterns: patterns(depth) }] },
    };
  });
}

/** Library folder at depth d may reach the root only to enter one of `allowed` (besides its own folder). */
const libraryFolder = (folder, allowed, message) =>
  boundary(folder, (d) => [
    {
      // Climbing to the root (or above) and not going down into the folder itself or an allowed one.
      regex: `${climb(d)}(?:$|/(?!(?:${[folder, ...allowed].map(literal).join('|')})(?:/|$)))`,
      message,
    },
    ownName,
  ]);

const boundaries = [
  ...libraryFolder('views', [], 'views/ imports nothing of ours outside views/.'),
  ...libraryFolder('instrumentation', ['views'], 'instrumentation/ may import only views/ (and itself).'),
  ...libraryFolder('exporters', ['views'], 'exporters/ may import only views/ (and itself), never instrumentation/.'),
  {
    name: 'boundaries/top-level',
    files: [`*.${SOURCE_EXTENSIONS}`],
    ignores: ['eslint.config.mjs'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^\\./(?:examples|test|bench)(?:/|$)',
              message: 'The library (top-level files) must not import examples/, test/ or bench/.',
            },
            ownName,
          ],
        },
      ],
    },
  },
  ...boundary('examples', (d) => [
    {
      // Climbing to the root (or above) and not going back down into examples/.
      regex: `${climb(d)}(?:$|/(?!examples(?:/|$)))`,
      message: `examples/ imports the library only as '${PACKAGE_NAME}' (tsconfig paths), and otherwise only files inside examples/.`,
    },
    {
      regex: `^${literal(PACKAGE_NAME)}/`,
      message: `examples/ imports the package only as '${PACKAGE_NAME}' (the tsconfig paths alias maps only the root entry).`,
    },
  ]),
  ...boundary('bench', (d) => [
    {
      regex: `${climb(d)}/test(?:/|$)`,
      message: 'bench/ may import the library and examples/, never test/.',
    },
  ]),
];

export default defineConfig(
  {
    name: 'ignores',
    // Build output and scratch folders (the same as .gitignore; ESLint does not read it).
    ignores: ['dist/', 'build/', '.tmp/'],
  },
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    name: 'project-rules',
    rules: {
      // The code marks deliberately unused bindings with a leading underscore: keys dropped from a
      // rest copy (`const { le: _le, ...rest } = labels`), `for await (const _ of stream)` draining
      // a stream, parameters a signature requires but a stub ignores. Unused bindings without the
      // underscore are still errors.
      '@typescript-eslint/no-unused-vars': [
        'error',
        {
          argsIgnorePattern: '^_',
          varsIgnorePattern: '^_',
          caughtErrorsIgnorePattern: '^_',
          destructuredArrayIgnorePattern: '^_',
          ignoreRestSiblings: true,
        },
      ],
    },
  },
  {
    // The hooks wrap host methods with `function (this: unknown, ...)` wrappers: `this` is the
    // host's, so the instrumentation is reached through a named alias.
    name: 'hooks-wrappers',
    files: ['instrumentation/hooks/**/*.ts'],
    rules: { '@typescript-eslint/no-this-alias': ['error', { allowedNames: ['instrumentation'] }] },
  },
  {
    // Plain-JS CommonJS fixtures loaded with require() (module.exports, require).
    name: 'commonjs-fixtures',
    files: ['test/**/fixtures/**/*.js'],
    languageOptions: { sourceType: 'commonjs' },
  },
  {
    // CI helper scripts: plain CommonJS run by `node` before (or without) any build.
    name: 'ci-scripts',
    files: ['.ci/**/*.js'],
    languageOptions: { sourceType: 'commonjs', globals: { process: 'readonly', console: 'readonly' } },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  ...boundaries,
);
