/**
 * The two ways an arm or a clear reaches the venue: the service's REST trading endpoint
 * (`POST /v1/trading/orders/schedule-cancel`) or the venue's exchange endpoint. Declared here, the
 * lowest folder that needs it (the port sends by it); the plan, the switch and the metrics name it.
 */
export const ARM_ROUTES = ['rest', 'exchange'] as const;
export type ArmRoute = (typeof ARM_ROUTES)[number];

/** The route that is not `route`: where a `rest_then_exchange` arm may go instead. */
export function otherRoute(route: ArmRoute): ArmRoute {
  return route === 'rest' ? 'exchange' : 'rest';
}
