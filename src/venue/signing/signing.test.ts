import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { encode } from '@msgpack/msgpack';
import fc from 'fast-check';
import { hashTypedData, toHex } from 'viem';
import { l1ActionHash, l1SigningHash, l1TypedData, msgpackAction } from './l1.js';
import { l1TypedDataDigest, recoverL1Signer, recoverUserSigner, signerFromPrivateKey, InvalidKeyError } from './signer.js';
import { NonceSource } from './nonce.js';
import { userSignedDigest, userSignedTypedData } from './user-signed.js';
import { loadSigningCurve, viemCurve, type SigningCurve } from './curve.js';
import { FakeClock } from '../../time/fake-clock.js';

// Published vectors (VENUE.md): official Python/Rust SDK tests. K1 is a public test key.
const K1 = '0x0123456789012345678901234567890123456789012345678901234567890123';
const K1_ADDRESS = '0x14791697260e4c9a71f18484c9f997b308e59325';
const RUST_KEY = '0xe908f86dbb4d55ac876378565aafeabc187f6690f046459397b17d9b9a19688e';

// Every vector is checked with both secp256k1 implementations the signer can run on (curve.ts).
const CURVES: Array<[string, SigningCurve]> = [viemCurve, loadSigningCurve().curve].map((c) => [c.name, c]);

function sameSig(got: { r: string; s: string; v: number }, want: { r: string; s: string; v: number }): void {
  expect(BigInt(got.r)).toBe(BigInt(want.r));
  expect(BigInt(got.s)).toBe(BigInt(want.s));
  expect(got.v).toBe(want.v);
}

describe('L1 action hash', () => {
  it('scheduleCancel without time, nonce 0', () => {
    expect(l1ActionHash({ type: 'scheduleCancel' }, 0)).toBe(
      '0xa2887a3147b6542306b61d311a056fd1753913d63cc904f30cba61712a98f4ae',
    );
  });

  it('scheduleCancel with a uint64 time, nonce 1234567890', () => {
    expect(l1ActionHash({ type: 'scheduleCancel', time: 1735689600000n }, 1234567890)).toBe(
      '0x3a66628d6aee0f0234d97afedeac15d09b6a753f864d2f03b6396d5fee9d8182',
    );
  });

  it('encodes a large JS number as uint64 0xcf, never float64', () => {
    const bytes = msgpackAction({ type: 'scheduleCancel', time: 1735689600000 });
    // fixmap(2) "type" "scheduleCancel" "time" 0xcf ...
    expect(Array.from(bytes)).toContain(0xcf);
    expect(Array.from(bytes)).not.toContain(0xcb);
    expect(l1ActionHash({ type: 'scheduleCancel', time: 1735689600000 }, 1234567890)).toBe(
      l1ActionHash({ type: 'scheduleCancel', time: 1735689600000n }, 1234567890),
    );
    // the pitfall this guards against: plain encode of a number yields float64 and another hash
    expect(Array.from(encode({ time: 1735689600000 }, { useBigInt64: true }))).toContain(0xcb);
  });

  it('hashes a small bigint like the same number (smallest msgpack form)', () => {
    expect(l1ActionHash({ type: 'scheduleCancel', time: 123456789n }, 0)).toBe(l1ActionHash({ type: 'scheduleCancel', time: 123456789 }, 0));
  });

  it('keeps key order (type first)', () => {
    expect(l1ActionHash({ type: 'scheduleCancel', time: 5n }, 0)).not.toBe(
      l1ActionHash({ time: 5n, type: 'scheduleCancel' }, 0),
    );
  });
});

