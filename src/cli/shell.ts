/**
 * The thin shell (loaded by `main.ts` once the Node.js version is known to be good): the only
 * module that reads argv, env and signals, and that owns the exit code (0 success, 1 runtime
 * failure, 2 bad config or usage; `EXIT_CODES`). Everything below gets a validated config, a clock
 * and callbacks.
 */
import { readFileSync } from 'node:fs';
import { COMMAND_HELP, EXIT_CODES, helpText, parseCommand, USAGE, UsageError, type Command } from './args.js';
import { readHeartbeatToken } from './heartbeat-token.js';
import { runHeartbeats } from '../heartbeat-client/heartbeat-client.js';
import { heartbeatLogLine } from '../heartbeat-client/heartbeat-log.js';
import { redactUrl } from '../heartbeat-client/heartbeat-url.js';
import { createLogger } from '../obs/logger.js';
import { ConfigError, formatProblems } from '../config/errors.js';
import { systemClock, TIMER_SLACK_MS } from '../time/clock.js';

// The keeper, the config loader and the venue client (viem, prom-client, the budget) are loaded
// by the commands that use them: `heartbeat` runs beside every bot, often as a sidecar, and
// needs none of it (its RSS: 97 MB with them loaded at start, see the commit).
const keeperModules = async () => {
  const [app, disarm, fromConfig, load, plan, systemd, agentStore, http, venue, curve] = await Promise.all([
    import('../app/app.js'),
    import('../app/disarm.js'),
    import('../app/from-config.js'),
    import('../config/load.js'),
    import('./check-config-plan.js'),
    import('../obs/systemd.js'),
    import('../state/agent-store.js'),
    import('../venue/http.js'),
    import('../app/venue.js'),
    import('../venue/signing/curve.js'),
  ]);
  return { ...app, ...disarm, ...fromConfig, ...load, ...plan, ...systemd, ...agentStore, ...http, ...venue, ...curve };
};

const EXIT_OK = EXIT_CODES.ok;
const EXIT_RUNTIME = EXIT_CODES.runtime;
const EXIT_USAGE = EXIT_CODES.usage;

function version(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version?: string };
    return pkg.version ?? '0.0.0';
  } catch {
    return '0.0.0';
  }
}

async function load(path: string) {
  const { loadConfig, toAppConfig } = await keeperModules();
  const config = await loadConfig({ path, env: process.env });
  return { config, app: toAppConfig(config, process.env) };
}

async function run(cmd: Extract<Command, { name: 'run' }>): Promise<number> {
  const { App, createNotifier } = await keeperModules();
  const { app: appConfig } = await load(cmd.config);
  const clock = systemClock({ timerSlackMs: TIMER_SLACK_MS });
  const notifier = createNotifier(process.env);
  const app = new App(appConfig, {
    clock,
    version: version(),
    // Loaded only when the config asks for it: the simulator (and all of viem) costs 0.2 s of start-up.
    startSimulator: async () => (await import('../sim/simulator.js')).startSimulator({ port: 0, network: appConfig.venue.network }),
    onHealthyTick: () => notifier.healthy(clock.nowMs()),
  });

  let stopping = false;
  const done = new Promise<number>((resolve) => {
    const onStop = (signal: NodeJS.Signals): void => {
      if (stopping) {
        app.logger.error({ event: 'forced_exit', signal }, 'second signal: exiting now (schedules stay armed)');
        resolve(EXIT_RUNTIME);
        return;
      }
      stopping = true;
      app.logger.info({ event: 'signal', signal }, 'stopping');
      notifier.stopping();
      app.stop().then(
        () => resolve(EXIT_OK),
        (e: unknown) => {
          app.logger.error({ event: 'stop_failed', err: e }, 'stop failed');
          resolve(EXIT_RUNTIME);
        },
      );
    };
    process.on('SIGTERM', onStop);
    process.on('SIGINT', onStop);
    process.on('SIGHUP', () => {
      if (stopping) return;
      load(cmd.config)
        .then(({ app: next }) => app.reload(next))
        .then(
          () => app.metrics.configReloads.inc({ result: 'ok' }),
          (e: unknown) => {
            app.metrics.configReloads.inc({ result: 'error' });
            const detail = e instanceof ConfigError ? formatProblems(e.problems, cmd.config) : (e as Error).message;
            app.logger.error({ event: 'config_reload', result: 'error', problems: detail }, 'config reload refused; the old config stays in force');
          },
        );
    });
  });

  try {
    await app.start();
  } catch (e) {
    app.logger.fatal({ event: 'start_failed', err: e }, 'could not start');
    return EXIT_RUNTIME;
  }
  notifier.ready();
  return done;
}

