/** RFC 3339 UTC with millisecond precision, as every timestamp on the wire. */
export function ts(d: Date): string {
  return d.toISOString();
}

export function tsOpt(d: Date | null | undefined): string | undefined {
  return d ? d.toISOString() : undefined;
}
