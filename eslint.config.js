// Lint: type-aware typescript-eslint rules, plus the architecture as a rule: every src/ folder and every package of
// packages/ may import only the folders listed for it below (docs/architecture.md), so an upward import fails
// `npm run lint`, and so does any import of packages/ from the product (src/).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import boundaries from 'eslint-plugin-boundaries';

/**
 * Folder → the folders it may import. Keep in step with docs/architecture.md. `apiserver`, `openstack-sim` and
 * `cluster-sim` are packages (packages/*), standing on the product's lower layers; the product never imports them.
 * Inside reconcilers/, `network` is what the others stand on: `cluster`, `namespace`, `pod`, `service`, `policy` and
 * `gc` import it and never each other.
 */
const lower = ['core', 'kube-api', 'kube-client', 'kube-cache', 'controller', 'openstack'];
const reconcilerParts = ['cluster', 'namespace', 'pod', 'service', 'policy', 'gc'];
const layers = {
  core: [],
  'kube-api': ['core'],
  'kube-client': ['core', 'kube-api'],
  'kube-cache': ['core', 'kube-api', 'kube-client'],
  controller: ['core', 'kube-api', 'kube-client', 'kube-cache'],
  openstack: ['core'],
  'openstack-sim': ['core', 'openstack'],
  apiserver: ['core', 'kube-api'],
  'cni-spec': ['core'],
  cni: ['core', 'kube-api', 'kube-client', 'openstack', 'cni-spec'],
  'reconcilers-network': lower,
  ...Object.fromEntries(reconcilerParts.map((part) => [`reconcilers-${part}`, [...lower, 'reconcilers-network']])),
  // The topology view's data: it reads every module's view (they never import it) and answers the dashboard's shape.
  'reconcilers-topology': [
    ...lower,
    'reconcilers-network',
    ...reconcilerParts.map((part) => `reconcilers-${part}`),
    'dashboard',
  ],
  reconcilers: [
    ...lower,
    'reconcilers-network',
    'reconcilers-topology',
    ...reconcilerParts.map((part) => `reconcilers-${part}`),
  ],
  'cluster-sim': ['core', 'kube-api', 'kube-client', 'kube-cache', 'controller', 'cni-spec'],
  dashboard: ['core'],
};
/** The product's elements (src/): what the image ships. */
const productElements = Object.keys(layers).filter(
  (type) => !['apiserver', 'openstack-sim', 'cluster-sim'].includes(type),
);
// The first pattern that matches a file names its element: the narrower folders come first.
const elements = [
  { type: 'kube-api', pattern: 'src/kube/api' },
  { type: 'kube-client', pattern: 'src/kube/client' },
  { type: 'kube-cache', pattern: 'src/kube/cache' },
  { type: 'cni-spec', pattern: 'src/cni/spec' },
  { type: 'reconcilers-network', pattern: 'src/reconcilers/network' },
  ...reconcilerParts.map((part) => ({ type: `reconcilers-${part}`, pattern: `src/reconcilers/${part}` })),
  { type: 'reconcilers-topology', pattern: 'src/reconcilers/topology' },
  ...['core', 'controller', 'openstack', 'reconcilers', 'cni', 'dashboard', 'daemon'].map((name) => ({
    type: name,
    pattern: `src/${name}`,
  })),
  ...['apiserver', 'openstack-sim', 'cluster-sim', 'dev'].map((name) => ({ type: name, pattern: `packages/${name}` })),
  { type: 'test-support', pattern: 'test/support' },
  { type: 'tests', pattern: 'test' },
  { type: 'bench', pattern: 'bench' },
];

/**
 * The layer rule: each element imports itself and what `layers` lists; extra policies add to it.
 * @param {...object} extra
 */
function layerRule(...extra) {
  return [
    'error',
    {
      default: 'disallow',
      policies: [
        ...Object.entries(layers).map(([type, allowed]) => ({
          from: { element: { type } },
          allow: { to: { element: { types: { anyOf: [type, ...allowed] } } } },
        })),
        // The product's composition root may import anything of the product; the development tools, the test wing,
        // end-to-end tests and benchmarks anything at all.
        {
          from: { element: { type: 'daemon' } },
          allow: { to: { element: { types: { anyOf: ['daemon', ...productElements] } } } },
        },
        {
          from: { element: { types: { anyOf: ['dev', 'test-support', 'tests', 'bench'] } } },
          allow: { to: { element: { type: '*' } } },
        },
        { allow: { to: { module: { origin: ['external', 'core'] } } } },
        ...extra,
      ],
    },
  ];
}

const nodeTest = { name: 'node:test', message: 'Import describe/it/hooks from test/support/node-test.ts.' };
const notPackages = {
  group: ['@raven/*'],
  message:
    'The product (src/) never imports the development tools or the test wing (packages/); tests reach them through test/support.',
};

export default tseslint.config(
  { ignores: ['node_modules/**', '.tools/**', '.raven/**', 'bin/**', 'dist/**'] },
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
      'boundaries/dependencies': layerRule(),
    },
  },
  // ESLint itself needs this file's default export.
  { files: ['eslint.config.js'], rules: { 'no-restricted-syntax': 'off' } },
  {
    // A unit test imports its own layer and below, plus the test wing (fixtures, real servers to test against).
    files: ['src/**/*.test.ts', 'packages/*/src/**/*.test.ts'],
    rules: {
      'boundaries/dependencies': layerRule({ allow: { to: { element: { type: 'test-support' } } } }),
    },
  },
  {
    // Tests take describe/it/hooks from test/support/node-test.ts, which bounds every test (Node 20's runner bounds
    // only whole files).
    files: ['**/*.test.ts', 'test/**'],
    ignores: ['test/support/node-test.ts'],
    rules: {
      'no-restricted-imports': ['error', { paths: [nodeTest] }],
    },
  },
  {
    // The product (src/) imports no package of packages/ by name either (a relative import is the layer rule's).
    files: ['src/**'],
    rules: { 'no-restricted-imports': ['error', { patterns: [notPackages] }] },
  },
  {
    files: ['src/**/*.test.ts'],
    rules: { 'no-restricted-imports': ['error', { paths: [nodeTest], patterns: [notPackages] }] },
  },
);
