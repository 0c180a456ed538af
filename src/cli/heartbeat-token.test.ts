import { describe, expect, it } from 'vitest';
import type { KeyFileStat } from '../config/secret.js';
import { UsageError } from './args.js';
import { readHeartbeatToken } from './heartbeat-token.js';

const TOKEN = 'bot-mm-0123456789abcdef';

/** A file system of one directory, in memory: path -> [mode, text]. */
function fs(files: Record<string, [number, string]>) {
  return {
    stat: async (p: string): Promise<KeyFileStat> => {
      const f = files[p];
      if (!f) throw Object.assign(new Error('nope'), { code: 'ENOENT' });
      return { mode: 0o100000 | f[0], size: f[1].length, isFile: () => true };
    },
    readFile: async (p: string) => files[p]![1],
  };
}

describe('readHeartbeatToken', () => {
  it('a relative --token-file is looked for in $CREDENTIALS_DIRECTORY, else in the working directory', async () => {
    const io = fs({ '/run/credentials/hb/token': [0o400, `${TOKEN}\n`], '/srv/bot/token': [0o600, `${TOKEN}\n`] });
    expect((await readHeartbeatToken({ tokenFile: 'token', env: { CREDENTIALS_DIRECTORY: '/run/credentials/hb' }, cwd: '/srv/bot', io })).reveal()).toBe(TOKEN);
    expect((await readHeartbeatToken({ tokenFile: 'token', env: {}, cwd: '/srv/bot', io })).reveal()).toBe(TOKEN);
    expect((await readHeartbeatToken({ tokenFile: '/srv/bot/token', env: { CREDENTIALS_DIRECTORY: '/elsewhere' }, cwd: '/', io })).reveal()).toBe(TOKEN);
  });

  it('refuses a token file others can read, as a key file is refused', async () => {
    const io = fs({ '/c/token': [0o644, `${TOKEN}\n`] });
    await expect(readHeartbeatToken({ tokenFile: 'token', env: { CREDENTIALS_DIRECTORY: '/c' }, cwd: '/', io })).rejects.toThrow(/readable by group or others \(mode 0644\); chmod 600/);
  });

  it('says where a missing relative file was looked for', async () => {
    await expect(readHeartbeatToken({ tokenFile: 'token', env: { CREDENTIALS_DIRECTORY: '/c' }, cwd: '/', io: fs({}) })).rejects.toThrow(/ENOENT.*looked for in \$CREDENTIALS_DIRECTORY=\/c/);
    await expect(readHeartbeatToken({ tokenFile: 'token', env: {}, cwd: '/', io: fs({}) })).rejects.toThrow(/CREDENTIALS_DIRECTORY is not set/);
  });

  it('or from DMS_KEEPER_HEARTBEAT_TOKEN; not both, not neither', async () => {
    expect((await readHeartbeatToken({ env: { DMS_KEEPER_HEARTBEAT_TOKEN: TOKEN }, cwd: '/' })).reveal()).toBe(TOKEN);
    await expect(readHeartbeatToken({ env: { DMS_KEEPER_HEARTBEAT_TOKEN: 'short' }, cwd: '/' })).rejects.toThrow(/environment variable DMS_KEEPER_HEARTBEAT_TOKEN holds a token shorter/);
    await expect(readHeartbeatToken({ tokenFile: 't', env: { DMS_KEEPER_HEARTBEAT_TOKEN: TOKEN }, cwd: '/' })).rejects.toThrow(/both --token-file and DMS_KEEPER_HEARTBEAT_TOKEN/);
    await expect(readHeartbeatToken({ env: {}, cwd: '/' })).rejects.toThrow(UsageError);
  });
});