async function checkConfig(cmd: Extract<Command, { name: 'check-config' }>): Promise<number> {
  const { buildPlan, formatPlan } = await keeperModules();
  const { config } = await load(cmd.config);
  const plan = buildPlan(config);
  process.stdout.write(formatPlan(plan));
  // 1: the config is valid and the keeper will run, but not every account keeps its min horizon.
  return plan.canHoldEveryHorizon ? EXIT_OK : EXIT_RUNTIME;
}

async function disarm(cmd: Extract<Command, { name: 'disarm' }>): Promise<number> {
  const { loadSigningCurve, signingCurveNotice, HttpTransport, buildVenue, disarmAccounts, AgentStore } = await keeperModules();
  const { app: appConfig } = await load(cmd.config);
  if (appConfig.venue.simulator) {
    throw new UsageError('venue.simulator is set; the embedded simulator lives only inside a running keeper, nothing to disarm');
  }
  const names = appConfig.keeper.accounts.map((a) => a.name);
  if (cmd.account !== undefined && !names.includes(cmd.account)) {
    // Decided before anything is sent: a misspelt name is a usage error, not a venue failure.
    throw new UsageError(`no account named '${cmd.account}' in ${cmd.config} (this instance's accounts: ${names.join(', ') || 'none'})`);
  }
  // Said as `run` says it (its signing_curve log record), before anything is signed.
  const curveChoice = loadSigningCurve();
  const curveNotice = signingCurveNotice(curveChoice);
  if (curveNotice.level === 'warn') process.stderr.write(`dms-keeper disarm: ${curveNotice.msg}\n`);
  const transport = new HttpTransport({ requestTimeoutMs: appConfig.venue.requestTimeoutMs });
  // The budget paces requests on unref'd timers; with no server to hold the process, Node would
  // exit (code 0, nothing done) while a clear waits for its slot.
  const keepAlive = setInterval(() => undefined, 60_000);
  try {
    // The same port as the daemon's: the budget, 429 holds and tolerant reading apply to disarm too.
    const { port } = buildVenue({ config: appConfig, urls: appConfig.venue, transport, clock: systemClock() });
    const results = await disarmAccounts({
      accounts: appConfig.keeper.accounts,
      only: cmd.account,
      network: appConfig.venue.network,
      venue: port,
      store: new AgentStore(appConfig.stateDir),
      clock: systemClock(),
      curve: curveChoice.curve,
    });
    for (const r of results) {
      process.stdout.write(
        r.result === 'cleared'
          ? `cleared  ${r.account} (${r.address}) via ${r.route}, signed by the ${r.signer?.replace('_', ' ')}\n`
          : r.result === 'no_clear'
            ? `skipped  ${r.account} (${r.address}): ${r.message}\n`
            : `FAILED   ${r.account} (${r.address}): ${r.message}\n`,
      );
    }
    return results.every((r) => r.result !== 'failed') ? EXIT_OK : EXIT_RUNTIME;
  } finally {
    clearInterval(keepAlive);
    await transport.close();
  }
}

async function simulate(cmd: Extract<Command, { name: 'simulate' }>): Promise<number> {
  const logger = createLogger(process.env.DMS_KEEPER_LOG__LEVEL ?? 'info', undefined, undefined, process.env.DMS_KEEPER_LOG__FORMAT === 'pretty' ? 'pretty' : 'json');
  const { startSimulator } = await import('../sim/simulator.js');
  const sim = await startSimulator({ port: cmd.port, host: cmd.host, profile: cmd.profile, budget: cmd.budget, logger: (line) => logger.info(line) });
  process.stdout.write(`venue simulator on ${sim.baseUrl}\n  profile  ${cmd.profile}\n  budget   ${cmd.budget}\n  REST     ${sim.baseUrl}/v1\n  exchange ${sim.exchangeUrl}/exchange\n  ws       ${sim.wsUrl}/ws\n  admin    ${sim.baseUrl}/_sim/state\n  CLOB     ${sim.clobUrl} (Polymarket; admin ${sim.baseUrl}/_sim/clob/state)\n`);
  await new Promise<void>((resolve) => {
    process.once('SIGTERM', () => resolve());
    process.once('SIGINT', () => resolve());
  });
  await sim.stop();
  return EXIT_OK;
}

/**
 * `dms-keeper heartbeat`: one client loop per keeper URL, until SIGTERM/SIGINT (exit 0) or until a
 * keeper refuses the heartbeat (exit 2: the token, an account name or the URL is wrong, and the
 * same request would be refused again). Keeper outages are the loop's to retry, never an exit.
 */
