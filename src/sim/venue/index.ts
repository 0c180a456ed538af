/** The simulated venue's account-side state and rules (no HTTP). */
export { VenueState, type VenueStateOptions, type AddressBudget, type ActionLogEntry } from './state.js';
export type { ClosedOrder, ClosedOrderStatus } from './accounts.js';
export { SeedError } from './accounts.js';
export { VENUE_TEXTS, scheduledCancelNotification } from './texts.js';
export { demoAccountSeeds, demoMasterKey, DEMO_ACCOUNTS } from './demo.js';