describe('L1 signing digest', () => {
  it('is viem hashTypedData(l1TypedData(...)) for any connection id, on both networks', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 32, maxLength: 32 }), fc.constantFrom('mainnet' as const, 'testnet' as const), (bytes, network) => {
        const connectionId = toHex(bytes);
        expect(l1SigningHash(connectionId, network)).toBe(hashTypedData(l1TypedData(connectionId, network)));
      }),
      { numRuns: 300 },
    );
  });

  it("the simulator's (viem's steps, the domain hashed once) is viem hashTypedData too, on both networks in any order", () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 32, maxLength: 32 }), fc.constantFrom('mainnet' as const, 'testnet' as const), (bytes, network) => {
        const connectionId = toHex(bytes);
        expect(l1TypedDataDigest(connectionId, network)).toBe(hashTypedData(l1TypedData(connectionId, network)));
      }),
      { numRuns: 300 },
    );
  });
});

describe('user-signed digest', () => {
  const hex = (n: number) => fc.uint8Array({ minLength: n, maxLength: n }).map((b) => toHex(b));
  it('is viem hashTypedData(userSignedTypedData(...)) for both kinds, both chain field names, any chain id, name and nonce', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('approveAgent' as const, 'approveBuilderFee' as const),
        fc.constantFrom('hyperliquidChain' as const, 'venueChain' as const),
        fc.oneof(fc.constantFrom(0x66eee, 0xa4b1, 1, 0), fc.integer({ min: 0, max: 2 ** 40 })),
        fc.constantFrom('Mainnet', 'Testnet'),
        hex(20),
        fc.option(fc.string({ unit: 'grapheme', maxLength: 40 }), { nil: undefined }),
        fc.oneof(fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }), fc.bigInt({ min: 0n, max: 2n ** 64n - 1n })),
        (kind, chainField, chainId, chain, addr, text, nonce) => {
          const action: Record<string, unknown> =
            kind === 'approveAgent'
              ? { type: kind, signatureChainId: `0x${chainId.toString(16)}`, [chainField]: chain, agentAddress: addr, nonce, ...(text !== undefined ? { agentName: text } : {}) }
              : { type: kind, signatureChainId: `0x${chainId.toString(16)}`, [chainField]: chain, maxFeeRate: text ?? '0.001%', builder: addr, nonce };
          const typed = userSignedTypedData(kind, action, { chainField });
          expect(userSignedDigest(kind, action, { chainField })).toBe(hashTypedData(typed as unknown as Parameters<typeof hashTypedData>[0]));
        },
      ),
      { numRuns: 400 },
    );
  });

  it('refuses what it cannot encode exactly: a nonce past uint64, an address that is not one', () => {
    const base = { type: 'approveAgent', signatureChainId: '0x66eee', hyperliquidChain: 'Mainnet', agentAddress: `0x${'ab'.repeat(20)}`, agentName: 'x' };
    expect(() => userSignedDigest('approveAgent', { ...base, nonce: 2n ** 64n })).toThrow(/uint64/);
    expect(() => userSignedDigest('approveAgent', { ...base, nonce: -1 })).toThrow(/uint64/);
    expect(() => userSignedDigest('approveAgent', { ...base, agentAddress: '0x1234', nonce: 1 })).toThrow(/address/);
  });
});

