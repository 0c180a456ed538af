import { describe, expect, it } from 'vitest';
import { ConfigError } from './errors.js';
import { loadConfig, parseConfig } from './load.js';
import { exchangePathProblem } from './rules.js';
import { toAppConfig } from '../app/from-config.js';
import { VENUE_FACTS } from '../venue/facts.js';
import { NETWORK_URLS } from './schema.js';
import { KEY1, minimal, parse, paths, problemsOf } from './test-support.js';

describe('defaults', () => {
  it('fills every default of docs/DESIGN.md section 2', async () => {
    const c = await parse(minimal());
    expect(c.venue).toEqual({
      simulator: false,
      network: 'testnet',
      baseUrl: 'https://svc.example.com',
      exchangeUrl: 'https://api.hyperliquid-testnet.xyz',
      wsUrl: 'wss://api.hyperliquid-testnet.xyz',
      requestTimeoutMs: 5000,
      chainField: 'hyperliquidChain',
    });
    const sw = { deadlineSeconds: 60, rearmEverySeconds: 15, minHorizonSeconds: 20, armWhen: 'always', onShutdown: 'keep', path: 'rest' };
    expect(c.switch).toEqual(sw);
    expect(c.watch).toEqual({ ordersEverySeconds: 30, positionsEverySeconds: 60, notifications: true, source: 'service', addressBudgetWarnShare: 0.5, perpDexes: [] });
    expect(c.rateLimits).toEqual({
      global: { requests: 1200, perSeconds: 60 },
      scheduleCancel: { requests: 600, perSeconds: 60 },
      exchange: { requests: 1200, perSeconds: 60 },
      // the venue's published weights
      infoWeights: { frontendOpenOrders: 20, openOrders: 20, clearinghouseState: 2, spotClearinghouseState: 2, userRole: 60, userRateLimit: 20, extraAgents: 20 },
    });
    expect(c.shard).toEqual({ index: 0, count: 1, replication: 1 });
    expect(c.stateDir).toBe('./state');
    expect(c.server).toEqual({ listen: '127.0.0.1:9464', host: '127.0.0.1', port: 9464 });
    expect(c.log).toEqual({ level: 'info', format: 'json' });
    expect(c.accounts).toHaveLength(1);
    const a = c.accounts[0]!;
    expect(a.name).toBe('a1');
    expect(a.address).toBe('0x00000000000000000000000000000000000000a1'); // lower-cased
    expect(a.agent).toEqual({ name: 'dms-keeper', validDays: 30 });
    expect(a.masterKey).toEqual({ kind: 'env', name: 'K1', yamlPath: 'accounts[0].master_key' });
    expect(a.switch).toEqual(sw);
    expect(a.switchOverrides).toEqual([]);
    expect(a.builderFee).toBeUndefined();
  });

  it('picks mainnet URLs from the one NETWORK_URLS constant', async () => {
    const c = await parse(minimal().replace('venue:', 'venue:\n  network: mainnet'));
    expect(c.venue).toMatchObject({ exchangeUrl: NETWORK_URLS.mainnet.exchangeUrl, wsUrl: NETWORK_URLS.mainnet.wsUrl });
    expect(NETWORK_URLS.mainnet).toEqual({ exchangeUrl: 'https://api.hyperliquid.xyz', wsUrl: 'wss://api.hyperliquid.xyz' });
  });

  it('state_dir defaults to $STATE_DIRECTORY (first entry), then ./state; an explicit value wins', async () => {
    expect((await parse(minimal(), { STATE_DIRECTORY: '/var/lib/dms-keeper' })).stateDir).toBe('/var/lib/dms-keeper');
    expect((await parse(minimal(), { STATE_DIRECTORY: '/a:/b' })).stateDir).toBe('/a');
    expect((await parse(minimal('state_dir: /srv/x'), { STATE_DIRECTORY: '/var/lib/dms-keeper' })).stateDir).toBe('/srv/x');
  });

  it('reads a section whose children are all commented out as empty', async () => {
    const c = await parse(minimal('switch:\n  # deadline_seconds: 90\nwatch:\n'));
    expect(c.switch.deadlineSeconds).toBe(60);
    expect(c.watch.ordersEverySeconds).toBe(30);
  });

  it('keeps unquoted 0x addresses as text (YAML would read them as hex integers)', async () => {
    const c = await parse(minimal().replace('"0x00000000000000000000000000000000000000A1"', '0x00000000000000000000000000000000000000a1'));
    expect(c.accounts[0]!.address).toBe('0x00000000000000000000000000000000000000a1');
  });

  it('simulator: no URL needed, none defaulted; given ones are kept', async () => {
    const c = await parse('venue: { simulator: true }\naccounts: [{ name: a, address: "0x00000000000000000000000000000000000000a1", master_key: { env: K1 } }]');
    expect(c.venue).toEqual({ simulator: true, network: 'testnet', requestTimeoutMs: 5000, chainField: 'hyperliquidChain' });
  });

  it('returns a frozen config', async () => {
    const c = await parse(minimal());
    expect(Object.isFrozen(c)).toBe(true);
    expect(Object.isFrozen(c.accounts[0]!.switch)).toBe(true);
  });

  it('strips a trailing slash from URLs', async () => {
    const c = await parse(minimal().replace('https://svc.example.com', 'https://svc.example.com/api/'));
    expect(c.venue.baseUrl).toBe('https://svc.example.com/api');
  });
});

