import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonPieces } from './json-pieces.js';

async function joined(pieces: AsyncGenerator<Buffer>): Promise<{ text: string; count: number }> {
  const out: Buffer[] = [];
  for await (const p of pieces) out.push(p);
  return { text: Buffer.concat(out).toString('utf8'), count: out.length };
}

describe('jsonPieces', () => {
  it("is JSON.stringify of the head with the array last, byte for byte, whatever the head, the items and the piece size", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.dictionary(fc.string().filter((k) => k !== 'accounts' && k !== '__proto__'), fc.jsonValue()),
        fc.array(fc.oneof(fc.jsonValue(), fc.constant(undefined))),
        fc.integer({ min: 1, max: 5 }),
        async (head, items, per) => {
          const { text } = await joined(jsonPieces(head, 'accounts', items, per));
          expect(text).toBe(`${JSON.stringify({ ...head, accounts: items })}\n`);
        },
      ),
    );
  });

  it('one piece per itemsPerPiece items (at least one piece, for an empty list too)', async () => {
    expect((await joined(jsonPieces({}, 'a', [], 2))).count).toBe(1);
    expect((await joined(jsonPieces({}, 'a', [1, 2], 2))).count).toBe(1);
    expect((await joined(jsonPieces({ x: 1 }, 'a', [1, 2, 3, 4, 5], 2))).count).toBe(3);
    expect((await joined(jsonPieces({}, 'a', [], 2))).text).toBe('{"a":[]}\n');
  });

  it('refuses a head that already has the key', async () => {
    await expect(joined(jsonPieces({ accounts: 1 }, 'accounts', []))).rejects.toThrow(/already has 'accounts'/);
  });
});
