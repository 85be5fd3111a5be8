// `npm run lint`: type-aware rules over src/ and test/ (typescript-eslint), and Prettier's check of
// the format. A forgotten `await` on a write is this library's worst bug class: no-floating-promises
// and no-misused-promises find it; a promise left running on purpose is marked `void`.
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: ['dist/', 'compat/', 'node_modules/', '.node-lines/', 'src/demo/prisma/generated/', 'scripts/smoke-pack/'],
  },
  {
    files: ['src/**/*.ts', 'test/**/*.ts'],
    extends: [tseslint.configs.base],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
      eqeqeq: ['error', 'always'],
      // The names inside one import's braces in order; the order of the imports themselves is
      // the order modules are evaluated in, left as written.
      'sort-imports': ['error', { ignoreDeclarationSort: true, ignoreCase: true }],
    },
  },
);
