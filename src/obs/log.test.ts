import { describe, expect, it } from 'vitest';
import { scrub, scrubValue, serializeError } from './log.js';

const KEY = '0x0123456789012345678901234567890123456789012345678901234567890123';

describe('log scrubbing', () => {
  it('removes keys, signatures and URL credentials, keeps addresses', () => {
    const addr = '0x14791697260e4c9a71f18484c9f997b308e59325';
    const sig = '0x' + 'ab'.repeat(65);
    const s = scrub(`key ${KEY} sig ${sig} bare ${KEY.slice(2)} url https://user:pw@venue.example/v1?token=abc&x=1 addr ${addr}`);
    expect(s).not.toContain(KEY.slice(2));
    expect(s).not.toContain('ab'.repeat(65));
    expect(s).not.toContain('user:pw');
    expect(s).not.toContain('token=abc');
    expect(s).toContain(addr);
    expect(s).toContain('x=1');
  });

  it('scrubs errors, causes and stacks', () => {
    const e = new Error(`request to https://u:p@h/x failed with body {"k":"${KEY}"}`, { cause: new Error(`cause ${KEY}`) });
    const out = JSON.stringify(serializeError(e));
    expect(out).not.toContain(KEY.slice(2));
    expect(out).not.toContain('u:p@');
  });

  it('scrubs nested values and secret-named keys', () => {
    const out = JSON.stringify(scrubValue({ a: { privateKey: 'whatever', note: KEY }, list: [KEY] }));
    expect(out).not.toContain('whatever');
    expect(out).not.toContain(KEY.slice(2));
  });
});
