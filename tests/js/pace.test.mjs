// The driver's pace (wasm/js/dynamodb/pace.js): the same additive increase
// and multiplicative decrease as the host's pace.rs, with the same numbers
// as its unit test, and never more requests in flight than the limit.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { INITIAL_LIMIT, Pace } from '../../wasm/js/dynamodb/pace.js';

test('grows while clean and halves once per burst of throttles', async () => {
  const pace = new Pace(32);
  assert.equal(pace.limit, INITIAL_LIMIT);
  // Slow start: one more per clean answer.
  for (let i = 0; i < 6; i++) (await pace.acquire()).done('clean');
  assert.equal(pace.limit, 10);
  // Three requests in flight together are all throttled: one halving.
  const burst = [await pace.acquire(), await pace.acquire(), await pace.acquire()];
  for (const permit of burst) permit.done('throttled');
  assert.equal(pace.limit, 5);
  // A request started after the decrease halves again.
  (await pace.acquire()).done('throttled');
  assert.equal(pace.limit, 2);
  // Then additive: 1/limit per clean answer, so two answers at 2 make 3.
  for (let i = 0; i < 2; i++) (await pace.acquire()).done('clean');
  assert.equal(pace.limit, 3);
  // Other failures say nothing about capacity.
  (await pace.acquire()).done('other');
  assert.equal(pace.limit, 3);
  // Never below 1, never above max; a permit frees its place once.
  for (let i = 0; i < 10; i++) (await pace.acquire()).done('throttled');
  assert.equal(pace.limit, 1);
  const small = new Pace(2);
  for (let i = 0; i < 10; i++) (await small.acquire()).done('clean');
  assert.equal(small.limit, 2);
  assert.equal(new Pace(16, 0).limit, 1);
});

test('never more in flight than the limit, and every place used', async () => {
  const pace = new Pace(3);
  let now = 0;
  let most = 0;
  await Promise.all(
    Array.from({ length: 40 }, async () => {
      const permit = await pace.acquire();
      now += 1;
      most = Math.max(most, now);
      await new Promise((resolve) => setTimeout(resolve, 2));
      now -= 1;
      permit.done('clean');
    }),
  );
  // The limit starts at min(4, 3) and never exceeds max.
  assert.equal(most, 3);
});

test('a throttle lets no waiter in until the places in flight drop below the new limit', async () => {
  const pace = new Pace(8);
  const held = await Promise.all([0, 1, 2, 3].map(() => pace.acquire()));
  let entered = 0;
  const waiter = pace.acquire().then((permit) => {
    entered += 1;
    return permit;
  });
  held[0].done('throttled'); // limit 4 -> 2, 3 still in flight
  await new Promise((resolve) => setTimeout(resolve, 5));
  assert.equal(entered, 0);
  held[1].done('clean'); // 2 in flight: still full
  await new Promise((resolve) => setTimeout(resolve, 5));
  assert.equal(entered, 0);
  held[2].done('other'); // 1 in flight: a place is free
  (await waiter).done('clean');
  assert.equal(entered, 1);
  held[3].done('clean');
});
