/**
 * A trading bot written with the venue's own TypeScript SDK (`@nktkas/hyperliquid`, a devDependency
 * used only in tests) against the simulator over a real loopback socket: its `HttpTransport`,
 * `InfoClient` and `ExchangeClient` with viem private-key wallets, nothing of ours in between. If
 * the simulator answered in any format but the venue's, or hashed an action other than the venue
 * does, the SDK would throw or the signer would not be recognised.
 *
 * The SDK validates requests, not answers (its answer types are TypeScript only), so the answers
 * are held to its types here field by field (`expectMeta` and friends, written from
 * the info and exchange method modules of `@nktkas/hyperliquid` 0.32.1).
 *
 * The venue clock is a FakeClock started at the host's time: the SDK's nonces (host time) fall in
 * the venue's window, and the scheduled cancel fires when the test moves the clock, not after a real
 * wait. Keys are generated per run and never written anywhere.
 */
import { ApiRequestError, ExchangeClient, HttpTransport, InfoClient } from '@nktkas/hyperliquid';
import { SymbolConverter } from '@nktkas/hyperliquid/utils';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../src/time/fake-clock.js';
import { startSimulator, type Simulator } from '../src/sim/simulator.js';
import { outcomeAssetId } from '../src/sim/catalog/asset-id.js';
import { VENUE_TEXTS } from '../src/sim/venue/texts.js';

const sims: Simulator[] = [];
afterEach(async () => {
  await Promise.all(sims.splice(0).map((s) => s.stop()));
});

async function start(profile?: string): Promise<{ sim: Simulator; clock: FakeClock }> {
  const clock = new FakeClock(Date.now());
  const sim = await startSimulator({ clock, accounts: [], ...(profile !== undefined ? { profile } : {}) });
  sims.push(sim);
  return { sim, clock };
}

/** Seeds an account over the $1,000,000 volume gate through the admin API, as a test harness would. */
async function seedAccount(sim: Simulator, address: string): Promise<void> {
  const res = await fetch(`${sim.baseUrl}/_sim/accounts`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ address, tradedVolumeUsd: 2_000_000 }) });
  expect(res.status).toBe(200);
}

const isDecimalText = (v: unknown): boolean => typeof v === 'string' && /^[0-9]+(\.[0-9]+)?$/.test(v);
const isInt = (v: unknown): boolean => typeof v === 'number' && Number.isSafeInteger(v);

/** `MetaResponse`: universe of {szDecimals, name, maxLeverage, marginTableId}, marginTables [id, {description, marginTiers}], collateralToken. */
function expectMeta(m: unknown): void {
  const meta = m as { universe: unknown[]; marginTables: unknown[]; collateralToken: unknown };
  expect(Array.isArray(meta.universe) && meta.universe.length > 0).toBe(true);
  for (const u of meta.universe as Array<Record<string, unknown>>) {
    expect(isInt(u.szDecimals) && typeof u.name === 'string' && isInt(u.maxLeverage) && isInt(u.marginTableId), JSON.stringify(u)).toBe(true);
  }
  for (const t of meta.marginTables as Array<[unknown, { description: unknown; marginTiers: Array<Record<string, unknown>> }]>) {
    expect(isInt(t[0]) && typeof t[1].description === 'string').toBe(true);
    for (const tier of t[1].marginTiers) expect(isDecimalText(tier.lowerBound) && isInt(tier.maxLeverage)).toBe(true);
  }
  expect(isInt(meta.collateralToken)).toBe(true);
}

/** `SpotMetaResponse`: universe of {tokens, name, index, isCanonical}, tokens of {name, szDecimals, weiDecimals, index, tokenId, isCanonical, evmContract, fullName, deployerTradingFeeShare}. */
function expectSpotMeta(m: unknown): void {
  const spot = m as { universe: Array<Record<string, unknown>>; tokens: Array<Record<string, unknown>> };
  expect(spot.universe.length > 0 && spot.tokens.length > 0).toBe(true);
  for (const u of spot.universe) {
    expect(Array.isArray(u.tokens) && (u.tokens as unknown[]).every(isInt) && typeof u.name === 'string' && isInt(u.index) && typeof u.isCanonical === 'boolean').toBe(true);
  }
  for (const t of spot.tokens) {
    expect(typeof t.name === 'string' && isInt(t.szDecimals) && isInt(t.weiDecimals) && isInt(t.index), JSON.stringify(t)).toBe(true);
    expect(t.tokenId).toMatch(/^0[xX][0-9a-fA-F]{32}$/);
    expect(typeof t.isCanonical === 'boolean' && (t.evmContract === null || typeof t.evmContract === 'object')).toBe(true);
    expect(t.fullName === null || typeof t.fullName === 'string').toBe(true);
    expect(isDecimalText(t.deployerTradingFeeShare)).toBe(true);
  }
}

