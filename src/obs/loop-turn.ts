/**
 * Resolves after the event loop has run its timers and I/O once (a microtask would not let them):
 * a large response made in pieces gives the re-arm timers their turn between two pieces.
 */
export function aTurnOfTheLoop(): Promise<void> {
  return new Promise<void>((resolve) => setImmediate(resolve));
}