describe.each(CURVES)('L1 signatures (Python SDK vectors), %s', (_name, curve) => {
  const signer = signerFromPrivateKey(K1, 'key', curve);
  it('derives the address', () => expect(signer.address).toBe(K1_ADDRESS));
  it.each([
    [{ type: 'scheduleCancel' }, 'mainnet', '0x6cdfb286702f5917e76cd9b3b8bf678fcc49aec194c02a73e6d4f16891195df9', '0x6557ac307fa05d25b8d61f21fb8a938e703b3d9bf575f6717ba21ec61261b2a0', 27],
    [{ type: 'scheduleCancel' }, 'testnet', '0xc75bb195c3f6a4e06b7d395acc20bbb224f6d23ccff7c6a26d327304e6efaeed', '0x342f8ede109a29f2c0723bd5efb9e9100e3bbb493f8fb5164ee3d385908233df', 28],
    [{ type: 'scheduleCancel', time: 123456789 }, 'mainnet', '0x609cb20c737945d070716dcc696ba030e9976fcf5edad87afa7d877493109d55', '0x16c685d63b5c7a04512d73f183b3d7a00da5406ff1f8aad33f8ae2163bab758b', 28],
    [{ type: 'scheduleCancel', time: 123456789 }, 'testnet', '0x4e4f2dbd4107c69783e251b7e1057d9f2b9d11cee213441ccfa2be63516dc5bc', '0x706c656b23428c8ba356d68db207e11139ede1670481a9e01ae2dfcdb0e1a678', 27],
  ] as const)('%j on %s', async (action, network, r, s, v) => {
    const sig = await signer.signL1({ action, nonce: 0, network });
    sameSig(sig, { r, s, v });
    expect(await recoverL1Signer({ action, nonce: 0, network, signature: sig })).toBe(K1_ADDRESS);
  });

  it('with a vault address (mainnet, nonce 0)', async () => {
    const sig = await signer.signL1({
      action: { type: 'dummy', num: 100000000000 },
      nonce: 0,
      network: 'mainnet',
      vaultAddress: '0x1719884eb866cb12b2287399b15f7db5e7d775ea',
    });
    sameSig(sig, {
      r: '0x003c548db75e479f8012acf3000ca3a6b05606bc2ec0c29c50c515066a326239',
      s: '0x4d402be7396ce74fbba3795769cda45aec00dc3125a984f2a9f23177b190da2c',
      v: 28,
    });
  });
});

describe.each(CURVES)('user-signed actions (Python SDK vectors, chain field hyperliquidChain), %s', (_name, curve) => {
  const signer = signerFromPrivateKey(K1, 'key', curve);
  const agent = '0x1d9470d4b963f552e6f671a81619d395877bf409';
  const nonce = 1687816341423;
  it.each([
    ['0x66eee', '0xa73999aeae0c688601e37a7b62b92be104d806d560794230df1a5b274b6a5de0', '0x121570fc3b914104f6c93c9f0abed3735db285a7579eab24310377f4e5d06184', 28],
    ['0xa4b1', '0x80faa7bc459ac17d0add234184435784e301cd4c795361d94f905ebbed36e7c7', '0x2ee65ec5957781a0521fe6cbdce32ff1eafbb5b6fe55bd7ddcd3d3c668e0194f', 28],
  ] as const)('approveAgent, signatureChainId %s', async (signatureChainId, r, s, v) => {
    const action = { type: 'approveAgent', hyperliquidChain: 'Mainnet', signatureChainId, agentAddress: agent, agentName: 'agent', nonce };
    const sig = await signer.signUserAction('approveAgent', action, { chainField: 'hyperliquidChain' });
    sameSig(sig, { r, s, v });
    expect(await recoverUserSigner('approveAgent', action, sig, { chainField: 'hyperliquidChain' })).toBe(K1_ADDRESS);
  });

  it.each([
    ['0x66eee', '0xb2b1df833cb6a99f4c2416ee3d8f2be484f3104b949256f6f478a63c2c2eadc8', '0x1a9a2925db804f1a8d4dd6abdd4d198ffbf544e6b7c38a9307af47ebc8b8d623', 28],
    ['0xa4b1', '0xc833e4e98281ea8e1c743455434278182d4b75edb4d3ed2d08e5174083c92c04', '0x3cacd0c5de0b738cc440a1a691842ba6bd013cf947ca933430d6ed67e426bdb6', 27],
  ] as const)('approveBuilderFee, signatureChainId %s', async (signatureChainId, r, s, v) => {
    const action = { type: 'approveBuilderFee', hyperliquidChain: 'Mainnet', signatureChainId, maxFeeRate: '0.001%', builder: agent, nonce };
    const sig = await signer.signUserAction('approveBuilderFee', action, { chainField: 'hyperliquidChain' });
    sameSig(sig, { r, s, v });
  });

  it.each([
    ['Mainnet', '0x343c9078af7c3d6683abefd0ca3b2960de5b669b716863e6dc49090853a4a3cd', '0x6c016301239461091a8ca3ea5ac783362526c4d9e9e624ffc563aea93d6ac239', 27],
    ['Testnet', '0x2ada43eeebeba9cfe13faf95aa84e5b8c4885c3a07cbf4536f2df5edd340d4eb', '0x1ed0e24f60a80d199a842258d5fa737a18d486f7d4e656268b434d226f2811d7', 28],
  ] as const)('approveBuilderFee, Rust SDK vector, %s', async (chain, r, s, v) => {
    const rust = signerFromPrivateKey(RUST_KEY, 'key', curve);
    const action = {
      type: 'approveBuilderFee',
      hyperliquidChain: chain,
      signatureChainId: '0x' + (421614).toString(16),
      maxFeeRate: '0.001%',
      builder: '0x1234567890123456789012345678901234567890',
      nonce: 1583838,
    };
    sameSig(await rust.signUserAction('approveBuilderFee', action, { chainField: 'hyperliquidChain' }), { r, s, v });
  });

  it("signs the venue's field name hyperliquidChain by default; the spec's venueChain is a different signature", async () => {
    const base = { type: 'approveAgent', signatureChainId: '0x66eee', agentAddress: agent, agentName: 'agent', nonce };
    const viaDefault = await signer.signUserAction('approveAgent', { ...base, hyperliquidChain: 'Mainnet' });
    sameSig(viaDefault, { r: '0xa73999aeae0c688601e37a7b62b92be104d806d560794230df1a5b274b6a5de0', s: '0x121570fc3b914104f6c93c9f0abed3735db285a7579eab24310377f4e5d06184', v: 28 });
    const viaSpec = await signer.signUserAction('approveAgent', { ...base, venueChain: 'Mainnet' }, { chainField: 'venueChain' });
    expect(viaSpec.r).not.toBe(viaDefault.r);
    expect(await recoverUserSigner('approveAgent', { ...base, venueChain: 'Mainnet' }, viaSpec, { chainField: 'venueChain' })).toBe(K1_ADDRESS);
  });
});

