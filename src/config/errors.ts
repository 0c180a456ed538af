/**
 * The one error type configuration loading throws. The CLI maps it to exit code 2 and prints
 * `message` (every problem on its own line); the daemon's SIGHUP path logs `problems` and keeps
 * the old config.
 *
 * Problem messages never contain key material: secret values are not echoed anywhere in this
 * module, and string values in general are described ("a string"), not quoted, because a key
 * pasted into the wrong field is still a key.
 */

export interface ConfigProblem {
  /** Where, as a YAML path (`accounts[1].master_key.file`), or the env variable's name. */
  path: string;
  message: string;
  /** 1-based line in the YAML file, when the document gives one (not for env overrides). */
  line?: number;
}

export class ConfigError extends Error {
  readonly code = 'CONFIG_INVALID' as const;
  readonly problems: readonly ConfigProblem[];
  /** The file the problems are in, when loaded from a file. */
  readonly source: string | undefined;

  constructor(problems: readonly ConfigProblem[], source?: string) {
    super(formatProblems(problems, source));
    this.name = 'ConfigError';
    this.problems = problems;
    this.source = source;
  }
}

export function formatProblem(p: ConfigProblem): string {
  return `${p.path}${p.line !== undefined ? ` (line ${p.line})` : ''}: ${p.message}`;
}

export function formatProblems(problems: readonly ConfigProblem[], source?: string): string {
  const n = problems.length;
  const head = `invalid config${source !== undefined ? ` ${source}` : ''}: ${n} problem${n === 1 ? '' : 's'}`;
  return [head, ...problems.map((p) => `  - ${formatProblem(p)}`)].join('\n');
}

/**
 * Problems in reading order: by line (then column), then in the order found; those without a line (env
 * overrides, whole-document problems) come last, still in the order found.
 */
export function sortProblems(problems: readonly ConfigProblem[], column: (p: ConfigProblem) => number = () => 0): ConfigProblem[] {
  return problems
    .map((p, i) => ({ p, i, c: column(p) }))
    .sort((a, b) => (a.p.line ?? Infinity) - (b.p.line ?? Infinity) || a.c - b.c || a.i - b.i)
    .map(({ p }) => p);
}

/** `['accounts', 1, 'master_key']` -> `accounts[1].master_key`. */
export function formatPath(segments: readonly PropertyKey[]): string {
  let out = '';
  for (const s of segments) {
    if (typeof s === 'number') out += `[${s}]`;
    else out += out === '' ? String(s) : `.${String(s)}`;
  }
  return out;
}

/**
 * A key name safe to echo in a message or a path. Someone may paste a key where a key NAME goes
 * (`master_key: { 0xabc…: x }`): long or hex-looking names are not repeated.
 */
export function shownKeyName(key: string): string {
  if (key.length > 40 || /[0-9a-fA-F]{24,}/.test(key)) return '<key name not shown>';
  return key;
}

export function safeKeyName(key: string): string {
  const shown = shownKeyName(key);
  return shown === key ? JSON.stringify(key) : shown;
}
