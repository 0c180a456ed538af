import { describe, expect, it } from 'vitest';
import { parseCommand, UsageError } from './args.js';

describe('parseCommand', () => {
  it.each([
    [['--config', 'a.yaml'], { name: 'run', config: 'a.yaml' }],
    [['run', '-c', 'a.yaml'], { name: 'run', config: 'a.yaml' }],
    [['check-config', '--config', 'a.yaml'], { name: 'check-config', config: 'a.yaml' }],
    [['disarm', '--config', 'a.yaml', '--account', 'mm-main'], { name: 'disarm', config: 'a.yaml', account: 'mm-main' }],
    [['disarm', '--config', 'a.yaml'], { name: 'disarm', config: 'a.yaml' }],
    [['keygen', '--out', 'k'], { name: 'keygen', out: 'k', force: false }],
    [['keygen', '--out', 'k', '--force'], { name: 'keygen', out: 'k', force: true }],
    [['simulate'], { name: 'simulate', port: 8080, host: '127.0.0.1', profile: 'strict', budget: 'ip_window' }],
    [['simulate', '--budget', 'signed_window_100_per_5s'], { name: 'simulate', port: 8080, host: '127.0.0.1', profile: 'strict', budget: 'signed_window_100_per_5s' }],
    [['simulate', '--profile', 'random:7'], { name: 'simulate', port: 8080, host: '127.0.0.1', profile: 'random:7', budget: 'ip_window' }],
    [['simulate', '--port', '0'], { name: 'simulate', port: 0, host: '127.0.0.1', profile: 'strict', budget: 'ip_window' }],
    [['--help'], { name: 'help' }],
    [['run', '--help'], { name: 'help', topic: 'run' }],
    [['help', 'disarm'], { name: 'help', topic: 'disarm' }],
    [['--version'], { name: 'version' }],
  ])('%j', (argv, want) => {
    expect(parseCommand(argv)).toEqual(want);
  });

  it.each([
    [['frobnicate'], /unknown command 'frobnicate'/],
    [['run'], /needs --config/],
    [[], /needs --config/],
    [['keygen'], /needs --out/],
    [['simulate', '--port', 'abc'], /--port must be an integer/],
    [['simulate', '--profile', 'weird'], /unknown simulator profile 'weird'/],
    [['simulate', '--budget', 'lavish'], /unknown simulator budget 'lavish'/],
    [['simulate', '--port', '70000'], /--port must be an integer/],
    [['run', '--config', 'a', '--out', 'x'], /--out does not apply to 'run'/],
    [['run', '--config', 'a', 'extra'], /unexpected argument 'extra'/],
    [['run', '--bogus'], /bogus/],
  ])('%j is a usage error', (argv, msg) => {
    expect(() => parseCommand(argv)).toThrow(UsageError);
    expect(() => parseCommand(argv)).toThrow(msg);
  });
});