async function heartbeat(cmd: Extract<Command, { name: 'heartbeat' }>): Promise<number> {
  const token = await readHeartbeatToken({ tokenFile: cmd.tokenFile, env: process.env, cwd: process.cwd() });
  const logger = createLogger(process.env.DMS_KEEPER_LOG__LEVEL ?? 'info', undefined, undefined, process.env.DMS_KEEPER_LOG__FORMAT === 'pretty' ? 'pretty' : 'json');
  const clock = systemClock();
  const urls = cmd.urls.map(redactUrl);
  logger.info(
    { event: 'heartbeat_start', urls, accounts: cmd.accounts, every_ms: cmd.everyMs, timeout_ms: cmd.timeoutMs, check_url: cmd.checkUrl === undefined ? undefined : redactUrl(cmd.checkUrl) },
    `sending heartbeats for ${cmd.accounts.join(', ')} to ${urls.join(', ')} every ${cmd.everyMs / 1000} s${cmd.checkUrl === undefined ? '' : ' while the bot\'s health URL answers 2xx'}`,
  );
  const signal = new Promise<NodeJS.Signals>((resolve) => {
    process.once('SIGTERM', () => resolve('SIGTERM'));
    process.once('SIGINT', () => resolve('SIGINT'));
  });
  // The clock's timers are unref'd and a refused connection leaves no socket: this holds the process.
  const keepAlive = setInterval(() => undefined, 60_000);
  const runs = cmd.urls.map((url) =>
    runHeartbeats({
      url,
      accounts: cmd.accounts,
      token,
      everyMs: cmd.everyMs,
      timeoutMs: cmd.timeoutMs,
      ...(cmd.checkUrl !== undefined ? { checkUrl: cmd.checkUrl } : {}),
      clock,
      onEvent: (e) => {
        const line = heartbeatLogLine(e);
        logger[line.level](line.record, line.msg);
      },
    }),
  );
  const refused = new Promise<'refused'>((resolve) => {
    for (const r of runs) void r.done.then((end) => end.reason === 'refused' && resolve('refused'));
  });
  try {
    // A loop whose onEvent threw rejects its `done`: a bug, exit 1 through main's catch.
    const broken = Promise.all(runs.map((r) => r.done)).then(() => new Promise<never>(() => undefined));
    const why = await Promise.race([signal, refused, broken]);
    await Promise.all(runs.map((r) => r.stop()));
    if (why === 'refused') return EXIT_USAGE;
    logger.info({ event: 'heartbeat_stop', signal: why }, 'stopped');
    return EXIT_OK;
  } finally {
    clearInterval(keepAlive);
  }
}

async function main(argv: string[]): Promise<number> {
  let cmd: Command;
  try {
    cmd = parseCommand(argv);
  } catch (e) {
    if (e instanceof UsageError) {
      // The help of the command that was meant, when it is known; the general usage otherwise.
      const meant = argv[0] !== undefined && argv[0] in COMMAND_HELP ? (COMMAND_HELP as Record<string, string>)[argv[0]] : USAGE;
      process.stderr.write(`dms-keeper: ${e.message}\n\n${meant}`);
      return EXIT_USAGE;
    }
    throw e;
  }
  try {
    switch (cmd.name) {
      case 'help':
        process.stdout.write(helpText(cmd.topic));
        return EXIT_OK;
      case 'version':
        process.stdout.write(`dms-keeper ${version()}\n`);
        return EXIT_OK;
      case 'keygen': {
        // Loaded here, not at the top: it brings viem's accounts (86 files), which every other
        // command (the heartbeat sidecar, --version) started with and never used.
        const { keygen } = await import('./keygen.js');
        const { address } = await keygen(cmd.out, cmd.force);
        process.stdout.write(`wrote a new private key to ${cmd.out} (mode 0600); its address is ${address}\n`);
        return EXIT_OK;
      }
      case 'simulate':
        return await simulate(cmd);
      case 'check-config':
        return await checkConfig(cmd);
      case 'disarm':
        return await disarm(cmd);
      case 'run':
        return await run(cmd);
      case 'heartbeat':
        return await heartbeat(cmd);
    }
  } catch (e) {
    if (e instanceof ConfigError) {
      process.stderr.write(`${formatProblems(e.problems, (cmd as { config?: string }).config)}\n`);
      return EXIT_USAGE;
    }
    if (e instanceof UsageError) {
      const topic = cmd.name === 'help' || cmd.name === 'version' ? '' : ` (dms-keeper ${cmd.name} --help)`;
      process.stderr.write(`dms-keeper ${cmd.name}: ${e.message}${topic}\n`);
      return EXIT_USAGE;
    }
    const err = e as NodeJS.ErrnoException;
    if (cmd.name === 'keygen' && err.code === 'EEXIST') {
      // The command line asked for something the file system already holds: fix the command.
      process.stderr.write(`dms-keeper keygen: ${cmd.out} exists; refusing to overwrite a key (use --force)\n`);
      return EXIT_USAGE;
    }
    process.stderr.write(`dms-keeper ${cmd.name}: ${err.message}\n`);
    return EXIT_RUNTIME;
  }
}

// Exit explicitly: a stopped keeper must not linger on a stuck socket or a forgotten timer.
main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e: unknown) => {
    process.stderr.write(`dms-keeper: unexpected failure: ${(e as Error)?.message ?? String(e)}\n`);
    process.exit(EXIT_RUNTIME);
  },
);
