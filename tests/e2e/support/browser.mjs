// Debian's headless Chromium, driven by playwright-core, with the flags that
// keep it quiet on a closed network (TOOLCHAIN.md, "Browsers").
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { root } from './server.mjs';

export const CHROMIUM = '/usr/bin/chromium';
export const artifacts = join(root, 'tests', 'e2e', 'artifacts');

/**
 * A launched browser; close it when done.
 * @param {string[]} [extraArgs] more Chromium flags (`--host-resolver-rules=…`)
 */
export async function launch(extraArgs = []) {
  assert.ok(existsSync(CHROMIUM), `${CHROMIUM} is missing: apt-get install -y chromium chromium-driver`);
  mkdirSync(artifacts, { recursive: true });
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', ...extraArgs],
  });
}

/**
 * A new page at `${url}/#token=${token}` (the link `npm start` prints),
 * resolved once the page's body says `state` ("ready" unless asked).
 * Console errors, uncaught page errors and Content-Security-Policy
 * violations are collected in `page.problems`.
 * @param {import('playwright-core').Browser} browser
 * @param {{ url: string, token: string | null }} server `token: null` opens the page without one
 * @param {{ state?: string }} [options]
 */
export async function openPage(browser, { url, token }, { state = 'ready' } = {}) {
  const page = await browser.newPage({ viewport: { width: 1200, height: 1000 } });
  page.problems = [];
  page.on('pageerror', (error) => page.problems.push(`pageerror: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error') page.problems.push(`console: ${message.text()}`);
  });
  // A blocked inline style or script is not always a console error: the
  // violation event names each one.
  await page.exposeFunction('reportPolicyViolation', (text) => page.problems.push(`csp: ${text}`));
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (event) => {
      window.reportPolicyViolation(`${event.effectiveDirective} blocked ${event.blockedURI || 'inline'} at ${event.sourceFile}:${event.lineNumber}`);
    });
  });
  await page.goto(token === null ? `${url}/` : `${url}/#token=${token}`);
  await page.waitForSelector(`body[data-state="${state}"]`, { timeout: 30_000 });
  return page;
}

/** Chooses a generated sample of `bytes` and waits for its plan. */
export async function loadSample(page, bytes, key) {
  if (key !== undefined) await page.fill('#key', key);
  await page.selectOption('#sample-size', String(bytes));
  await page.click('#load-sample');
  await page.waitForSelector('#plan[data-state="ready"]', { timeout: 120_000 });
}

/** The text the page shows in the error banner, or null when none is shown. */
export async function errorShown(page) {
  return (await page.isVisible('#error')) ? (await page.textContent('#error-text')).trim() : null;
}
