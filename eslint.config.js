// Lint: type-aware typescript-eslint rules, plus the architecture as a rule: every src/ folder may import only
// the folders listed for it below (docs/architecture in README.md), so an upward import fails `npm run lint`.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import boundaries from 'eslint-plugin-boundaries';

/** Folder → the folders it may import. Keep in step with the layout in README.md. */
const layers = {
  core: [],
  'kube-api': ['core'],
  'kube-client': ['core', 'kube-api'],
  'kube-cache': ['core', 'kube-api', 'kube-client'],
  controller: ['core', 'kube-api', 'kube-client', 'kube-cache'],
  openstack: ['core'],
  'openstack-sim': ['core', 'openstack'],
  apiserver: ['core', 'kube-api'],
  reconcilers: ['core', 'kube-api', 'kube-client', 'kube-cache', 'controller', 'openstack'],
  'cluster-sim': ['core', 'kube-api', 'kube-client', 'kube-cache', 'controller'],
  dashboard: ['core', 'kube-api'],
};
const elements = [
  { type: 'kube-api', pattern: 'src/kube/api' },
  { type: 'kube-client', pattern: 'src/kube/client' },
  { type: 'kube-cache', pattern: 'src/kube/cache' },
  { type: 'openstack-sim', pattern: 'src/openstack/sim' },
  ...['core', 'controller', 'openstack', 'apiserver', 'reconcilers', 'cluster-sim', 'dashboard', 'daemon'].map(
    (name) => ({ type: name, pattern: `src/${name}` }),
  ),
  { type: 'tests', pattern: 'test' },
  { type: 'bench', pattern: 'bench' },
];

export default tseslint.config(
  { ignores: ['node_modules/**', '.tools/**', '.raven/**', 'bin/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        projectService: { allowDefaultProject: ['eslint.config.js'] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    plugins: { boundaries },
    settings: {
      'boundaries/elements': elements,
      'import/resolver': { node: { extensions: ['.ts', '.js'] } },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-syntax': ['error', { selector: 'ExportDefaultDeclaration', message: 'Use named exports.' }],
      'boundaries/dependencies': [
        'error',
        {
          default: 'disallow',
          policies: [
            ...Object.entries(layers).map(([type, allowed]) => ({
              from: { element: { type } },
              allow: { to: { element: { types: { anyOf: [type, ...allowed] } } } },
            })),
            // The composition root, end-to-end tests and benchmarks may import anything.
            {
              from: { element: { types: { anyOf: ['daemon', 'tests', 'bench'] } } },
              allow: { to: { element: { type: '*' } } },
            },
            { allow: { to: { module: { origin: ['external', 'core'] } } } },
          ],
        },
      ],
    },
  },
  // ESLint itself needs this file's default export.
  { files: ['eslint.config.js'], rules: { 'no-restricted-syntax': 'off' } },
  {
    files: ['**/*.test.ts', 'test/**', 'bench/**'],
    rules: {
      // Tests beside the code may start a real server (daemon/) to test against, like test/e2e does.
      'boundaries/dependencies': 'off',
      // node:test's describe/it return promises the runner awaits itself.
      '@typescript-eslint/no-floating-promises': [
        'error',
        {
          allowForKnownSafeCalls: [
            { from: 'package', package: 'node:test', name: ['describe', 'it', 'test', 'suite'] },
          ],
        },
      ],
    },
  },
);
