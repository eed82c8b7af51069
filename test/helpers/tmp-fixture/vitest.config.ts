// The configuration of the vitest run that tmp.test.ts starts: only the fixture beside it.
import { defineConfig } from 'vitest/config';

export default defineConfig({ test: { include: ['*.fixture.ts'], pool: 'forks' } });
