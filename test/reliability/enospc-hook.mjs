// Loaded with `node --import` into `provider runtask serve` where a small tmpfs cannot be mounted (not root, or
// mount refused): while the file named by PROVIDER_TEST_FULL exists, every file the program writes under
// PROVIDER_TEST_FULL_DIR is created empty and its write fails with ENOSPC, as on a full disk. Test-only.
import fs from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { resolve, sep } from 'node:path';

const marker = process.env.PROVIDER_TEST_FULL;
const dir = process.env.PROVIDER_TEST_FULL_DIR;
if (marker && dir) {
  const under = resolve(dir) + sep;
  const original = fs.writeFileSync;
  fs.writeFileSync = function writeFileSync(file, data, options) {
    if (typeof file === 'string' && resolve(file).startsWith(under) && fs.existsSync(marker)) {
      const flag = (typeof options === 'object' && options?.flag) || 'w';
      fs.closeSync(fs.openSync(file, flag, 0o600));
      const error = new Error(`ENOSPC: no space left on device, write`);
      Object.assign(error, { errno: -28, code: 'ENOSPC', syscall: 'write' });
      throw error;
    }
    return original.call(this, file, data, options);
  };
  syncBuiltinESMExports();
}
