// @ts-check
import path from 'node:path';
import js from '@eslint/js';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';
import importX from 'eslint-plugin-import-x';
import tseslint from 'typescript-eslint';

const ROOT = import.meta.dirname;

/**
 * The layers of src, arrows pointing down (a layer may import only from layers below it):
 *
 *   cli -> daemon -> {ops, webhooks, outbox, sync, feed} -> {db, api} -> mirror -> {config, root files}
 *
 * feed (the change feed's reader, documents and sinks) reads what db stored; nothing below it
 * uses it.
 *
 * mirror is the plan: what observations mean for the tables, pure. It knows the tables' shapes
 * (src/db/schema, plain descriptions) and nothing else of db; db applies its plans.
 *
 * simulator stands beside the stack: only cli (and test/, bench/) start it, and it uses only the
 * root files. The root files (src/*.ts: clock, errors, error-codes, time, json, log, process,
 * listen, undici, wire) import only each other: the areas' error catalogs register their codes with src/error-codes.ts
 * (declaration merging), and cli merges them for the exit codes.
 *
 * Each entry: the area, and the areas it must not import from.
 */
const AREAS = [
  'config',
  'api',
  'db',
  'mirror',
  'sync',
  'feed',
  'webhooks',
  'outbox',
  'ops',
  'daemon',
  'cli',
  'simulator',
];
const allBut = (area) => AREAS.filter((other) => other !== area);
const FORBIDDEN = {
  // config sits at the bottom, and simulator stands beside the stack: neither uses any area.
  config: allBut('config'),
  api: ['db', 'sync', 'feed', 'webhooks', 'outbox', 'ops', 'daemon', 'cli', 'simulator'],
  db: ['sync', 'feed', 'webhooks', 'outbox', 'ops', 'daemon', 'cli', 'api', 'simulator'],
  sync: ['feed', 'webhooks', 'outbox', 'ops', 'daemon', 'cli', 'simulator'],
  feed: ['api', 'sync', 'webhooks', 'outbox', 'ops', 'daemon', 'cli', 'simulator'],
  webhooks: ['daemon', 'cli', 'simulator'],
  outbox: ['daemon', 'cli', 'simulator'],
  ops: ['daemon', 'cli', 'simulator'],
  daemon: ['cli', 'simulator'],
  simulator: allBut('simulator'),
  mirror: ['api', 'sync', 'feed', 'webhooks', 'outbox', 'ops', 'daemon', 'cli', 'simulator'],
};

/** Where the lint-rules test plants its cycle; ignored by every ordinary lint run. */
const LINT_FIXTURE_DIR = 'src/__lint_fixture__';

/** @type {{ target: string | string[], from: string | string[], except?: string[], message: string }[]} */
const LAYER_ZONES = [
  ...Object.entries(FORBIDDEN).map(([area, from]) => ({
    target: `./src/${area}`,
    from: from.map((other) => `./src/${other}`),
    message: `src/${area} must not import from ${from.map((o) => `src/${o}`).join(', ')} (layers: see eslint.config.js).`,
  })),
  {
    target: './src/mirror',
    from: './src/db',
    except: ['./schema'],
    message: 'src/mirror may use only the table descriptions of src/db (src/db/schema).',
  },
  {
    target: './src/*.ts',
    from: './src/*/**',
    message: 'The root files of src import only each other.',
  },
];

export default tseslint.config(
  {
    ignores: [
      'dist/',
      'dist-bench/',
      'node_modules/',
      'data/',
      'coverage/',
      `${LINT_FIXTURE_DIR}/`,
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      'no-console': 'off',
    },
  },
  {
    // The shape of src: no import cycles, and the layers' arrows point one way.
    files: ['src/**/*.ts'],
    plugins: { 'import-x': importX },
    settings: {
      'import-x/extensions': ['.ts', '.js'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
      // NodeNext specifiers: './foo.js' resolves to './foo.ts'.
      'import-x/resolver-next': [
        createTypeScriptImportResolver({ project: path.join(ROOT, 'tsconfig.json') }),
      ],
    },
    rules: {
      // No maxDepth: any cycle, however long. Type-only imports are not followed (erased at run time).
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
      'import-x/no-restricted-paths': ['error', { basePath: ROOT, zones: LAYER_ZONES }],
      // zod's `z` export is a namespace object that holds all of zod, its 64 locales included:
      // the bundle of the CLI then carries 370 KB that every command loads and never runs.
      // `import * as z` lets the bundler keep only what src uses.
      'no-restricted-syntax': [
        'error',
        {
          selector: "ImportDeclaration[source.value='zod'] > ImportSpecifier[imported.name='z']",
          message: "Use `import * as z from 'zod'` (see eslint.config.js).",
        },
      ],
    },
  },
  {
    // Every store call is async: a promise nobody awaits is a write nobody waits for.
    files: ['src/**/*.ts', 'test/**/*.ts', 'bench/**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: ROOT } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: false }],
    },
  },
  {
    // The lint-rules test plants files no TypeScript project holds: lint them without types.
    files: ['src/**/__lint_fixture*', 'src/**/__lint_fixture*/**'],
    ...tseslint.configs.disableTypeChecked,
  },
);
