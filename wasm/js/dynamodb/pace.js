// How many batch requests one operation keeps in flight, as the host's
// pace.rs does: additive increase, multiplicative decrease (TCP's congestion
// control), driven by DynamoDB's throttling. A table and each partition serve
// a bounded rate (AWS developer guide, "DynamoDB throttling": 1,000 WCU and
// 3,000 RCU a second per partition; a new on-demand table 4,000 and 12,000);
// past it DynamoDB refuses requests or leaves part of a batch unprocessed.
// Every answer served whole raises the limit (by one until the first throttle,
// "slow start"; then by one per limit's worth of clean answers); a throttled
// one halves it, at most once per window of requests, so that one burst of
// throttles halves it once.

/** Requests in flight at first. */
export const INITIAL_LIMIT = 4;

export class Pace {
  #limit;
  #inFlight = 0;
  #slowStart = true;
  /** Requests started so far; one started before the last decrease does not decrease again. */
  #started = 0;
  #decreasedAt = 0;
  #waiting = [];

  /** A pace that starts at `start` and never keeps more than `max` (at least 1) in flight. */
  constructor(max, start = INITIAL_LIMIT) {
    this.max = Math.max(1, max);
    this.#limit = Math.min(Math.max(1, start), this.max);
  }

  /** The requests allowed in flight now. */
  get limit() {
    return Math.floor(this.#limit);
  }

  /**
   * Resolves to a permit once a place is free: `permit.done(answer)`, where
   * `answer` is 'clean' (served whole), 'throttled' (refused for
   * throughput, or part of a batch left unprocessed) or 'other' (failed
   * for another reason: no signal about capacity), frees it.
   */
  async acquire() {
    while (this.#inFlight >= this.limit) await new Promise((resolve) => this.#waiting.push(resolve));
    this.#inFlight += 1;
    const started = ++this.#started;
    let freed = false;
    return {
      done: (answer) => {
        if (freed) return;
        freed = true;
        this.#inFlight -= 1;
        this.#answer(answer, started);
        for (const wake of this.#waiting.splice(0)) wake();
      },
    };
  }

  #answer(answer, started) {
    if (answer === 'clean') {
      this.#limit = Math.min(this.max, this.#limit + (this.#slowStart ? 1 : 1 / this.#limit));
    } else if (answer === 'throttled') {
      this.#slowStart = false;
      if (started > this.#decreasedAt) {
        this.#limit = Math.max(1, this.#limit / 2);
        this.#decreasedAt = this.#started;
      }
    }
  }
}
