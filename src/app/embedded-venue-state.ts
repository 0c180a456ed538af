import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * The state directory of a keeper on its embedded venue simulator (`venue.simulator: true`, the
 * demo): `<state_dir>/embedded-venue/`.
 *
 * Everything the keeper keeps in its state directory describes the venue it talks to: the agents
 * that venue approved, the requests it was sent (the start-up pacing), the cancels it fired. An
 * embedded venue lives and dies with the keeper's process, so the next start meets a new venue
 * that knows none of it: stored agents are unknown signers there, and pacing around requests it
 * never saw only slows the start. Its state is therefore scoped to it, and emptied when a new
 * embedded venue starts. Only this subdirectory: the rest of `state_dir` (the demo's credentials
 * in `state/demo-credentials/`, say) is not the venue's. A keeper on a real venue never comes here
 * and keeps its state directory exactly as it is.
 */
export const EMBEDDED_VENUE_STATE = 'embedded-venue';

/** Empties (creates) the embedded venue's state directory under `stateDir` and returns its path. */
export async function freshEmbeddedVenueState(stateDir: string): Promise<string> {
  const dir = join(stateDir, EMBEDDED_VENUE_STATE);
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true, mode: 0o700 });
  return dir;
}
