/**
 * The oldest Node.js the keeper runs on. It must match `engines.node` in package.json (a test
 * compares them): undici 7 and the test tooling need 20.19, and Debian 12's own `nodejs` package
 * (18.x) is older, so a unit that runs "whatever node is installed" can meet an older one.
 *
 * This module is loaded before anything else and uses nothing newer than Node 12, so that the
 * refusal itself works on the old versions it refuses.
 */
export const MIN_NODE_VERSION = '20.19.0';

function parts(version: string): [number, number, number] {
  const m = /^v?(\d+)\.(\d+)\.(\d+)/.exec(version);
  return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : [0, 0, 0];
}

/** The one-line refusal for `version` (e.g. `process.versions.node`), or null when it is new enough. */
export function nodeVersionProblem(version: string, min: string = MIN_NODE_VERSION): string | null {
  const have = parts(version);
  const need = parts(min);
  for (let i = 0; i < 3; i++) {
    if (have[i]! > need[i]!) return null;
    if (have[i]! < need[i]!) {
      return `needs Node.js >= ${min.replace(/\.0$/, '')}, this is ${version.replace(/^v?/, 'v')} (${process.execPath}); install Node.js 20.19 or newer and point the service at it`;
    }
  }
  return null;
}
