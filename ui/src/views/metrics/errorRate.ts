/**
 * Failures among the runs that ran, in percent to one decimal (a denial or a pending approval
 * is not an error); `null` when nothing ran.
 */
export function errorRate(calls: number, failed: number, denied: number): number | null {
  const ran = calls - denied;
  return ran > 0 ? Math.round((failed / ran) * 1000) / 10 : null;
}
