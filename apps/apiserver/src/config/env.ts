/**
 * Test and tuning knobs read from the environment (`KAPI_*`): shorter intervals and timeouts for
 * the e2e tests, never needed in operation (docs name each where it applies).
 */

/** An optional non-negative integer from the environment; anything else reads as unset. */
export function envInt(name: string): number | undefined {
  const v = process.env[name];
  return v !== undefined && /^\d+$/.test(v) ? Number(v) : undefined;
}
