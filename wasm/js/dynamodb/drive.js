// Runs one of the core's protocol machines (wasm/src/machine.rs): sends
// each request it asks for (send.js), feeds the answers back, runs its
// CPU-heavy work, and hands back any step that moves bytes. It decides
// nothing: what to send, what to resend and when, and when the operation
// is done are the machine's.

import { dynasliceError } from '../error.js';
import { S3 } from './s3.js';
import { send } from './send.js';

export class Drive {
  /** Requests out: id -> promise of `{ id, response }`. */
  #flying = new Map();
  #cancelled = false;

  /** `s3`: the S3 client of a table whose large payloads are in S3 (the `s3` option's `client`). */
  constructor(machine, client, signal, s3) {
    this.machine = machine;
    this.client = client;
    this.signal = signal;
    this.s3 = s3;
  }

  /**
   * Does what the machine says until it finishes or asks to move bytes;
   * resolves to that step (`done`, `input`, `output` or `restart`).
   * `progress(p)` sees the machine's progress after each step. Once the
   * caller's signal fires the machine is cancelled: what it still sends
   * (deleting a failed write's chunks) goes without the signal, and the
   * operation rejects with the signal's reason.
   */
  async run(progress) {
    // Time passed while the caller moved bytes: a rest may be over.
    this.machine.wake(Date.now());
    for (;;) {
      if (this.signal?.aborted) this.cancel();
      let step;
      try {
        step = this.machine.poll();
      } catch (error) {
        throw this.#cancelled && this.signal?.aborted ? this.signal.reason : error;
      }
      progress?.(this.machine.progress());
      switch (step.kind) {
        case 'send': {
          const signal = this.#cancelled ? undefined : this.signal;
          const sent = step.service === 's3' ? send(this.s3, step, signal, S3) : send(this.client, step, signal);
          this.#flying.set(step.id, sent);
          break;
        }
        case 'work':
          this.machine.work();
          this.machine.wake(Date.now());
          break;
        case 'wait': {
          if (this.#flying.size === 0) throw dynasliceError('INTERNAL', 'a protocol machine waits with no request out');
          this.#land(await Promise.race(this.#flying.values()));
          break;
        }
        case 'sleep': {
          const landed = await this.#nextOrPause(step.ms);
          if (landed) this.#land(landed);
          else this.machine.wake(Date.now());
          break;
        }
        default:
          return step;
      }
    }
  }

  #land({ id, response }) {
    this.#flying.delete(id);
    this.machine.answer(id, response);
  }

  /**
   * The first answer to come back, or `undefined` once `ms` have passed or
   * the caller's signal fired; no timer is left behind.
   */
  async #nextOrPause(ms) {
    const signal = this.#cancelled ? undefined : this.signal;
    let timer;
    let wake;
    const pause = new Promise((resolve) => {
      wake = () => resolve(undefined);
      timer = setTimeout(wake, ms);
      signal?.addEventListener('abort', wake, { once: true });
    });
    try {
      return await Promise.race([...this.#flying.values(), pause]);
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', wake);
    }
  }

  /** Stops the machine: it cleans up what it must, then finishes. */
  cancel() {
    if (this.#cancelled) return;
    this.#cancelled = true;
    this.machine.cancel();
  }

  /** Cancels, and runs the machine through its cleanup to its end. */
  async stop() {
    this.cancel();
    await this.run().catch(() => {});
  }
}