describe('unknown keys are errors at every depth, with their path and line', () => {
  const cases: Array<[string, string, string, number]> = [
    ['top level', minimal('colour: blue'), 'colour', 7],
    ['venue', minimal().replace('venue:', 'venue:\n  base_uri: x'), 'venue.base_uri', 2],
    ['switch', minimal('switch:\n  deadline: 60'), 'switch.deadline', 8],
    ['rate_limits.global', minimal('rate_limits:\n  global: { requests: 10, per_second: 1 }'), 'rate_limits.global.per_second', 8],
    ['accounts[0]', minimal().replace('    master_key', '    mastr_key: x\n    master_key'), 'accounts[0].mastr_key', 6],
    ['accounts[0].agent', minimal('').replace('    master_key: { env: K1 }', '    master_key: { env: K1 }\n    agent:\n      nmae: x'), 'accounts[0].agent.nmae', 8],
    ['accounts[0].master_key', minimal().replace('{ env: K1 }', '{ env: K1, path: x }'), 'accounts[0].master_key.path', 6],
    ['accounts[0].switch', minimal().replace('    master_key: { env: K1 }', '    master_key: { env: K1 }\n    switch:\n      deadline_secs: 30'), 'accounts[0].switch.deadline_secs', 8],
    ['shard', minimal('shard: { index: 0, count: 1, ordinal: 0 }'), 'shard.ordinal', 7],
    ['server', minimal('server:\n  port: 1'), 'server.port', 8],
    ['log', minimal('log:\n  colour: true'), 'log.colour', 8],
  ];
  it.each(cases)('%s', async (_name, text, path, line) => {
    const problems = await problemsOf(text);
    expect(problems).toEqual([expect.objectContaining({ path, line, message: expect.stringMatching(/^unknown key/) })]);
  });

  it('lists the allowed keys', async () => {
    const [p] = await problemsOf(minimal('switch:\n  deadline: 60'));
    expect(p!.message).toContain('allowed here: deadline_seconds, rearm_every_seconds, min_horizon_seconds, arm_when, on_shutdown, path');
  });
});

describe('field rules', () => {
  const bad: Array<[string, string, string, RegExp]> = [
    ['account name pattern', minimal().replace('name: a1', 'name: MM Main'), 'accounts[0].name', /metric label/],
    ['address shape', minimal().replace('"0x00000000000000000000000000000000000000A1"', '"0x1234"'), 'accounts[0].address', /40 hex/],
    ['agent name length', minimal().replace('    master_key: { env: K1 }', '    master_key: { env: K1 }\n    agent: { name: a-very-long-agent-name }'), 'accounts[0].agent.name', /16 characters/],
    ['valid_days > 180', minimal().replace('    master_key: { env: K1 }', '    master_key: { env: K1 }\n    agent: { valid_days: 181 }'), 'accounts[0].agent.valid_days', /180/],
    ['valid_days < 1', minimal().replace('    master_key: { env: K1 }', '    master_key: { env: K1 }\n    agent: { valid_days: 0 }'), 'accounts[0].agent.valid_days', /at least 1/],
    ['fee rate shape', minimal().replace('    master_key: { env: K1 }', '    master_key: { env: K1 }\n    builder_fee: { builder: "0x0000000000000000000000000000000000000b01", max_fee_rate: "0.01" }'), 'accounts[0].builder_fee.max_fee_rate', /0\.01%/],
    ['log level', minimal('log: { level: verbose }'), 'log.level', /fatal, error, warn, info, debug, trace, silent/],
    ['network', minimal().replace('venue:', 'venue:\n  network: devnet'), 'venue.network', /testnet, mainnet/],
    ['rate limit zero', minimal('rate_limits: { global: { requests: 0 } }'), 'rate_limits.global.requests', /at least 1/],
    ['rate limit fraction', minimal('rate_limits: { schedule_cancel: { per_seconds: 1.5 } }'), 'rate_limits.schedule_cancel.per_seconds', /whole number/],
    ['arm_when', minimal('switch: { arm_when: sometimes }'), 'switch.arm_when', /always, orders_open/],
    ['wrong type', minimal('watch: { notifications: "yes" }'), 'watch.notifications', /true or false \(got a string\)/],
    ['no value', minimal('switch:\n  deadline_seconds:'), 'switch.deadline_seconds', /has no value/],
    ['accounts missing', 'venue: { base_url: "https://x.example" }', 'accounts', /required/],
    ['accounts empty', minimal().replace(/accounts:[\s\S]*/, 'accounts: []'), 'accounts', /at least one/],
    ['empty list item', minimal() + '\n  -', 'accounts[1]', /empty list item/],
    ['name missing', minimal().replace('  - name: a1\n    address', '  - address'), 'accounts[0].name', /required/],
  ];
  it.each(bad)('%s', async (_name, text, path, message) => {
    const problems = await problemsOf(text);
    expect(paths(problems)).toEqual([path]);
    expect(problems[0]!.message).toMatch(message);
  });

  it('accepts a good builder fee and lower-cases the builder', async () => {
    const c = await parse(
      minimal().replace('    master_key: { env: K1 }', '    master_key: { env: K1 }\n    builder_fee: { builder: "0x0000000000000000000000000000000000000B01", max_fee_rate: "0.001%" }'),
    );
    expect(c.accounts[0]!.builderFee).toEqual({ builder: '0x0000000000000000000000000000000000000b01', maxFeeRate: '0.001%' });
  });
});

