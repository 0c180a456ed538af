import { describe, expect, it } from 'vitest';
import { createLogger } from '../app/app.js';

function capture(): { write(s: string): void; text: () => string } {
  let out = '';
  return { write: (s: string) => void (out += s), text: () => out };
}

describe('log formats', () => {
  it('json: one object a line, the fields machines read', () => {
    const c = capture();
    createLogger('info', c).child({ account: 'mm-main' }).warn({ event: 'arm', result: 'error' }, 'arm failed');
    const rec = JSON.parse(c.text()) as Record<string, unknown>;
    expect(rec).toMatchObject({ level: 40, account: 'mm-main', event: 'arm', result: 'error', msg: 'arm failed', service: 'dms-keeper' });
  });

  it('pretty: one readable line per record, the account first, no key material', () => {
    const c = capture();
    const log = createLogger('info', c, undefined, 'pretty');
    const key = `0x${'ab'.repeat(32)}`;
    log.child({ account: 'mm-main' }).warn({ event: 'arm', result: 'error', err: new Error(`boom ${key}`) }, 'arm failed');
    log.debug({ event: 'arm', result: 'ok' }, 'armed');
    const lines = c.text().trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}Z\] WARN: mm-main: arm failed \{"result":"error","err":\{/);
    expect(c.text()).not.toContain('ab'.repeat(32));
  });
});
