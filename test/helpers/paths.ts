/** Where the repository is, for tests that read fixtures or run `bin/provider.cjs`. */
import { fileURLToPath } from 'node:url';

/** The repository root (where `fixtures/`, `bin/` and `dist/` live). */
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