const SHARED = 'rate_limits:\n  shared: { name: fleet, redis_url: "redis://127.0.0.1:6379" }';

describe('shard.fleet', () => {
  it('takes its instance name from the config, else $HOSTNAME; lease 10 s by default; fallback share follows the membership unless set', async () => {
    const c = await parse(minimal(`shard: { replication: 2, fleet: {} }\n${SHARED}`), { HOSTNAME: 'dms-keeper-3' });
    expect(c.shard.fleet).toEqual({ instance: 'dms-keeper-3', leaseSeconds: 10, fallbackShareFollows: true });
    const named = await parse(minimal(`shard: { fleet: { instance: k7, lease_seconds: 20 } }\n${SHARED.replace('}', ', fallback_share: 0.25 }')}`), { HOSTNAME: 'x' });
    expect(named.shard.fleet).toEqual({ instance: 'k7', leaseSeconds: 20, fallbackShareFollows: false });
    const env = await parse(minimal(`shard: { fleet: {} }\n${SHARED}`), { DMS_KEEPER_SHARD__FLEET__INSTANCE: 'from-env' });
    expect(env.shard.fleet?.instance).toBe('from-env');
  });
});

describe('cross-field rules (each good and bad, each at its YAML path)', () => {
  const sw = (body: string) => minimal(`switch: { ${body} }`);
  // request_timeout_ms 1000: retry slot 2 s, so short deadlines pass the re-arm rule.
  const fast = (body: string) => sw(body).replace('venue:', 'venue:\n  request_timeout_ms: 1000');
  const cases: Array<[string, string, string | null]> = [
    // deadline >= 5 s venue lead + 5 s margin
    ['deadline 10 ok', fast('deadline_seconds: 10, min_horizon_seconds: 1, rearm_every_seconds: 1'), null],
    ['deadline 9 refused', fast('deadline_seconds: 9, min_horizon_seconds: 1, rearm_every_seconds: 1'), 'switch.deadline_seconds'],
    // min_horizon < deadline
    ['min_horizon 19 < 60 ok', sw('min_horizon_seconds: 19'), null],
    ['min_horizon = deadline refused', sw('deadline_seconds: 100, min_horizon_seconds: 100, rearm_every_seconds: 1'), 'switch.min_horizon_seconds'],
    // deadline - rearm >= min_horizon + 2 * (timeout/1000 + 1): 60 - 28 = 32 >= 20 + 12
    ['rearm 28 ok', sw('rearm_every_seconds: 28'), null],
    ['rearm 29 refused', sw('rearm_every_seconds: 29'), 'switch.rearm_every_seconds'],
    // shard.index < shard.count
    ['shard 1 of 2 ok', minimal('shard: { index: 1, count: 2 }'), null],
    ['shard 2 of 2 refused', minimal('shard: { index: 2, count: 2 }'), 'shard.index'],
    // replication: at most shard.count, on_shutdown keep, a master key to approve the second agent
    ['replication 2 of 2 ok', minimal('shard: { index: 1, count: 2, replication: 2 }'), null],
    // scaled down to one instance the fleet keeps working, with one replica (check-config warns)
    ['replication 2 of 1 ok', minimal('shard: { index: 0, count: 1, replication: 2 }'), null],
    ['replication 3 refused', minimal('shard: { index: 0, count: 3, replication: 3 }'), 'shard.replication'],
    ['replication 2 with on_shutdown clear refused', minimal('shard: { index: 0, count: 2, replication: 2 }\nswitch: { on_shutdown: clear }'), 'switch.on_shutdown'],
    // a fleet: its membership on the shared budget's Redis, no fixed index or count, accounts that may move
    ['fleet ok', minimal(`shard: { replication: 2, fleet: { instance: k0 } }\n${SHARED}`), null],
    ['fleet without rate_limits.shared refused', minimal('shard: { fleet: { instance: k0 } }'), 'shard.fleet'],
    ['fleet with a shard count refused', minimal(`shard: { count: 2, fleet: { instance: k0 } }\n${SHARED}`), 'shard.count'],
    ['fleet with on_shutdown clear refused', minimal(`shard: { fleet: { instance: k0 } }\nswitch: { on_shutdown: clear }\n${SHARED}`), 'switch.on_shutdown'],
    ['fleet instance with a slash refused', minimal(`shard: { fleet: { instance: "a/b" } }\n${SHARED}`), 'shard.fleet.instance'],
    ['fleet lease 2 s refused', minimal(`shard: { fleet: { lease_seconds: 2 } }\n${SHARED}`), 'shard.fleet.lease_seconds'],
  ];
  it.each(cases)('%s', async (_name, text, path) => {
    if (path === null) await expect(parse(text)).resolves.toBeDefined();
    else expect(paths(await problemsOf(text))).toEqual([path]);
  });

  it('the retry slot follows request_timeout_ms: 60 - 15 < 20 + 2 * (12 + 1) fails, 20 + 2 * (11 + 1) holds', async () => {
    const problems = await problemsOf(minimal().replace('venue:', 'venue:\n  request_timeout_ms: 12000'));
    expect(paths(problems)).toEqual(['switch.rearm_every_seconds']);
    expect(problems[0]!.message).toMatch(/2 retries of 13 s/);
    expect(problems[0]!.message).toMatch(/use rearm_every_seconds <= 14/);
    await expect(parse(minimal().replace('venue:', 'venue:\n  request_timeout_ms: 11000'))).resolves.toBeDefined();
  });

  it('checks an account override at the account path, and only rules touching its own keys', async () => {
    const acct = (body: string) => minimal().replace('    master_key: { env: K1 }', `    master_key: { env: K1 }\n    switch: { ${body} }`);
    await expect(parse(acct('deadline_seconds: 30, rearm_every_seconds: 5, min_horizon_seconds: 10'))).resolves.toBeDefined();
    let problems = await problemsOf(acct('deadline_seconds: 30'));
    // 30 - 15 = 15 < 20 + 12: the inherited cadence no longer fits, reported where the account
    // changed something; and min_horizon 20 < 30 still holds.
    expect(paths(problems)).toEqual(['accounts[0].switch.deadline_seconds']);
    expect(problems[0]!.message).toMatch(/rearm_every_seconds 15 is inherited/);
    expect(problems[0]!.line).toBe(7);
    // One mistake, one report: min_horizon >= deadline also breaks the re-arm rule, not repeated.
    problems = await problemsOf(acct('min_horizon_seconds: 60'));
    expect(paths(problems)).toEqual(['accounts[0].switch.min_horizon_seconds']);
    problems = await problemsOf(acct('deadline_seconds: 8'));
    expect(paths(problems)).toEqual(['accounts[0].switch.deadline_seconds']);
    // An account that overrides nothing relevant does not repeat a top-level problem.
    problems = await problemsOf(minimal('switch: { rearm_every_seconds: 40 }').replace('    master_key: { env: K1 }', '    master_key: { env: K1 }\n    switch: { arm_when: orders_open }'));
    expect(paths(problems)).toEqual(['switch.rearm_every_seconds']);
  });

  it('merges account overrides into effective settings', async () => {
    const c = await parse(minimal().replace('    master_key: { env: K1 }', '    master_key: { env: K1 }\n    switch: { on_shutdown: clear, path: exchange }'));
    expect(c.accounts[0]!.switch).toMatchObject({ onShutdown: 'clear', path: 'exchange', deadlineSeconds: 60 });
    expect(c.accounts[0]!.switchOverrides).toEqual(['onShutdown', 'path']);
    expect(c.switch.onShutdown).toBe('keep');
  });

  it('path exchange | rest_then_exchange needs an exchange URL (the network default always gives one in production)', async () => {
    expect(exchangePathProblem(['switch', 'path'], 'exchange', false, undefined)).toEqual([
      { segments: ['switch', 'path'], message: 'path exchange needs venue.exchange_url (or venue.simulator: true)' },
    ]);
    expect(exchangePathProblem(['switch', 'path'], 'rest_then_exchange', true, undefined)).toEqual([]);
    expect(exchangePathProblem(['switch', 'path'], 'rest', false, undefined)).toEqual([]);
    const c = await parse(minimal('switch: { path: rest_then_exchange }'));
    expect(c.venue.exchangeUrl).toBe('https://api.hyperliquid-testnet.xyz');
  });

  it('base_url is required unless simulator', async () => {
    const text = 'accounts: [{ name: a, address: "0x00000000000000000000000000000000000000a1", master_key: { env: K1 } }]';
    const problems = await problemsOf(text);
    expect(paths(problems)).toEqual(['venue.base_url']);
    await expect(parse(`venue: { simulator: true }\n${text}`)).resolves.toBeDefined();
  });

  const urls: Array<[string, string, string | null]> = [
    ['https ok', 'base_url: https://svc.example.com', null],
    ['http on loopback ok', 'base_url: http://127.0.0.1:8080', null],
    ['http on localhost ok', 'base_url: http://localhost:8080', null],
    ['http on [::1] ok', 'base_url: "http://[::1]:8080"', null],
    ['http elsewhere refused', 'base_url: http://svc.example.com', 'venue.base_url'],
    ['ws elsewhere refused', 'base_url: https://a.example\n  ws_url: ws://api.example.com', 'venue.ws_url'],
    ['wss ok', 'base_url: https://a.example\n  ws_url: wss://api.example.com', null],
    ['https for ws refused', 'base_url: https://a.example\n  ws_url: https://api.example.com', 'venue.ws_url'],
    ['credentials refused', 'base_url: https://u:p@svc.example.com', 'venue.base_url'],
    ['not a URL', 'base_url: svc.example.com', 'venue.base_url'],
    ['exchange http refused', 'base_url: https://a.example\n  exchange_url: http://10.0.0.1', 'venue.exchange_url'],
  ];
  it.each(urls)('URL: %s', async (_name, venueBody, path) => {
    const text = minimal().replace('venue:\n  base_url: https://svc.example.com', `venue:\n  ${venueBody}`);
    if (path === null) await expect(parse(text)).resolves.toBeDefined();
    else expect(paths(await problemsOf(text))).toEqual([path]);
  });

  it('never echoes a URL (it may hold credentials)', async () => {
    const [p] = await problemsOf(minimal().replace('https://svc.example.com', 'https://user:hunter2@svc.example.com'));
    expect(p!.message).not.toContain('hunter2');
  });

  it('simulator allows http URLs anywhere (they are ignored)', async () => {
    await expect(parse(minimal().replace('venue:', 'venue:\n  simulator: true').replace('https://svc', 'http://svc'))).resolves.toBeDefined();
  });

  const listens: Array<[string, { host: string; port: number } | null]> = [
    ['127.0.0.1:9464', { host: '127.0.0.1', port: 9464 }],
    ['"[::1]:9000"', { host: '::1', port: 9000 }],
    ['0.0.0.0:0', { host: '0.0.0.0', port: 0 }],
    ['localhost:80', { host: 'localhost', port: 80 }],
    ['9464', null],
    ['"::1:9464"', null],
    ['127.0.0.1:70000', null],
    ['"[nope]:1"', null],
  ];
  it.each(listens)('server.listen %s', async (value, want) => {
    const text = minimal(`server: { listen: ${value} }`);
    if (want) expect((await parse(text)).server).toMatchObject(want);
    else expect(paths(await problemsOf(text))).toEqual(['server.listen']);
  });

  it('account names are unique', async () => {
    const text = minimal() + '\n  - name: a1\n    address: "0x00000000000000000000000000000000000000a2"\n    master_key: { env: K2 }';
    const problems = await problemsOf(text);
    expect(problems).toEqual([expect.objectContaining({ path: 'accounts[1].name', line: 8, message: expect.stringMatching(/accounts\[0\]/) })]);
  });

  it('the same address twice is an error with the same agent name, fine with another', async () => {
    const second = (agent: string) =>
      minimal() + `\n  - name: a2\n    address: "0x00000000000000000000000000000000000000a1"\n    master_key: { env: K2 }\n    agent: { name: ${agent} }`;
    expect(paths(await problemsOf(second('dms-keeper')))).toEqual(['accounts[1].address']);
    await expect(parse(second('dms-keeper-2'))).resolves.toBeDefined();
  });

  it('one master key approving two agents of one name is an error (a subaccount shares its master)', async () => {
    const second = (agent: string) =>
      minimal() + `\n  - name: a2\n    address: "0x00000000000000000000000000000000000000a2"\n    master_key: { env: K1 }\n    agent: { name: ${agent} }`;
    expect(paths(await problemsOf(second('dms-keeper')))).toEqual(['accounts[1].agent.name']);
    await expect(parse(second('keeper-sub'))).resolves.toBeDefined();
  });

  it('a master key is required unless agent.key is given; a builder fee needs it', async () => {
    const noMaster = minimal().replace('    master_key: { env: K1 }', '    agent: { name: x }');
    expect(paths(await problemsOf(noMaster))).toEqual(['accounts[0].master_key']);
    const agentOnly = minimal().replace('    master_key: { env: K1 }', '    agent: { key: { env: K2 } }');
    const c = await parse(agentOnly);
    expect(c.accounts[0]!.masterKey).toBeUndefined();
    expect(c.accounts[0]!.agent.key).toEqual({ kind: 'env', name: 'K2', yamlPath: 'accounts[0].agent.key' });
    const fee = agentOnly.replace('    agent:', '    builder_fee: { builder: "0x0000000000000000000000000000000000000b01", max_fee_rate: "0.01%" }\n    agent:');
    expect(paths(await problemsOf(fee))).toEqual(['accounts[0].builder_fee']);
  });

  it('a plan over budget is not a config problem: the keeper runs and protects what the budget allows', async () => {
    for (const extra of ['rate_limits: { schedule_cancel: { requests: 1 } }', 'rate_limits: { global: { requests: 6 } }']) {
      const c = await parse(minimal(extra));
      expect(c.accounts).toHaveLength(1);
    }
  });
});

