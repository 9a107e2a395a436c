/**
 * Failures among the runs that ran, in percent to one decimal (a denial or a pending approval
 * is not an error); `null` when nothing ran.
 */
export function errorRate(calls: number, failed: number, denied: number): number | null {
  const ran = calls - denied;
  return ran > 0 ? Math.round((failed / ran) * 1000) / 10 : null;
}

/** A rate as the views write it: `12.5 %`, or `–` when nothing ran. */
export function formatRate(rate: number | null): string {
  return rate == null ? "–" : `${rate.toFixed(1)} %`;
}
