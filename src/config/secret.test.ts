import { execFileSync } from 'node:child_process';
import { chmod, mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { format, inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ConfigError } from './errors.js';
import { parseConfig } from './load.js';
import { checkTokenText, readKey, Secret, type KeyFileStat } from './secret.js';
import { KEY1, KEY2, minimal, paths, problemsOf } from './test-support.js';

const HEX1 = KEY1.slice(2);

async function tempDir(): Promise<string> {
  return mkdtemp(join(tmpdir(), 'dmsk-config-'));
}

async function keyFile(dir: string, name: string, content: string, mode = 0o600): Promise<string> {
  const p = join(dir, name);
  await writeFile(p, content, { mode });
  await chmod(p, mode); // the umask may have masked bits off at creation
  return p;
}

const withFile = (file: string) => minimal().replace('{ env: K1 }', `{ file: ${file} }`);

describe('Secret', () => {
  const s = new Secret(KEY1);
  it('never prints its value', () => {
    const shown = [
      String(s),
      `${s}`,
      s + '',
      JSON.stringify(s),
      JSON.stringify({ key: s }),
      inspect(s),
      inspect({ nested: { key: s } }, { depth: 10, showHidden: true }),
      format('%s %o %O %j', s, s, s, s),
      Object.keys(s).join(','),
      JSON.stringify({ ...s }),
    ];
    for (const text of shown) {
      expect(text).not.toContain(HEX1);
    }
    expect(String(s)).toBe('[redacted]');
    expect(JSON.stringify({ key: s })).toBe('{"key":"[redacted]"}');
    expect(inspect(s)).toBe('[redacted]');
  });

  it('gives the value only through reveal()', () => {
    expect(s.reveal()).toBe(KEY1);
  });
});

describe('key files', () => {
  it('loads a 0600 file of 0x + 64 hex + one newline, resolved in CREDENTIALS_DIRECTORY', async () => {
    const creds = await tempDir();
    await keyFile(creds, 'mm.master', `${KEY1}\n`);
    const c = await parseConfig(withFile('mm.master'), { env: { CREDENTIALS_DIRECTORY: creds }, baseDir: '/nonexistent' });
    expect(c.accounts[0]!.masterKey).toEqual({ kind: 'file', path: join(creds, 'mm.master'), yamlPath: 'accounts[0].master_key' });
    const secret = await readKey(c.accounts[0]!.masterKey!, { env: {} });
    expect(secret.reveal()).toBe(KEY1); // the newline is not part of the key
    // The config itself holds no key material.
    expect(JSON.stringify(c)).not.toContain(HEX1);
    expect(inspect(c, { depth: 20 })).not.toContain(HEX1);
  });

  it('resolves relative files beside the config without CREDENTIALS_DIRECTORY; absolute paths as given', async () => {
    const dir = await tempDir();
    await keyFile(dir, 'mm.master', KEY1);
    let c = await parseConfig(withFile('mm.master'), { env: {}, baseDir: dir });
    expect(c.accounts[0]!.masterKey).toMatchObject({ path: join(dir, 'mm.master') });
    const other = await tempDir();
    c = await parseConfig(withFile(join(dir, 'mm.master')), { env: { CREDENTIALS_DIRECTORY: other }, baseDir: '/nonexistent' });
    expect(c.accounts[0]!.masterKey).toMatchObject({ path: join(dir, 'mm.master') });
  });

  const modes: Array<[number, RegExp]> = [
    [0o644, /file is readable by group or others \(mode 0644\); chmod 600 it/],
    [0o640, /readable by group or others \(mode 0640\)/],
    [0o604, /readable by group or others \(mode 0604\)/],
    [0o620, /writable by group or others \(mode 0620\)/],
  ];
  it.each(modes)('refuses mode %o', async (mode, message) => {
    const dir = await tempDir();
    const p = await keyFile(dir, 'k', KEY1, mode);
    const problems = await problemsOf(withFile(p));
    expect(problems).toEqual([{ path: 'accounts[0].master_key.file', line: 6, message: expect.stringMatching(message) }]);
    expect(problems[0]!.message).toContain(p);
  });

  it('accepts 0400 (what systemd LoadCredential= gives)', async () => {
    const dir = await tempDir();
    const p = await keyFile(dir, 'k', KEY1, 0o400);
    expect(paths(await problemsOf(withFile(p) + '\nlog: { level: nope }'))).toEqual(['log.level']);
  });

  const contents: Array<[string, string]> = [
    ['no 0x', HEX1],
    ['two newlines', `${KEY1}\n\n`],
    ['CRLF', `${KEY1}\r\n`],
    ['short', KEY1.slice(0, 60)],
    ['trailing text', `${KEY1} # mm-main`],
    ['leading space', ` ${KEY1}`],
    ['not hex', `0x${'zz'.repeat(32)}`],
    ['two keys', `${KEY1}\n${KEY2}\n`],
    ['empty', ''],
  ];
  it.each(contents)('refuses content: %s, without echoing it', async (_name, content) => {
    const dir = await tempDir();
    const p = await keyFile(dir, 'k', content);
    const problems = await problemsOf(withFile(p));
    expect(paths(problems)).toEqual(['accounts[0].master_key.file']);
    expect(problems[0]!.message).toMatch(/does not hold one private key \(want 0x followed by 64 hex digits/);
    expect(problems[0]!.message).not.toContain(HEX1.slice(0, 16));
    expect(problems[0]!.message).not.toContain(KEY2.slice(2, 18));
  });

  it('refuses a key outside the curve order', async () => {
    const dir = await tempDir();
    const p = await keyFile(dir, 'k', `0x${'0'.repeat(64)}\n`);
    const [problem] = await problemsOf(withFile(p));
    expect(problem!.message).toMatch(/not hold a valid secp256k1 private key/);
  });

  it('names a missing file and a directory', async () => {
    const dir = await tempDir();
    let [problem] = await problemsOf(withFile(join(dir, 'absent.master')));
    expect(problem).toMatchObject({ path: 'accounts[0].master_key.file', message: `cannot read ${join(dir, 'absent.master')}: no such file (ENOENT)` });
    await mkdir(join(dir, 'sub'), { mode: 0o700 });
    [problem] = await problemsOf(withFile(join(dir, 'sub')));
    expect(problem!.message).toMatch(/is not a regular file/);
  });

  it('refuses a FIFO in the place of a key file without waiting for a writer, and a real file past 1 KB', async () => {
    const dir = await tempDir();
    execFileSync('mkfifo', ['-m', '600', join(dir, 'fifo.master')]);
    let [problem] = await problemsOf(withFile(join(dir, 'fifo.master')));
    expect(problem!.message).toMatch(/is not a regular file/);
    const big = await keyFile(dir, 'big.master', `${KEY1}\n`.repeat(40));
    [problem] = await problemsOf(withFile(big));
    expect(problem!.message).toMatch(/; it is 2680 bytes$/);
  });

  it('refuses a large file without reading it', async () => {
    let read = false;
    const stat = async (): Promise<KeyFileStat> => ({ mode: 0o100600, size: 1 << 20, isFile: () => true });
    const readFile = async (): Promise<string> => {
      read = true;
      return KEY1;
    };
    const err = await parseConfig(withFile('/k'), { env: {}, baseDir: '/', stat, readFile }).catch((e: unknown) => e);
    expect((err as ConfigError).problems[0]!.message).toMatch(/1048576 bytes/);
    expect(read).toBe(false);
  });

  it('works on an injected file system (stat checked before reading)', async () => {
    const files: Record<string, { mode: number; text: string }> = {
      '/creds/a.master': { mode: 0o100600, text: `${KEY1}\n` },
      '/creds/b.agent': { mode: 0o100644, text: `${KEY2}\n` },
    };
    const stat = async (p: string): Promise<KeyFileStat> => {
      const f = files[p];
      if (!f) throw Object.assign(new Error(`ENOENT ${p}`), { code: 'ENOENT' });
      return { mode: f.mode, size: f.text.length, isFile: () => true };
    };
    const readFile = async (p: string): Promise<string> => files[p]!.text;
    const text = minimal().replace('{ env: K1 }', '{ file: a.master }\n    agent: { key: { file: b.agent } }');
    const err = await parseConfig(text, { env: { CREDENTIALS_DIRECTORY: '/creds' }, baseDir: '/', stat, readFile }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).problems).toEqual([
      { path: 'accounts[0].agent.key.file', line: 7, message: '/creds/b.agent: file is readable by group or others (mode 0644); chmod 600 it' },
    ]);
    files['/creds/b.agent']!.mode = 0o100600;
    const c = await parseConfig(text, { env: { CREDENTIALS_DIRECTORY: '/creds' }, baseDir: '/', stat, readFile });
    expect((await readKey(c.accounts[0]!.agent.key!, { env: {}, stat, readFile })).reveal()).toBe(KEY2);
    // readKey checks again at use: a file that became group-readable since is refused then too.
    files['/creds/a.master']!.mode = 0o100640;
    await expect(readKey(c.accounts[0]!.masterKey!, { env: {}, stat, readFile })).rejects.toMatchObject({
      code: 'CONFIG_INVALID',
      problems: [{ path: 'accounts[0].master_key.file', message: expect.stringMatching(/mode 0640/) }],
    });
  });
});

describe('env keys', () => {
  it('loads { env: VAR } from the injected env (never process.env)', async () => {
    const c = await parseConfig(minimal().replace('{ env: K1 }', '{ env: MM_KEY }'), { env: { MM_KEY: `${KEY2}\n` }, baseDir: '/' });
    expect((await readKey(c.accounts[0]!.masterKey!, { env: { MM_KEY: KEY2 } })).reveal()).toBe(KEY2);
  });

  it('names an unset variable, and refuses bad content without echoing it', async () => {
    let problems = await problemsOf(minimal().replace('{ env: K1 }', '{ env: NOT_SET_ANYWHERE }'));
    expect(problems).toEqual([{ path: 'accounts[0].master_key.env', line: 6, message: 'environment variable NOT_SET_ANYWHERE is not set' }]);
    problems = await problemsOf(minimal().replace('{ env: K1 }', '{ env: BAD }'), { BAD: `${KEY1}x` });
    expect(problems[0]!.message).toMatch(/environment variable BAD does not hold one private key/);
    expect(problems[0]!.message).not.toContain(HEX1.slice(0, 16));
  });
});

describe('key sources in YAML', () => {
  it('refuses an inline key and says why, without echoing it anywhere', async () => {
    for (const inline of [`"${KEY1}"`, KEY1, HEX1]) {
      const text = minimal().replace('{ env: K1 }', inline);
      const err = await parseConfig(text, { env: {}, baseDir: '/' }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ConfigError);
      const e = err as ConfigError;
      expect(e.problems).toEqual([{ path: 'accounts[0].master_key', line: 6, message: expect.stringMatching(/never written inline/) }]);
      for (const shown of [e.message, JSON.stringify(e.problems), inspect(e), String(e.stack)]) {
        expect(shown).not.toContain(HEX1.slice(0, 16));
        expect(shown).not.toContain(HEX1.slice(-16));
      }
    }
  });

  it('refuses a key pasted as a key name without echoing it', async () => {
    const err = await parseConfig(minimal().replace('{ env: K1 }', `{ ${KEY1}: x }`), { env: {}, baseDir: '/' }).catch((e: unknown) => e);
    expect((err as ConfigError).message).not.toContain(HEX1.slice(0, 16));
    expect(JSON.stringify((err as ConfigError).problems)).not.toContain(HEX1.slice(0, 16));
    expect((err as ConfigError).problems[0]).toMatchObject({ path: 'accounts[0].master_key.<key name not shown>', line: 6 });
    expect((err as ConfigError).problems[0]!.message).toMatch(/unknown key <key name not shown>; allowed here: file, env/);
  });

  it('refuses a key pasted into another field without echoing it', async () => {
    const err = await parseConfig(minimal().replace('name: a1', `name: "${KEY1}"`), { env: { K1: KEY1 }, baseDir: '/' }).catch((e: unknown) => e);
    expect(paths((err as ConfigError).problems)).toEqual(['accounts[0].name']);
    expect((err as ConfigError).message).not.toContain(HEX1.slice(0, 16));
  });

  const shapes: Array<[string, string, RegExp]> = [
    ['both', '{ file: a, env: B }', /either file or env, not both/],
    ['neither', '{}', /must be \{ file: NAME \} or \{ env: VAR \}/],
    ['a list', '[a]', /must be \{ file: NAME \} or \{ env: VAR \}/],
    ['bad env name', '{ env: "1-X" }', /environment variable name/],
    ['empty file', '{ file: "" }', /file name or path/],
  ];
  it.each(shapes)('refuses %s', async (_name, source, message) => {
    const problems = await problemsOf(minimal().replace('{ env: K1 }', source));
    expect(problems).toHaveLength(1);
    expect(problems[0]!.path).toMatch(/^accounts\[0\]\.master_key/);
    expect(problems[0]!.message).toMatch(message);
  });
});

const TOKEN = 'bot-mm-0123456789abcdef';

describe('checkTokenText', () => {
  it('takes one line of 16+ printable characters, a trailing newline ignored', () => {
    expect((checkTokenText(`${TOKEN}\n`, 'f') as { reveal(): string }).reveal()).toBe(TOKEN);
    expect((checkTokenText(`${TOKEN}\r\n`, 'f') as { reveal(): string }).reveal()).toBe(TOKEN);
  });
  it.each([
    ['short\n', /shorter than 16/],
    [`${TOKEN}\n${TOKEN}\n`, /one line/],
    [`${TOKEN} x`, /printable ASCII without spaces/],
    [`${TOKEN}\t`, /printable ASCII/],
  ])('refuses %j without showing it', (text, msg) => {
    const r = checkTokenText(text, '/creds/token');
    expect(r).toMatch(msg);
    expect(r).not.toContain(TOKEN);
  });
});