describe('rate_limits.exchange: the budget of POST {exchange_url}/exchange', () => {
  it("defaults to the venue's IP weight, 1200 per 60 s, all the way to the app config", async () => {
    for (const text of [minimal(), minimal('rate_limits: { global: { requests: 900 } }'), minimal('rate_limits:\n  # exchange: { requests: 2400 }')]) {
      const c = await parse(text);
      expect(c.rateLimits.exchange).toEqual({ requests: 1200, perSeconds: 60 });
      expect(toAppConfig(c, {}).rateLimits.exchange).toEqual({ requests: VENUE_FACTS.ipWeightPerMinute, perSeconds: 60 });
    }
  });

  it('maps a given value through to the app config, each sub-key defaulting on its own', async () => {
    const c = await parse(minimal('rate_limits:\n  exchange: { requests: 2400, per_seconds: 30 }'));
    expect(c.rateLimits.exchange).toEqual({ requests: 2400, perSeconds: 30 });
    expect(c.rateLimits.global).toEqual({ requests: 1200, perSeconds: 60 }); // the others untouched
    expect(toAppConfig(c, {}).rateLimits).toMatchObject({ exchange: { requests: 2400, perSeconds: 30 }, scheduleCancel: { requests: 600, perSeconds: 60 } });
    expect((await parse(minimal('rate_limits: { exchange: { requests: 3000 } }'))).rateLimits.exchange).toEqual({ requests: 3000, perSeconds: 60 });
    expect((await parse(minimal('rate_limits: { exchange: { per_seconds: 10 } }'))).rateLimits.exchange).toEqual({ requests: 1200, perSeconds: 10 });
  });

  it('can be set from the environment', async () => {
    const c = await parse(minimal(), { DMS_KEEPER_RATE_LIMITS__EXCHANGE__REQUESTS: '6000', DMS_KEEPER_RATE_LIMITS__EXCHANGE__PER_SECONDS: '60' });
    expect(c.rateLimits.exchange).toEqual({ requests: 6000, perSeconds: 60 });
  });

  const bad: Array<[string, string, string, RegExp]> = [
    ['requests 0', 'rate_limits: { exchange: { requests: 0 } }', 'rate_limits.exchange.requests', /at least 1/],
    ['requests negative', 'rate_limits: { exchange: { requests: -5, per_seconds: 60 } }', 'rate_limits.exchange.requests', /at least 1/],
    ['per_seconds 0', 'rate_limits: { exchange: { per_seconds: 0 } }', 'rate_limits.exchange.per_seconds', /at least 1/],
    ['per_seconds negative', 'rate_limits: { exchange: { per_seconds: -60 } }', 'rate_limits.exchange.per_seconds', /at least 1/],
    ['requests a string', 'rate_limits: { exchange: { requests: "lots" } }', 'rate_limits.exchange.requests', /got a string/],
    ['per_seconds a fraction', 'rate_limits: { exchange: { per_seconds: 1.5 } }', 'rate_limits.exchange.per_seconds', /whole number/],
    ['unknown sub-key', 'rate_limits:\n  exchange: { requests: 10, per_minute: 1 }', 'rate_limits.exchange.per_minute', /^unknown key "per_minute"; allowed here: requests, per_seconds$/],
    ['not a mapping', 'rate_limits: { exchange: 2400 }', 'rate_limits.exchange', /must be a mapping \(got 2400\)/],
  ];
  it.each(bad)('refuses %s, naming the YAML path', async (_name, extra, path, message) => {
    const problems = await problemsOf(minimal(extra));
    expect(paths(problems)).toEqual([path]);
    expect(problems[0]!.message).toMatch(message);
  });

  it('names exchange among the keys allowed under rate_limits', async () => {
    const [p] = await problemsOf(minimal('rate_limits:\n  exchnage: { requests: 2400 }'));
    expect(p).toMatchObject({ path: 'rate_limits.exchnage', line: 8 });
    expect(p!.message).toBe('unknown key "exchnage"; allowed here: global, schedule_cancel, exchange, info_weights, shared');
  });
});