describe('signer hygiene', () => {
  it('refuses malformed keys without echoing them', () => {
    const bad = '0x' + 'zz'.repeat(32);
    expect(() => signerFromPrivateKey(bad)).toThrow(InvalidKeyError);
    try {
      signerFromPrivateKey(bad);
    } catch (e) {
      expect(String((e as Error).message)).not.toContain('zz');
    }
    expect(() => signerFromPrivateKey('0x' + '0'.repeat(64))).toThrow(InvalidKeyError);
  });

  it('never serializes the key', () => {
    const s = signerFromPrivateKey(K1);
    expect(JSON.stringify(s)).not.toContain(K1.slice(2));
    expect(JSON.stringify({ s })).toContain(K1_ADDRESS);
    expect(inspect(s, { showHidden: true, depth: 5 })).toBe(`Signer(${K1_ADDRESS})`);
    expect(inspect({ s }, { customInspect: false, showHidden: true })).not.toContain(K1.slice(2));
    expect(Object.keys(s)).toEqual(['address']);
  });
});

describe('NonceSource', () => {
  it('is max(now, last + 1) per signer', () => {
    const clock = new FakeClock(1_000_000);
    const n = new NonceSource(clock);
    expect(n.next('0xA')).toBe(1_000_000);
    expect(n.next('0xa')).toBe(1_000_001);
    expect(n.next('0xb')).toBe(1_000_000);
    clock.jump(-50_000); // the clock steps back: still strictly increasing
    expect(n.next('0xa')).toBe(1_000_002);
    clock.jump(100_000);
    expect(n.next('0xa')).toBe(1_050_000);
  });
});
