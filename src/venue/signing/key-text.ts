/**
 * Whether a text is a private key, without viem: the config checks every key at load (and the
 * heartbeat command its token through the same reader), so this must not pull the signing
 * library into processes that never sign.
 */
const KEY_RE = /^0x[0-9a-fA-F]{64}$/;

export function isPrivateKeyText(text: string): boolean {
  return KEY_RE.test(text);
}

/** The order of secp256k1's group: a private key is a scalar in [1, n). */
const SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

/**
 * Whether `0x` + 64 hex digits is a usable secp256k1 private key (in [1, n)): what
 * `signerFromPrivateKey` would accept, without deriving the public key (about 0.5 ms each, which
 * made checking 10,000 keys at start-up take 5 s).
 */
export function isValidPrivateKey(text: string): boolean {
  if (!KEY_RE.test(text)) return false;
  const k = BigInt(text);
  return k > 0n && k < SECP256K1_N;
}

