/** Benchmark accounts: keys derived from fixed public strings (they protect nothing). */
import { keccak256, stringToBytes } from 'viem';
import { privateKeyToAddress } from 'viem/accounts';

export function benchKey(i: number): `0x${string}` {
  return keccak256(stringToBytes(`dms-keeper bench account ${i}`));
}

/**
 * The addresses derived so far, by index: a test file asks for the first n again and again (each
 * scenario, each profile), and each one is a pure-JS curve multiplication (about 1.5 ms), 4 s of a
 * budget-tier file's CPU when derived anew every time.
 */
const derived: string[] = [];

export function benchAddresses(n: number): string[] {
  for (let i = derived.length; i < n; i++) derived.push(privateKeyToAddress(benchKey(i)).toLowerCase());
  return derived.slice(0, n);
}
