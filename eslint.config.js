// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** Folder boundaries (docs/architecture.md, "Layout rules"), enforced rather than remembered. */
const knexOnlyInDb = {
  paths: [
    { name: 'knex', message: 'Only src/db/ talks to the database.' },
    { name: 'pg', message: 'Only src/db/ talks to the database.' },
    { name: '@electric-sql/pglite', message: 'Only src/db/ talks to the database.' },
  ],
};

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'artifacts/**',
      'node_modules/**',
      '.data/**',
      'bench/results/**',
      'src/gen/**',
      'src/client/openapi-types.ts',
      'eslint.config.js',
      'scripts/**/*.mjs',
      'bench/**/*.mjs',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': [
        'error',
        { checksVoidReturn: { arguments: false } },
      ],
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      '@typescript-eslint/consistent-type-imports': 'error',
      // Knex and zod hand back loosely typed values that we narrow at the store boundary.
      '@typescript-eslint/no-unnecessary-type-assertion': 'off',
      '@typescript-eslint/unbound-method': 'off',
      complexity: ['warn', 20],
      'max-lines': ['warn', { max: 400, skipBlankLines: true, skipComments: true }],
    },
  },
  {
    // A function is read at once or not at all: longer ones are split into named steps.
    // The console's components too (issue 37 found a 100-line GroupView).
    files: ['src/**/*.ts', 'console/**/*.ts', 'console/**/*.tsx'],
    rules: {
      'max-lines-per-function': ['error', { max: 100, skipBlankLines: true, skipComments: true }],
    },
  },
  {
    files: ['src/db/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-base-to-string': 'off',
    },
  },
  {
    files: ['src/core/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['../*', '!./*'], message: 'core/ imports nothing from the project.' },
          ],
        },
      ],
    },
  },
  {
    files: [
      'src/api/**/*.ts',
      'src/grpc/**/*.ts',
      'src/reconciler/**/*.ts',
      'src/resources/**/*.ts',
      'src/auth/**/*.ts',
      'src/outbound/**/*.ts',
    ],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          ...knexOnlyInDb,
          patterns: [
            {
              group: ['**/db/*', '**/db/**'],
              message: 'Front doors and services reach storage through stores wired in compose.ts.',
            },
          ],
        },
      ],
    },
  },
  {
    // The CLI is a door too: it reaches the database only through db/ modules that open,
    // do one job and close (db/migrate-database.ts, db/pglite-dump.ts, db/pglite-restore.ts),
    // never through a driver or a Knex of its own.
    files: ['src/cli/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          ...knexOnlyInDb,
          patterns: [
            {
              group: ['**/db/connect', '**/db/connect.js'],
              message: 'The CLI reaches the database through a db/ module that does the job.',
            },
          ],
        },
      ],
    },
  },
  {
    // The web console (ADR 0010): tenant data is rendered as text by Preact's JSX, never as
    // markup. These are the ways around that; none may appear in console/.
    files: ['console/**/*.ts', 'console/**/*.tsx'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: "JSXAttribute[name.name='dangerouslySetInnerHTML']",
          message: 'Render tenant data as text: no dangerouslySetInnerHTML in the console.',
        },
        {
          selector: 'MemberExpression[property.name=/^(innerHTML|outerHTML)$/]',
          message: 'Render tenant data as text: no innerHTML/outerHTML in the console.',
        },
        {
          selector: 'CallExpression[callee.property.name=/^(insertAdjacentHTML|write|writeln)$/]',
          message: 'No HTML strings into the DOM from the console.',
        },
        {
          selector: "CallExpression[callee.name='eval'], NewExpression[callee.name='Function']",
          message: 'No code from strings (the CSP forbids it too).',
        },
      ],
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['../../src/*', '../src/*', '**/src/**', 'node:*'],
              message: 'The console speaks only the public API: nothing from the server.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
);