describe('all problems at once', () => {
  it('a file with 5 mistakes yields 5 problems, each with its path and line, in file order', async () => {
    const text = [
      'venue:', //                                     1
      '  base_url: http://svc.example.com', //          2  http off loopback
      '  request_timeout_ms: 1000', //                  3
      'switch:', //                                    4
      '  deadline_seconds: 8', //                       5  below 10
      '  rearm_every_seconds: 1', //                    6
      '  min_horizon_seconds: 1', //                    7
      'shard: { index: 3, count: 2 }', //               8  index >= count
      'accounts:', //                                  9
      '  - name: a1', //                                10
      '    address: "0x00000000000000000000000000000000000000a1"', // 11
      '    master_key: { env: K1 }', //                 12
      '    colour: red', //                             13 unknown key
      '  - name: a1', //                                14 duplicate name
      '    address: "0x00000000000000000000000000000000000000a2"', // 15
      '    master_key: { env: K2 }', //                 16
    ].join('\n');
    const problems = await problemsOf(text);
    expect(problems.map((p) => [p.path, p.line])).toEqual([
      ['venue.base_url', 2],
      ['switch.deadline_seconds', 5],
      ['shard.index', 8],
      ['accounts[0].colour', 13],
      ['accounts[1].name', 14],
    ]);
    const err = await parse(text).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).code).toBe('CONFIG_INVALID');
    expect((err as ConfigError).message).toContain('5 problems');
    expect((err as ConfigError).message).toContain('accounts[1].name (line 14): duplicate');
  });

  it('a field error in a section does not hide a cross-field rule in the same section', async () => {
    let problems = await problemsOf(minimal('switch: { path: fast, deadline_seconds: 8 }'));
    expect(paths(problems)).toEqual(['switch.path', 'switch.deadline_seconds']); // reading order, by column
    problems = await problemsOf(minimal('shard: { index: 3, count: 2, ordinal: 1 }'));
    expect(paths(problems)).toEqual(['shard.index', 'shard.ordinal']);
    problems = await problemsOf(minimal().replace('venue:', 'venue:\n  network: devnet').replace('https://svc', 'http://svc'));
    expect(paths(problems)).toEqual(['venue.network', 'venue.base_url']);
    // An invalid base_url is not also reported as missing.
    problems = await problemsOf(minimal().replace('base_url: https://svc.example.com', 'base_url: 5'));
    expect(problems).toEqual([{ path: 'venue.base_url', line: 2, message: 'must be a string (got 5)' }]);
    // Nor does an account's typo hide a duplicate name in another account.
    problems = await problemsOf(minimal().replace('    master_key', '    colour: red\n    master_key') + '\n  - { name: a1, address: "0x00000000000000000000000000000000000000a2", master_key: { env: K2 } }');
    expect(paths(problems)).toEqual(['accounts[0].colour', 'accounts[1].name']);
  });

  it('YAML syntax errors are reported with their line, without quoting the source', async () => {
    const problems = await problemsOf('venue:\n  base_url: x\n  base_url: y\naccounts: [\n');
    expect(problems.length).toBeGreaterThan(0);
    expect(problems[0]).toMatchObject({ path: '(yaml)', line: 3 });
    for (const p of problems) expect(p.message).not.toContain('\n');
  });

  it('a document that is not a mapping is one problem', async () => {
    expect(paths(await problemsOf('- a\n- b\n'))).toEqual(['(document)']);
  });
});

