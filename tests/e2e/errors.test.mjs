// The page shows errors as sentences a person understands, never a stack
// trace, and keeps working after each: the next good action succeeds.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { errorShown, launch, loadSample, openPage } from './support/browser.mjs';
import { listedKeys, startServer } from './support/server.mjs';

const MB = 1 << 20;
const PREFIX = 'team-';
// Room for the 1 MB samples, not for 5 MB ones.
const MAX_ITEM_BYTES = 3_000_000;

/** A sentence: starts with a capital, ends with a period, no code or stack trace in sight. */
function assertSentence(text) {
  assert.ok(text, 'an error is shown');
  assert.match(text, /^[A-Z“]/, text);
  assert.match(text, /[.?]$/, text);
  assert.doesNotMatch(text, /\n|\bat \S+:\d+|Error:|undefined|\[object /, text);
}

test('errors are sentences and the page keeps working after them', async (t) => {
  const server = await startServer(['--key-prefix', PREFIX, '--max-item-bytes', String(MAX_ITEM_BYTES)]);
  const browser = await launch();
  try {
    const page = await openPage(browser, server);
    assert.equal(await page.inputValue('#key'), `${PREFIX}orders-2026`, 'the default key respects the server\'s scope');

    await t.test('invalid JSON, then a good pasted item', async () => {
      await page.fill('#paste', '{"pk": {"S": "x"}, "total": ');
      await page.click('#use-paste');
      const text = await errorShown(page);
      assertSentence(text);
      assert.match(text, /^The pasted text is not valid JSON/);
      assert.equal(await page.getAttribute('#error', 'data-code'), 'JSON_INVALID');

      // Plain JSON, chosen explicitly: uploaded, read back whole, verified.
      await page.check('#format-plain');
      await page.fill('#key', `${PREFIX}plain-1`);
      await page.fill('#paste', JSON.stringify({ customer: 'Zoë', total: 12.5, tags: ['a', 'b'], nested: { ok: true, none: null } }));
      await page.click('#use-paste');
      assert.equal(await errorShown(page), null, 'a good action clears the message');
      await page.waitForSelector('#plan[data-state="ready"]');
      await page.click('#upload');
      await page.waitForSelector('#verify[data-state="verified"]', { timeout: 60_000 });
      assert.match(await page.textContent('#verify'), /^verified/);
    });

    await t.test('an item DynamoDB would refuse: every problem with its path, no plan', async () => {
      await page.check('#format-dynamodb');
      await page.fill('#paste', JSON.stringify({ tags: { SS: [] }, deep: { M: { n: { N: '1e200' } } } }));
      await page.click('#use-paste');
      await page.waitForSelector('#plan[data-state="error"]');
      const problems = await page.$$eval('[data-testid="problem"]', (lis) => lis.map((li) => `${li.dataset.code} ${li.dataset.path}`).sort());
      assert.deepEqual(problems, ['NUMBER_OUT_OF_RANGE deep.n', 'SET_EMPTY tags']);
      assert.ok(await page.isDisabled('#upload'));
      assertSentence((await page.textContent('#plan')).replace(/^No plan: /, ''));
    });

    await t.test('a key outside the server\'s scope, then the same item in scope', async () => {
      await page.fill('#key', 'elsewhere-1');
      assert.match(await page.textContent('#key-hint'), /refuse/);
      await loadSample(page, MB);
      await page.click('#upload');
      await page.waitForSelector('#error:not([hidden])');
      const text = await errorShown(page);
      assertSentence(text);
      assert.equal(await page.getAttribute('#error', 'data-code'), 'KEY_OUT_OF_SCOPE');
      assert.ok(text.includes(`“${PREFIX}”`), text);
      assert.equal((await page.textContent('#upload-status')).trim(), 'Nothing was stored.');

      await page.fill('#key', `${PREFIX}orders-1`);
      // The key change alone makes a new plan (the sample stays chosen).
      await page.waitForSelector('#plan[data-state="ready"]');
      await page.click('#upload');
      await page.waitForSelector('#verify[data-state="verified"]', { timeout: 60_000 });
      assert.equal(await errorShown(page), null);
      assert.deepEqual(await listedKeys(server), [`${PREFIX}orders-1`, `${PREFIX}plain-1`].map((pk) => JSON.stringify({ pk: { S: pk } })));
    });

    await t.test('items over the server\'s limits: sentences, then a good upload', async () => {
      await page.fill('#key', `${PREFIX}too-big`);
      await page.selectOption('#codec', 'none');
      await loadSample(page, 5 * MB);
      assert.deepEqual(await page.$$eval('[data-testid="problem"]', (lis) => lis.map((li) => li.dataset.code)), ['ITEM_TOO_LARGE', 'SERVER_LIMIT'], 'the page warns before sending');
      // Uncompressed, the body is over the server's body limit.
      await page.click('#upload');
      await page.waitForSelector('#error:not([hidden])');
      assert.equal(await page.getAttribute('#error', 'data-code'), 'BODY_TOO_LARGE');
      assertSentence(await errorShown(page));
      // Compressed, the body is small but the item is still over the limit.
      await page.selectOption('#codec', 'auto');
      await page.waitForSelector('#plan[data-state="ready"][data-codec="deflate"]');
      await page.click('#upload');
      await page.waitForSelector('#error:not([hidden])');
      assert.equal(await page.getAttribute('#error', 'data-code'), 'VIRTUAL_ITEM_TOO_LARGE');
      const text = await errorShown(page);
      assertSentence(text);
      assert.ok(text.includes('3,000,000 bytes'), text);
      assert.deepEqual(await listedKeys(server), [`${PREFIX}orders-1`, `${PREFIX}plain-1`].map((pk) => JSON.stringify({ pk: { S: pk } })));

      await page.fill('#key', `${PREFIX}orders-2`);
      await loadSample(page, MB);
      await page.click('#upload');
      await page.waitForSelector('#verify[data-state="verified"]', { timeout: 60_000 });
      assert.equal(await errorShown(page), null);
    });

    await t.test('the server gone: a sentence, not a failure', async () => {
      await server.stop();
      await page.click('#refresh');
      await page.waitForSelector('#error:not([hidden])');
      const text = await errorShown(page);
      assertSentence(text);
      assert.match(text, /cannot reach the dynaslice server/);
    });
    assert.deepEqual(page.problems.filter((p) => !p.includes('Failed to load resource') && !p.includes('ERR_CONNECTION_REFUSED')), []);
  } finally {
    await browser.close();
    await server.stop();
  }
});

test('without this launch\'s key the page says which link to open, and sends nothing without one', async () => {
  const server = await startServer();
  const browser = await launch();
  try {
    const apiCalls = (page) => {
      const seen = [];
      page.on('request', (request) => {
        if (new URL(request.url()).pathname.startsWith('/api/')) seen.push(`${request.method()} ${request.headers()['x-dynaslice-token'] ?? '(no token)'}`);
      });
      return seen;
    };
    const sentenceShown = 'Open the link `npm start` printed (it carries this launch’s key); this page cannot reach the server’s data without it.';

    // No token at all: the sentence, and no request reaches the API.
    const bare = await browser.newPage();
    const bareCalls = apiCalls(bare);
    await bare.goto(`${server.url}/`);
    await bare.waitForSelector('body[data-state="failed"]', { timeout: 30_000 });
    assert.equal(await errorShown(bare), sentenceShown);
    assertSentence(await errorShown(bare));
    assert.equal(await bare.getAttribute('#error', 'data-code'), 'TOKEN_REQUIRED');
    assert.deepEqual(bareCalls, [], 'nothing is sent without a token');

    // An old launch's token: the server answers 401 TOKEN_INVALID, the page the same sentence.
    const stale = await browser.newPage();
    const staleCalls = apiCalls(stale);
    const oldToken = 'A'.repeat(43);
    assert.notEqual(oldToken, server.token);
    await stale.goto(`${server.url}/#token=${oldToken}`);
    await stale.waitForSelector('body[data-state="failed"]', { timeout: 30_000 });
    assert.equal(await errorShown(stale), sentenceShown);
    assert.equal(await stale.getAttribute('#error', 'data-code'), 'TOKEN_INVALID');
    assert.deepEqual(staleCalls, [`GET ${oldToken}`], 'one call, carrying the token from the link');
    assert.equal(stale.url(), `${server.url}/`, 'even a wrong token leaves the address bar');

    // The right link in the same tab: the newer token replaces the stored one.
    await stale.goto(`${server.url}/#token=${server.token}`);
    await stale.reload();
    await stale.waitForSelector('body[data-state="ready"]', { timeout: 30_000 });
    assert.equal(await errorShown(stale), null);
    assert.ok(staleCalls.slice(1).every((call) => call.endsWith(` ${server.token}`)), staleCalls.join('\n'));
  } finally {
    await browser.close();
    await server.stop();
  }
});
