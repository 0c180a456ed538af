/** Benchmark accounts: keys derived from fixed public strings (they protect nothing). */
import { keccak256, stringToBytes } from 'viem';
import { privateKeyToAddress } from 'viem/accounts';

export function benchKey(i: number): `0x${string}` {
  return keccak256(stringToBytes(`dms-keeper bench account ${i}`));
}

export function benchAddresses(n: number): string[] {
  return Array.from({ length: n }, (_, i) => privateKeyToAddress(benchKey(i)).toLowerCase());
}
