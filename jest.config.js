/**
 * Jest runs TypeScript sources directly as ES modules (ts-jest, transpile only).
 * Unit tests sit beside the code (`*.spec.ts`); tests that start processes live in
 * test/ (`*.test.ts`) and use the build in dist/ (npm test builds first).
 *
 * test/client-node-2/ drives @kubernetes/client-node 2.x, which needs Node 22 or later: it is a
 * project of its own, present on such a Node only (`npm run test:node22`, `test:node24` and
 * `test:node26` run it there).
 * Types are checked by `npm run typecheck` (tsc over sources, specs and test/), which `npm test`
 * runs first: with isolatedModules ts-jest's diagnostics see syntax only, and full type-aware
 * diagnostics made libs/apimachinery's specs take 32 s instead of 6 s.
 */
const nodeMajor = Number(process.versions.node.split('.')[0]);

const shared = {
  // Jest's node environment; test workers end without tearing their heap down (see the file).
  testEnvironment: '<rootDir>/test/support/test-environment.mjs',
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: {
    '^@app/([a-z-]+)$': '<rootDir>/libs/$1/src/index.ts',
    '^(\\.{1,2}/.*)\\.js$': '$1',
  },
  transform: {
    '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: 'tsconfig.json', diagnostics: false }],
  },
};

export default {
  // Three test files at a time by default, whatever the core count (Jest's default is one fewer
  // worker than cores, so one on two cores): most of an e2e file's wall time is spent waiting on
  // the processes it drives; on two cores one worker left a third of the CPU idle, two about a
  // quarter (docs/testing.md "Workers, hangs and durations").
  // KAPI_TEST_WORKERS overrides it (1 runs in band).
  maxWorkers: Number(process.env.KAPI_TEST_WORKERS ?? 3),
  // Process-starting tests need long timeouts; jest 29 reads testTimeout only at the top level.
  testTimeout: 180_000,
  // run.reporter records the running files (printed by .ci/run when its timeout fires) and
  // prints one line at the end naming what KAPI_TEST_WITHOUT left uncovered (docs/testing.md).
  reporters: ['default', '<rootDir>/test/support/run.reporter.mjs'],
  projects: [
    {
      ...shared,
      displayName: 'unit',
      testMatch: ['<rootDir>/libs/**/*.spec.ts', '<rootDir>/apps/**/*.spec.ts', '<rootDir>/cluster/**/*.spec.ts', '<rootDir>/bench/**/*.spec.ts'],
    },
    {
      ...shared,
      displayName: 'e2e',
      testMatch: ['<rootDir>/test/**/*.test.ts'],
      // The servers the tests start freeze what their watch-fed copies keep (see the file).
      setupFiles: ['<rootDir>/test/support/e2e-env.mjs'],
      testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/client-node-2/'],
      slowTestThreshold: 60,
    },
    ...(nodeMajor >= 22 ? [{ ...shared, displayName: 'client-node-2', testMatch: ['<rootDir>/test/client-node-2/**/*.test.ts'], slowTestThreshold: 60 }] : []),
  ],
};