describe('env overrides (DMS_KEEPER_*)', () => {
  it('number, boolean and string values, parsed to the schema type', async () => {
    const c = await parse(minimal(), {
      DMS_KEEPER_SWITCH__DEADLINE_SECONDS: '90',
      DMS_KEEPER_WATCH__NOTIFICATIONS: 'false',
      DMS_KEEPER_VENUE__BASE_URL: 'https://other.example.com',
      DMS_KEEPER_SERVER__LISTEN: '[::1]:9000',
      DMS_KEEPER_LOG__LEVEL: 'debug',
      DMS_KEEPER_RATE_LIMITS__GLOBAL__REQUESTS: '900',
      DMS_KEEPER_SHARD__COUNT: '1',
      DMS_KEEPER_STATE_DIR: '/srv/state',
      DMS_KEEPER_VENUE__SIMULATOR: 'no',
    });
    expect(c.switch.deadlineSeconds).toBe(90);
    expect(c.accounts[0]!.switch.deadlineSeconds).toBe(90); // before merging into accounts
    expect(c.watch.notifications).toBe(false);
    expect(c.venue.baseUrl).toBe('https://other.example.com');
    expect(c.server).toEqual({ listen: '[::1]:9000', host: '::1', port: 9000 });
    expect(c.log.level).toBe('debug');
    expect(c.rateLimits.global.requests).toBe(900);
    expect(c.stateDir).toBe('/srv/state');
  });

  it('an override wins over the file, and an empty value is ignored', async () => {
    const text = minimal('switch: { deadline_seconds: 120 }');
    expect((await parse(text, { DMS_KEEPER_SWITCH__DEADLINE_SECONDS: '90' })).switch.deadlineSeconds).toBe(90);
    expect((await parse(text, { DMS_KEEPER_SWITCH__DEADLINE_SECONDS: '' })).switch.deadlineSeconds).toBe(120);
  });

  it('makes base_url unnecessary by turning the simulator on', async () => {
    const text = 'accounts: [{ name: a, address: "0x00000000000000000000000000000000000000a1", master_key: { env: K1 } }]';
    expect((await parse(text, { DMS_KEEPER_VENUE__SIMULATOR: 'true' })).venue.simulator).toBe(true);
  });

  const bad: Array<[string, Record<string, string>, string, RegExp]> = [
    ['not a number', { DMS_KEEPER_SWITCH__DEADLINE_SECONDS: 'sixty' }, 'switch.deadline_seconds', /DMS_KEEPER_SWITCH__DEADLINE_SECONDS is not a number/],
    ['not a boolean', { DMS_KEEPER_VENUE__SIMULATOR: 'maybe' }, 'venue.simulator', /DMS_KEEPER_VENUE__SIMULATOR is not a boolean/],
    ['fails a rule', { DMS_KEEPER_SWITCH__DEADLINE_SECONDS: '9' }, 'switch.deadline_seconds', /set by DMS_KEEPER_SWITCH__DEADLINE_SECONDS/],
    ['fails the schema', { DMS_KEEPER_LOG__LEVEL: 'loud' }, 'log.level', /set by DMS_KEEPER_LOG__LEVEL/],
    ['unknown variable', { DMS_KEEPER_SWITCH__DEADLINE: '9' }, 'DMS_KEEPER_SWITCH__DEADLINE', /names no config key/],
    ['single underscore', { DMS_KEEPER_SWITCH_DEADLINE_SECONDS: '9' }, 'DMS_KEEPER_SWITCH_DEADLINE_SECONDS', /did you mean DMS_KEEPER_SWITCH__DEADLINE_SECONDS/],
    ['a section', { DMS_KEEPER_VENUE: 'x' }, 'DMS_KEEPER_VENUE', /section/],
    ['accounts', { DMS_KEEPER_ACCOUNTS__0__NAME: 'x' }, 'DMS_KEEPER_ACCOUNTS__0__NAME', /accounts cannot be overridden/],
    ['a list', { DMS_KEEPER_WATCH__PERP_DEXES: 'xyz' }, 'DMS_KEEPER_WATCH__PERP_DEXES', /watch\.perp_dexes cannot be overridden from the environment \(a list\)/],
  ];
  it.each(bad)('%s', async (_name, env, path, message) => {
    const problems = await problemsOf(minimal(), env);
    expect(paths(problems)).toEqual([path]);
    expect(problems[0]!.message).toMatch(message);
    expect(problems[0]!.line).toBeUndefined(); // the file's line would point at the wrong value
  });

  it('does not treat a key variable the file names as a typo', async () => {
    const text = minimal().replace('{ env: K1 }', '{ env: DMS_KEEPER_MM_MASTER }');
    await expect(parse(text, { DMS_KEEPER_MM_MASTER: KEY1 })).resolves.toBeDefined();
  });

  it('never echoes the value', async () => {
    const [p] = await problemsOf(minimal(), { DMS_KEEPER_SWITCH__DEADLINE_SECONDS: 'sekrit-value' });
    expect(p!.message).not.toContain('sekrit');
  });
});

