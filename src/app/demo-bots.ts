import type { Logger } from 'pino';
import { runHeartbeats, type HeartbeatRun, type HttpRequest } from '../heartbeat-client/heartbeat-client.js';
import type { Clock, TimerHandle } from '../time/clock.js';

/** A demo bot as the app runs it (`demo.bots[]`, durations in ms, the token read on start). */
export interface DemoBotConfig {
  accounts: string[];
  token: () => Promise<string>;
  silentAfterMs?: number;
  silentForMs?: number;
}

const HEARTBEAT_EVERY_MS = 1_000;

/**
 * The bots of `npm start` (simulator only): each heartbeats for its accounts through the keeper's
 * own listener, exactly as `dms-keeper heartbeat` or a real bot would, and one may fall silent for
 * a while (a simulated crash), so a newcomer sees its switch fire and the bot come back.
 */
export class DemoBots {
  private readonly runs = new Map<number, HeartbeatRun>();
  private readonly timers: TimerHandle[] = [];
  private stopped = false;

  constructor(
    private readonly bots: readonly DemoBotConfig[],
    private readonly deps: { clock: Clock; logger: Logger; keeperUrl: string; request?: HttpRequest },
  ) {}

  async start(): Promise<void> {
    await Promise.all(
      this.bots.map(async (bot, i) => {
        const token = await bot.token();
        const log = this.deps.logger.child({ demo_bot: i, accounts: bot.accounts });
        const begin = (): void => {
          if (this.stopped) return;
          this.runs.set(i, runHeartbeats({ url: this.deps.keeperUrl, accounts: bot.accounts, token, everyMs: HEARTBEAT_EVERY_MS, timeoutMs: 1_000, clock: this.deps.clock, ...(this.deps.request ? { request: this.deps.request } : {}), onEvent: (e) => log.debug({ event: 'demo_bot', heartbeat: e.type }, `demo bot heartbeat: ${e.type}`) }));
        };
        begin();
        log.info({ event: 'demo_bot', silent_after_seconds: bot.silentAfterMs === undefined ? null : bot.silentAfterMs / 1000 }, `demo bot heartbeating for ${bot.accounts.join(', ')}`);
        if (bot.silentAfterMs === undefined) return;
        this.timers.push(
          this.deps.clock.setTimeout(() => {
            void this.runs.get(i)?.stop();
            this.runs.delete(i);
            log.warn({ event: 'demo_bot_crash', silent_for_seconds: bot.silentForMs === undefined ? null : bot.silentForMs / 1000 }, `demo bot for ${bot.accounts.join(', ')} stops heartbeating (a simulated crash)`);
            if (bot.silentForMs === undefined) return;
            this.timers.push(
              this.deps.clock.setTimeout(() => {
                log.info({ event: 'demo_bot_back' }, `demo bot for ${bot.accounts.join(', ')} is back`);
                begin();
              }, bot.silentForMs),
            );
          }, bot.silentAfterMs),
        );
      }),
    );
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers) this.deps.clock.clearTimeout(t);
    await Promise.all([...this.runs.values()].map((r) => r.stop()));
    this.runs.clear();
  }
}
