import { aTurnOfTheLoop } from './loop-turn.js';

/**
 * How many array items one piece holds. At 50,000 accounts `/status` is one item an account, about
 * 40 µs each to make and write on an idle core: 200 make a piece of a few ms, so a re-arm timer
 * due while the body is made waits that long, not the whole body (2.2 s of one turn on a starved
 * machine, docs/benchmarks.md).
 */
export const ITEMS_PER_PIECE = 200;

/**
 * `JSON.stringify({ ...head, [key]: [...items] }) + '\n'`, byte for byte, as pieces made one
 * after the other with a turn of the event loop between two (http-server.ts writes each once the
 * socket has taken the one before). `items` is read lazily: each is made when its piece is, so a
 * caller that builds them from live state shows each as it is when written. The key must not be
 * one of `head`'s (it would come twice).
 */
export async function* jsonPieces(head: Record<string, unknown>, key: string, items: Iterable<unknown>, itemsPerPiece = ITEMS_PER_PIECE): AsyncGenerator<Buffer> {
  if (Object.hasOwn(head, key)) throw new Error(`jsonPieces: the head already has '${key}'`);
  const headText = JSON.stringify(head);
  const open = `${headText.length > 2 ? `${headText.slice(0, -1)},` : '{'}${JSON.stringify(key)}:[`;
  let text = open;
  let inPiece = 0;
  let first = true;
  for (const item of items) {
    if (inPiece === itemsPerPiece) {
      yield Buffer.from(text, 'utf8');
      await aTurnOfTheLoop();
      text = '';
      inPiece = 0;
    }
    // As JSON.stringify writes an array's element that has no JSON form (undefined, a function).
    text += `${first ? '' : ','}${JSON.stringify(item) ?? 'null'}`;
    first = false;
    inPiece += 1;
  }
  yield Buffer.from(`${text}]}\n`, 'utf8');
}
