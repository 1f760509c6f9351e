/**
 * The data folder as `oas serve` opens it (src/store/storage.ts checkDataDir: created 0700 when
 * missing, a directory, a real write), then private: no group or other user may read or write it
 * (src/fs/private.ts makes the folders oas creates 0700).
 */
import { statSync } from 'node:fs';
import { checkDataDir } from '../store/storage.js';
import type { DoctorCheck } from './report.js';

export function checkDataFolder(dataDir: string): DoctorCheck {
  const check = (ok: boolean, message: string): DoctorCheck => ({ kind: 'data_dir', target: dataDir, ok, message });
  try {
    checkDataDir(dataDir);
  } catch (error) {
    // `data_dir <dir>: not writable (permission denied)`: the folder is already named.
    const message = (error as Error).message.replace(`data_dir ${dataDir}: `, '');
    return check(false, `${message} (check data_dir, --data-dir or OAS_DATA_DIR)`);
  }
  if (process.platform === 'win32') return check(true, 'exists, writable');
  const mode = statSync(dataDir).mode & 0o777;
  const octal = mode.toString(8).padStart(4, '0');
  if ((mode & 0o066) !== 0) {
    return check(false, `other users can ${(mode & 0o022) !== 0 ? 'write to' : 'read'} it (mode ${octal}): chmod 700 ${dataDir}`);
  }
  return check(true, `exists, private (mode ${octal}), writable`);
}
