// Time as the store tells it (the host's clock.rs, in JavaScript).
//
// `gc` judges an unreferenced chunk's age by the time inside its version id.
// A writer whose clock runs behind by more than gc's grace period would
// write chunks that a gc elsewhere deletes before the commit makes them
// referenced. So the driver reads the `Date` header of the store's answers
// and stamps version ids in the store's time.

import { dynasliceError } from '../error.js';

/** Larger offsets than this are refused rather than corrected (the host's MAX_CLOCK_SKEW_MS). */
const MAX_CLOCK_SKEW_MS = 24 * 3600 * 1000;

/** The store's clock: the local clock plus the offset the last `Date` header showed. */
export class StoreClock {
  #offsetMs = undefined;

  /** Records a response's `Date` header, seen now by the local clock. */
  observe(date) {
    const serverMs = Date.parse(date);
    if (typeof date !== 'string' || Number.isNaN(serverMs)) return;
    const local = Date.now();
    // The header has whole seconds: the server's second began at serverMs
    // and ended before serverMs + 1000; a clock inside that window is right.
    if (local < serverMs) this.#offsetMs = serverMs - local;
    else if (local > serverMs + 1000) this.#offsetMs = serverMs + 1000 - local;
    else this.#offsetMs = 0;
  }

  /** The store's time in Unix milliseconds (the local clock before any answer was seen). */
  nowMs() {
    const offset = this.#offsetMs ?? 0;
    if (Math.abs(offset) > MAX_CLOCK_SKEW_MS) {
      throw dynasliceError('CLOCK_SKEW', `this machine's clock differs from the store's by ${Math.round(offset / 1000)} s, more than can be trusted`);
    }
    return Date.now() + offset;
  }
}

/** A middleware that shows each answer's `Date` header to `clock`, added to one command only. */
export function observeDate(command, clock) {
  command.middlewareStack.add(
    (next) => async (args) => {
      const result = await next(args);
      clock.observe(result.response?.headers?.date);
      return result;
    },
    { step: 'deserialize', name: 'dynasliceStoreClock', override: true },
  );
  return command;
}
