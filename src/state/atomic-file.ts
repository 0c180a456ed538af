import { mkdir, open, readFile, rename, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import { randomBytes } from 'node:crypto';

/** A failure to persist state; `reason` doubles as a metric label. */
export class StateWriteError extends Error {
  readonly code = 'STATE_WRITE_FAILED' as const;
  readonly reason: 'read_only' | 'no_space' | 'permission' | 'io';
  constructor(path: string, cause: unknown) {
    const errno = (cause as NodeJS.ErrnoException)?.code;
    const reason = errno === 'EROFS' ? 'read_only' : errno === 'ENOSPC' || errno === 'EDQUOT' ? 'no_space' : errno === 'EACCES' || errno === 'EPERM' ? 'permission' : 'io';
    super(`cannot write ${path}: ${errno ?? (cause as Error)?.message ?? cause}`, { cause });
    this.name = 'StateWriteError';
    this.reason = reason;
  }
}

/**
 * Writes a file so that readers see the old content or the new, never a torn one: write a
 * temporary file beside it, fsync, rename over, fsync the directory.
 */
export async function writeFileAtomic(path: string, data: string, mode = 0o600): Promise<void> {
  const tmp = `${path}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    await mkdir(dirname(path), { recursive: true, mode: 0o700 });
    const fh = await open(tmp, 'wx', mode);
    try {
      await fh.writeFile(data, 'utf8');
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(tmp, path);
    try {
      const dir = await open(dirname(path), 'r');
      try {
        await dir.sync();
      } finally {
        await dir.close();
      }
    } catch {
      // some filesystems refuse fsync on a directory; the rename already happened
    }
  } catch (e) {
    await unlink(tmp).catch(() => undefined);
    throw new StateWriteError(path, e);
  }
}

/** The file's text, or undefined when it does not exist. */
export async function readFileIfExists(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
}
