// The ported dynamic-mcp tests (./*.test.ts), run by the Rust test `dynamic_mcp_suite`
// (crates/toolsmith/tests/cli/dynamic_mcp_suite.rs): `vitest run --config dynamic-mcp/vitest.config.ts`
// from tests/clients. Each case starts the real toolsmith binary, so files run one at a time.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    root: import.meta.dirname,
    environment: 'node',
    include: ['*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    fileParallelism: false,
    maxWorkers: 1
  }
});
