/**
 * Wall-clock time (epoch ms) to within `resolutionMs`, read from a field that a timer keeps
 * current while the clock is started. Reading `Date.now()` costs about 30 ns, four times
 * what the rest of recording a use costs (a map lookup), and a hot access check answered
 * from memory takes little more than a microsecond in all; last-used times need seconds,
 * not milliseconds. Stopped (as it is until started, in tests and the CLI), `now` reads
 * `Date.now()` each time. The time read may be up to `resolutionMs` (plus any event-loop
 * delay of the timer) behind, never ahead.
 */
export class CoarseClock {
  #at: number | undefined;
  #timer: ReturnType<typeof setInterval> | undefined;

  constructor(private readonly resolutionMs = 250) {}

  /** The time now, to within the resolution while started. */
  readonly now = (): number => this.#at ?? Date.now();

  /** Keep the time in a field, refreshed every `resolutionMs` (the timer keeps no process up). */
  start(): void {
    if (this.#timer !== undefined) return;
    this.#at = Date.now();
    this.#timer = setInterval(() => {
      this.#at = Date.now();
    }, this.resolutionMs);
    this.#timer.unref();
  }

  /** Back to reading `Date.now()` each time. */
  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
    this.#at = undefined;
  }
}