/** `OpenOrdersResponse`: {coin, side, limitPx, sz, oid, timestamp, origSz, cloid?, reduceOnly?}. */
function expectOpenOrders(rows: unknown): Array<{ coin: string; oid: number }> {
  const list = rows as Array<Record<string, unknown>>;
  for (const o of list) {
    expect(typeof o.coin === 'string' && (o.side === 'B' || o.side === 'A') && isInt(o.oid) && isInt(o.timestamp), JSON.stringify(o)).toBe(true);
    expect(isDecimalText(o.limitPx) && isDecimalText(o.sz) && isDecimalText(o.origSz), JSON.stringify(o)).toBe(true);
    if (o.cloid !== undefined) expect(o.cloid).toMatch(/^0x[a-fA-F0-9]{32}$/);
    if (o.reduceOnly !== undefined) expect(o.reduceOnly).toBe(true);
  }
  return list as Array<{ coin: string; oid: number }>;
}

describe('a bot written with @nktkas/hyperliquid trades an outcome on the simulator', () => {
  it('reads meta and spotMeta, approves an agent, arms, rests and cancels outcome orders, and sees a scheduled cancel fire', async () => {
    const { sim, clock } = await start();
    const master = privateKeyToAccount(generatePrivateKey());
    const agent = privateKeyToAccount(generatePrivateKey());
    const user = master.address.toLowerCase() as `0x${string}`;
    await seedAccount(sim, user);

    const transport = new HttpTransport({ isTestnet: true, apiUrl: sim.exchangeUrl, timeout: 10_000 });
    const info = new InfoClient({ transport });

    // Market metadata, as the SDK's own SymbolConverter needs it.
    const meta = await info.meta();
    expectMeta(meta);
    const spot = await info.spotMeta();
    expectSpotMeta(spot);
    const symbols = await SymbolConverter.create({ transport });
    expect(symbols.getAssetId(meta.universe[0]?.name ?? '')).toBe(0);
    expect(symbols.getAssetId('PURR/USDC')).toBe(10_000);

    // An outcome to trade, and its Yes side's asset id by the HIP-4 formula.
    const outcomes = await info.outcomeMeta();
    const outcome = outcomes.outcomes[0];
    if (outcome === undefined) throw new Error('the simulator lists no outcome');
    const asset = 100_000_000 + 10 * outcome.outcome + 0;
    expect(asset).toBe(outcomeAssetId(outcome.outcome, 0));
    expect(outcome.sideSpecs.map((s) => s.token)).toEqual([asset, asset + 1]);
    expect(spot.tokens.some((t) => t.name === `+${10 * outcome.outcome}` && t.index === outcome.sideSpecs[0]?.token)).toBe(true);

    // The master approves an agent (user-signed, hyperliquidChain): the venue recovers the master.
    const masterClient = new ExchangeClient({ transport, wallet: master });
    await expect(masterClient.approveAgent({ agentAddress: agent.address, agentName: 'bot' })).resolves.toEqual({ status: 'ok', response: { type: 'default' } });
    expect(await info.userRole({ user: agent.address })).toEqual({ role: 'agent', data: { user } });

    // The agent arms the dead man's switch; one too early is the venue's refusal, thrown by the SDK.
    const bot = new ExchangeClient({ transport, wallet: agent });
    await expect(bot.scheduleCancel({ time: sim.clock.nowMs() + 60_000 })).resolves.toEqual({ status: 'ok', response: { type: 'default' } });
    const early = await bot.scheduleCancel({ time: sim.clock.nowMs() + 2_000 }).catch((e: unknown) => e);
    expect(early).toBeInstanceOf(ApiRequestError);
    expect((early as ApiRequestError).message).toBe(VENUE_TEXTS.tooEarly);
    expect((early as ApiRequestError).message).toBe('Scheduled cancel time too early, must be at least 5 seconds from now.');

    // Two resting orders on the outcome (the L1 hash over the SDK's own msgpack: the signer recovered is the agent).
    const cloid = `0x${'c0'.repeat(16)}` as const;
    const placed = await bot.order({
      orders: [
        { a: asset, b: true, p: '0.42', s: '100', r: false, t: { limit: { tif: 'Gtc' } }, c: cloid },
        { a: asset, b: false, p: '0.61', s: '50', r: false, t: { limit: { tif: 'Alo' } } },
      ],
      grouping: 'na',
    });
    expect(placed.status).toBe('ok');
    expect(placed.response.type).toBe('order');
    const statuses = placed.response.data.statuses as Array<{ resting?: { oid: number; cloid?: string } }>;
    expect(statuses).toEqual([{ resting: { oid: expect.any(Number) as number, cloid } }, { resting: { oid: expect.any(Number) as number } }]);
    const [kept, cancelled] = statuses.map((s) => s.resting?.oid as number) as [number, number];
    expect(sim.state.actionLog().filter((e) => e.type === 'order')).toMatchObject([{ signer: agent.address.toLowerCase(), account: user, result: 'ok: resting,resting' }]);

    // /info openOrders and the service's orders listing show the same two orders.
    const open = expectOpenOrders(await info.openOrders({ user }));
    expect(open.map((o) => [o.coin, o.oid]).sort()).toEqual([
      [`#${10 * outcome.outcome}`, kept],
      [`#${10 * outcome.outcome}`, cancelled],
    ].sort());
    const listed = (await (await fetch(`${sim.baseUrl}/v1/accounts/${user}/orders`)).json()) as { data: Array<{ venue_order_id: string; submitted_by: { address: string } | null }> };
    expect(listed.data.map((o) => Number(o.venue_order_id)).sort()).toEqual([kept, cancelled].sort());
    expect(listed.data.every((o) => o.submitted_by?.address === agent.address.toLowerCase())).toBe(true);

    // The agent cancels one; cancelling it again is the venue's per-order error, thrown by the SDK.
    await expect(bot.cancel({ cancels: [{ a: asset, o: cancelled }] })).resolves.toEqual({ status: 'ok', response: { type: 'cancel', data: { statuses: ['success'] } } });
    const again = await bot.cancel({ cancels: [{ a: asset, o: cancelled }] }).catch((e: unknown) => e);
    expect(again).toBeInstanceOf(ApiRequestError);
    expect((again as ApiRequestError).message).toBe(`Order 0: Order was never placed, already canceled, or filled. asset=${asset}`);
    expect(expectOpenOrders(await info.openOrders({ user })).map((o) => o.oid)).toEqual([kept]);

    // A scheduled cancel fires (venue time moved, no real wait): the remaining order is gone everywhere.
    await bot.scheduleCancel({ time: sim.clock.nowMs() + 5_000 });
    await clock.advance(5_000);
    expect(await info.openOrders({ user })).toEqual([]);
    expect(((await (await fetch(`${sim.baseUrl}/v1/accounts/${user}/orders`)).json()) as { data: unknown[] }).data).toEqual([]);
    expect(sim.state.schedule(user).triggersToday).toBe(1);
  });

  it('an approval in the spec\'s dialect (signed over venueChain) is refused by default and accepted under spec_dialect', async () => {
    const master = privateKeyToAccount(generatePrivateKey());
    const agent = privateKeyToAccount(generatePrivateKey());
    const specBody = async (): Promise<string> => {
      const nonce = Date.now();
      const action = { type: 'approveAgent', signatureChainId: '0x66eee', venueChain: 'Testnet', agentAddress: agent.address.toLowerCase(), agentName: 'bot', nonce };
      const signature = await master.signTypedData({
        domain: { name: 'HyperliquidSignTransaction', version: '1', chainId: 0x66eee, verifyingContract: '0x0000000000000000000000000000000000000000' },
        types: {
          'HyperliquidTransaction:ApproveAgent': [
            { name: 'venueChain', type: 'string' },
            { name: 'agentAddress', type: 'address' },
            { name: 'agentName', type: 'string' },
            { name: 'nonce', type: 'uint64' },
          ],
        },
        primaryType: 'HyperliquidTransaction:ApproveAgent',
        message: { venueChain: 'Testnet', agentAddress: action.agentAddress as `0x${string}`, agentName: 'bot', nonce: BigInt(nonce) },
      });
      const r = `0x${signature.slice(2, 66)}`;
      const s = `0x${signature.slice(66, 130)}`;
      const v = Number.parseInt(signature.slice(130, 132), 16);
      return JSON.stringify({ action, nonce, signature: { r, s, v } });
    };
    const post = async (sim: Simulator, body: string) => {
      const res = await fetch(`${sim.exchangeUrl}/exchange`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
    };

    const strict = (await start()).sim;
    await seedAccount(strict, master.address.toLowerCase());
    expect(await post(strict, await specBody())).toEqual({ status: 422, type: 'text/plain; charset=utf-8', text: VENUE_TEXTS.undeserializable });
    expect(strict.state.agents(master.address)).toEqual([]);

    const dialect = (await start('spec_dialect')).sim;
    await seedAccount(dialect, master.address.toLowerCase());
    const ok = await post(dialect, await specBody());
    expect(ok.status).toBe(200);
    expect(JSON.parse(ok.text)).toEqual({ status: 'ok', response: { type: 'default' } });
    expect(dialect.state.agents(master.address)).toEqual([{ address: agent.address.toLowerCase(), name: 'bot' }]);
    // The SDK (hyperliquidChain) still works under spec_dialect.
    const transport = new HttpTransport({ isTestnet: true, apiUrl: dialect.exchangeUrl, timeout: 10_000 });
    const other = privateKeyToAccount(generatePrivateKey());
    await expect(new ExchangeClient({ transport, wallet: master }).approveAgent({ agentAddress: other.address, agentName: 'second' })).resolves.toMatchObject({ status: 'ok' });
  });
});