describe('loadConfig', () => {
  it('reads through the injected readFile and names the file in the error', async () => {
    const files: Record<string, string> = { '/etc/dms/keeper.yaml': minimal('log: { level: nope }') };
    const readFile = async (p: string): Promise<string> => {
      const t = files[p];
      if (t === undefined) throw Object.assign(new Error('nope'), { code: 'ENOENT' });
      return t;
    };
    const err = await loadConfig({ path: '/etc/dms/keeper.yaml', env: { K1: KEY1 }, readFile }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).source).toBe('/etc/dms/keeper.yaml');
    expect((err as ConfigError).message).toMatch(/^invalid config \/etc\/dms\/keeper.yaml: 1 problem\n {2}- log.level \(line 7\)/);
    const missing = await loadConfig({ path: '/etc/dms/none.yaml', env: {}, readFile }).catch((e: unknown) => e);
    expect((missing as ConfigError).problems).toEqual([{ path: '(file)', message: 'cannot read the config file /etc/dms/none.yaml (ENOENT)' }]);
  });

  it('parseConfig keeps the source name', async () => {
    const c = await parseConfig(minimal(), { env: { K1: KEY1 }, baseDir: '/x', source: 'a.yaml' });
    expect(c.source).toBe('a.yaml');
  });
});

describe('log.format', () => {
  it('is json by default, pretty on request, and nothing else', async () => {
    expect((await parse(minimal('log: { format: pretty }'))).log).toEqual({ level: 'info', format: 'pretty' });
    await expect(parse(minimal('log: { format: text }'))).rejects.toThrow(/log\.format .*must be one of: json, pretty/);
  });
});

describe('many accounts', () => {
  // 50,000 accounts read every key file at once and failed with EMFILE (a real open-file limit).
  it('5,000 key files are read a few at a time: a file system that refuses more than 100 open files passes', async () => {
    const n = 5_000;
    let open = 0;
    let most = 0;
    const limited = async <T>(fn: () => T): Promise<T> => {
      if (open >= 100) throw Object.assign(new Error('EMFILE: too many open files'), { code: 'EMFILE' });
      open++;
      most = Math.max(most, open);
      await new Promise((r) => setImmediate(r));
      open--;
      return fn();
    };
    const lines = ['venue:', '  base_url: https://svc.example.com', 'accounts:'];
    for (let i = 0; i < n; i++) lines.push(`  - name: a${i}`, `    address: "0x${i.toString(16).padStart(40, '0')}"`, `    master_key: { file: a${i}.key }`);
    const config = await parseConfig(lines.join('\n'), {
      env: {},
      baseDir: '/keys',
      readFile: () => limited(() => `${KEY1}\n`),
      stat: () => limited(() => ({ mode: 0o100600, size: 67, isFile: () => true })),
    });
    expect(config.accounts).toHaveLength(n);
    expect(most).toBeLessThanOrEqual(100);
  }, 60_000);
});
