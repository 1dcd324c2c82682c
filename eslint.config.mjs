// Lint: typescript-eslint's type-aware recommended rules (floating promises, unsafe any and the rest),
// with formatting left to Prettier. `npm test` runs it; a finding fails the tests.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import prettier from 'eslint-config-prettier';
import globals from 'globals';

/** `eslint-disable…` must say why after `--` on the same line, as `// eslint-disable-line rule -- why`. */
const disableNeedsReason = {
  meta: {
    type: 'suggestion',
    schema: [],
    messages: { noReason: 'say why on the same line: `eslint-disable… rule -- reason`' },
  },
  create(context) {
    return {
      Program() {
        for (const comment of context.sourceCode.getAllComments()) {
          const text = comment.value.trim();
          if (/^eslint-disable/.test(text) && !/\s--\s*\S/.test(text))
            context.report({ loc: comment.loc, messageId: 'noReason' });
        }
      },
    };
  },
};

export default tseslint.config(
  {
    ignores: [
      'dist/',
      'node_modules/',
      'nodes/icons/',
      'resources/media-enhance-editor.js',
      'resources/media-enhance-sidebar.js',
    ],
  },
  {
    // A disable comment that no longer silences anything is itself a finding, so none outlives its reason;
    // and each one says its reason.
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    plugins: { project: { rules: { 'disable-needs-reason': disableNeedsReason } } },
    rules: { 'project/disable-needs-reason': 'error' },
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
      globals: { ...globals.node },
    },
    rules: {
      // `const { internal: _internal, ...visible } = record` drops a property by naming it: the named one is
      // unused on purpose.
      '@typescript-eslint/no-unused-vars': ['error', { ignoreRestSiblings: true }],
      // Rejecting with an abort signal's reason or a caught error passes on what came in, as `throw err` does;
      // the same allowance `only-throw-error` makes by default. A literal or an object made up on the spot
      // is still a finding.
      '@typescript-eslint/prefer-promise-reject-errors': [
        'error',
        { allowThrowingAny: true, allowThrowingUnknown: true },
      ],
    },
  },
  {
    // Node-RED loads these CommonJS entry files by the paths in package.json; each one passes on a
    // compiled module with `require`, which is how CommonJS imports.
    files: ['nodes/*.js', 'plugins/*.js'],
    languageOptions: { sourceType: 'commonjs' },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // Plain JavaScript (the entry files above, this file) is outside tsconfig.json: no type information.
    files: ['**/*.js', '**/*.mjs'],
    ...tseslint.configs.disableTypeChecked,
  },
  {
    // Written out last, so that no block above turns them down for TypeScript: a promise nobody awaits
    // and a value typed `any` are the mistakes this lint is here to catch, in the package and its tests alike.
    files: ['**/*.ts'],
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/no-unsafe-argument': 'error',
      '@typescript-eslint/no-unsafe-assignment': 'error',
      '@typescript-eslint/no-unsafe-call': 'error',
      '@typescript-eslint/no-unsafe-member-access': 'error',
      '@typescript-eslint/no-unsafe-return': 'error',
    },
  },
  prettier,
);
