// TOTP time without waiting for a step's end: the daemon under test runs in this process and reads
// Date.now for the TOTP step (daemon/modules/auth/totp.ts), so a test pins this process's clock 1 s into
// a step of its choosing and makes its codes for that step, or the one either side (the daemon's window).
import { authenticator } from 'otplib';

const STEP_MS = 30_000;

export class TotpClock {
  private readonly realNow = Date.now;
  private pinnedStep: number | undefined;

  /**
   * The step the clock is pinned to: the real one when it was first pinned (not when it was made: a clock
   * made at a file's load and pinned minutes later would date what the daemon stores, e.g. a sign-in
   * challenge's expiry, minutes into the past, while PostgreSQL and `new Date()` read the real time).
   */
  get step(): number {
    this.pinnedStep ??= Math.floor(this.realNow() / STEP_MS);
    return this.pinnedStep;
  }

  /**
   * Sets this process's clock 1 s into `this.step`, running on at the real rate from there: whatever
   * follows has 29 s before the daemon sees the next step. Pin again before each command that takes a
   * code when a test runs longer than that (it may set the clock back by what has run since).
   */
  pin(): void {
    const from = this.realNow();
    const at = this.step * STEP_MS + 1_000;
    Date.now = () => at + (this.realNow() - from);
  }

  /** The code of `secret` for the step `offset` steps from the pinned one (-1, 0 and 1 are in the window). */
  code(secret: string, offset: number): string {
    return authenticator.clone({ epoch: (this.step + offset) * STEP_MS + 1_000 }).generate(secret);
  }

  restore(): void {
    Date.now = this.realNow;
  }
}
