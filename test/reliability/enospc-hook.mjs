// Loaded with `node --import` into `provider runtask serve` where a small tmpfs cannot be mounted (not root, or
// mount refused): while the file named by PROVIDER_TEST_FULL exists, every file the program writes under
// PROVIDER_TEST_FULL_DIR is created empty and its write fails with ENOSPC, as on a full disk: whole files
// (writeFileSync) and writes to a descriptor opened there (openSync, then writeSync: the journal file). Test-only.
import fs from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { resolve, sep } from 'node:path';

const marker = process.env.PROVIDER_TEST_FULL;
const dir = process.env.PROVIDER_TEST_FULL_DIR;
if (marker && dir) {
  const under = resolve(dir) + sep;
  const enospc = () =>
    Object.assign(new Error(`ENOSPC: no space left on device, write`), {
      errno: -28,
      code: 'ENOSPC',
      syscall: 'write',
    });
  /** Descriptors of files opened under the folder. */
  const opened = new Set();
  const originalOpen = fs.openSync;
  fs.openSync = function openSync(file, ...rest) {
    const fd = originalOpen.call(this, file, ...rest);
    if (typeof file === 'string' && resolve(file).startsWith(under)) opened.add(fd);
    else opened.delete(fd);
    return fd;
  };
  const originalWrite = fs.writeSync;
  fs.writeSync = function writeSync(fd, ...rest) {
    if (opened.has(fd) && fs.existsSync(marker)) throw enospc();
    return originalWrite.call(this, fd, ...rest);
  };
  const original = fs.writeFileSync;
  fs.writeFileSync = function writeFileSync(file, data, options) {
    if (typeof file === 'string' && resolve(file).startsWith(under) && fs.existsSync(marker)) {
      const flag = (typeof options === 'object' && options?.flag) || 'w';
      fs.closeSync(originalOpen(file, flag, 0o600));
      throw enospc();
    }
    return original.call(this, file, data, options);
  };
  syncBuiltinESMExports();
}
