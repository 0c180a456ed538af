/** Types for hash-wasm's keccak-only build (keccak.ts imports it): the package types its index only. */
declare module 'hash-wasm/dist/keccak.umd.min.js' {
  import type { createKeccak, keccak } from 'hash-wasm';
  const build: { createKeccak: typeof createKeccak; keccak: typeof keccak };
  export default build;
}
