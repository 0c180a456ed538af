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
 * temporary file beside it, fsync, rename over, fsync the directory. Writes into one directory at
 * the same time share the directory's fsync (syncDirAfter), and a directory is made once a process
 * (again if it goes): a cold start stores an agent for every account, thousands at once, and these
 * were four of the nine file operations each.
 */
export async function writeFileAtomic(path: string, data: string, mode = 0o600): Promise<void> {
  const tmp = `${path}.${randomBytes(6).toString('hex')}.tmp`;
  const dir = dirname(path);
  try {
    let fh;
    try {
      if (!madeDirs.has(dir)) await makeDir(dir);
      fh = await open(tmp, 'wx', mode);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
      madeDirs.delete(dir); // removed since: make it again, once
      await makeDir(dir);
      fh = await open(tmp, 'wx', mode);
    }
    try {
      await fh.writeFile(data, 'utf8');
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(tmp, path);
    await syncDirAfter(dir);
  } catch (e) {
    await unlink(tmp).catch(() => undefined);
    throw new StateWriteError(path, e);
  }
}

/** Directories this process made or found (bounded by the state dir's few folders). */
const madeDirs = new Set<string>();

async function makeDir(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  madeDirs.add(dir);
}

/** Per directory: the fsync running, and the one queued to start after it. */
const dirSyncs = new Map<string, { running: Promise<void> | null; queued: Promise<void> | null }>();

/**
 * Resolves after an fsync of `dir` that began after this call: a rename made before the call is
 * then durable. Callers while a sync runs share the one queued behind it (a sync already running
 * may have begun before their rename); so N writes at once cost about two directory syncs, not N.
 * A filesystem that refuses fsync on a directory is not an error: the rename already happened.
 */
function syncDirAfter(dir: string): Promise<void> {
  let s = dirSyncs.get(dir);
  if (!s) dirSyncs.set(dir, (s = { running: null, queued: null }));
  const slot = s;
  if (slot.queued) return slot.queued;
  const start = (): Promise<void> => {
    const p = fsyncDir(dir).finally(() => {
      slot.running = null;
      if (!slot.queued) dirSyncs.delete(dir);
    });
    slot.running = p;
    return p;
  };
  if (!slot.running) return start();
  slot.queued = slot.running.then(() => {
    slot.queued = null;
    return start();
  });
  return slot.queued;
}

async function fsyncDir(dir: string): Promise<void> {
  try {
    const fh = await open(dir, 'r');
    try {
      await fh.sync();
    } finally {
      await fh.close();
    }
  } catch {
    // some filesystems refuse fsync on a directory; the rename already happened
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
