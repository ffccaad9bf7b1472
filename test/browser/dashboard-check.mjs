// The live dashboard in a real browser (headless Chromium, Debian's) against a running crawl: the page asks
// for the token, shows the numbers /api/status answers, pauses and resumes a host with its buttons (checked
// through the API), and shows the crawl ended after its Stop button. No console error once the token is in.
// Screenshots go to --shots DIR on failure (and the last one on success too).
// Usage: node dashboard-check.mjs --url http://127.0.0.1:PORT/ --token TOKEN --host HOST --site SITE_ROOT
//        --failing URL --shots DIR      (--failing: a root of the crawl that fails to connect)
// Run by scripts/dashboard-check.sh, which starts the demo site and the crawl.
import puppeteer from 'puppeteer-core';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';

const args = Object.fromEntries(
  process.argv.slice(2).reduce((pairs, arg, i, all) => (arg.startsWith('--') ? [...pairs, [arg.slice(2), all[i + 1]]] : pairs), []));
const base = args.url;
const token = args.token;
const host = args.host;
const shots = args.shots || 'dashboard-shots';
const chromium = process.env.CHROMIUM || '/usr/bin/chromium';
const timeout = 20000; // every wait is bounded

async function api(method, path) {
  const response = await fetch(new URL(path, base), { method, headers: { Authorization: `Bearer ${token}` } });
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status}`);
  return response.json();
}

async function until(what, test) {
  const deadline = Date.now() + timeout;
  for (;;) {
    const value = await test();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

const hostOf = async () => (await api('GET', '/api/hosts')).hosts.find((h) => h.host === host);

const browser = await puppeteer.launch({
  executablePath: chromium,
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run'],
});
let page;
let step = 'start';
const problems = [];
let tokenGiven = false;
let stopped = false;
try {
  page = await browser.newPage();
  await page.setViewport({ width: 1280, height: 1600 });
  page.on('console', (message) => {
    // Chromium logs a failed load as a console error. Two are expected: the 401 before the token is given,
    // and the refused connections once Stop has ended the crawl and its listener (the page then says so).
    const text = message.text();
    const expected = (!tokenGiven && text.includes('401')) || (stopped && text.includes('ERR_CONNECTION_REFUSED'));
    if (message.type() === 'error' && !expected)
      problems.push(`console: ${text} ${JSON.stringify(message.location())}`);
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));

  step = 'the page asks for the token';
  const response = await page.goto(base, { waitUntil: 'load', timeout });
  if (!response.ok()) throw new Error(`GET /: ${response.status()}`);
  const policy = response.headers()['content-security-policy'] || '';
  if (!policy.includes("script-src 'self'")) throw new Error(`no Content-Security-Policy: ${policy}`);
  await page.waitForSelector('#token-form:not([hidden])', { timeout });
  await page.type('#token', token);
  tokenGiven = true;
  await page.keyboard.press('Enter'); // the keyboard submits the form

  step = 'the numbers come';
  await page.waitForSelector('#main:not([hidden])', { timeout });
  const stored = await page.evaluate(() => sessionStorage.getItem('asiocrawl.token'));
  if (stored !== token) throw new Error('the token is not in sessionStorage');
  const formShown = await page.$eval('#token-form', (e) => getComputedStyle(e).display !== 'none');
  if (formShown) throw new Error('the token form is still shown');
  await until('records', async () => (await api('GET', '/api/status')).records >= 3);
  const row = `#busiest tr[data-host="${host}"]`;
  await page.waitForSelector(`${row} button[data-action="pause"]`, { timeout });

  step = 'a seed through the page';
  // A page of the demo site nothing links to: admitted through the crawl's scope rules.
  const seed = new URL('/dashboard-check-seed', args.site).href;
  await page.type('#seeds', seed);
  await page.click('#seeds-form button[type="submit"]');
  await page.waitForFunction(() => document.querySelector('#control-result').textContent.startsWith('Seeds:'),
    { timeout });
  const seedResult = await page.$eval('#control-result', (e) => e.textContent);
  if (!seedResult.includes('"admitted":1')) throw new Error(`the seed was not admitted: ${seedResult}`);

  step = 'the failing root in the error panels';
  // The crawl's second root is on a port nothing listens on: its failure is listed with its kind.
  const failing = args.failing;
  await until('the root to fail', async () => (await api('GET', '/api/errors')).errors.some((e) => e.url === failing));
  await page.waitForFunction((url) => [...document.querySelectorAll('#errors tbody td')].some((td) => td.textContent === url),
    { timeout }, failing);

  step = 'pause through the page';
  await page.click(`${row} button[data-action="pause"]`);
  await until(`${host} paused (API)`, async () => (await hostOf())?.paused === true);
  await page.waitForSelector(`${row} td[data-paused="true"]`, { timeout });
  await until('nothing in flight', async () => (await api('GET', '/api/status')).in_flight === 0);

  step = 'the page shows what /api/status says';
  // Paused with nothing in flight, the counters hold still: the page's next poll must show them exactly.
  const status = await api('GET', '/api/status');
  const fields = ['records', 'waiting', 'in_flight', 'hosts', 'failures', 'bytes'];
  const shown = await until('the page to catch up', async () => {
    const values = await page.evaluate((names) => Object.fromEntries(names.map((n) =>
      [n, Number(document.querySelector(`[data-field="${n}"]`).dataset.value)])), fields);
    return fields.every((n) => values[n] === status[n]) ? values : null;
  }).catch(async (error) => {
    const values = await page.evaluate((names) => names.map((n) =>
      `${n}=${document.querySelector(`[data-field="${n}"]`).dataset.value}`).join(' '), fields);
    throw new Error(`${error.message}: the page shows ${values}, /api/status ${JSON.stringify(status)}`);
  });
  const text = await page.$eval('[data-field="records"]', (e) => e.textContent);
  if (Number(text.replace(/,/g, '')) !== status.records) throw new Error(`records shown as "${text}"`);
  const classes = await page.$$eval('#classes tbody tr', (rows) =>
    Object.fromEntries(rows.map((r) => [r.dataset.class, Number(r.cells[1].dataset.value)])));
  const classSum = Object.values(classes).reduce((a, b) => a + b, 0);
  if (classSum !== status.records || classes['2xx'] !== status.status_classes['2xx'])
    throw new Error(`status classes ${JSON.stringify(classes)} against ${JSON.stringify(status.status_classes)}`);
  await until('a curve', async () => Number(await page.$eval('#rate-chart', (e) => e.dataset.points)) >= 2);
  const slowest = await page.$$eval('#slowest tbody tr', (rows) => rows.map((r) => r.cells[0].textContent));
  if (!slowest.includes(host)) throw new Error(`slowest hosts: ${slowest}`);
  const kinds = await page.$$eval('#kinds tbody tr', (rows) =>
    Object.fromEntries(rows.map((r) => [r.cells[0].textContent, Number(r.cells[1].textContent.replace(/,/g, ''))])));
  if (JSON.stringify(kinds) !== JSON.stringify(Object.fromEntries(Object.entries(status.failures_by_kind).sort((a, b) => b[1] - a[1]))))
    throw new Error(`failures by kind ${JSON.stringify(kinds)} against ${JSON.stringify(status.failures_by_kind)}`);
  console.log(`dashboard-check: the page shows ${JSON.stringify(shown)} as /api/status does; ` +
    `classes ${JSON.stringify(classes)}, failures by kind ${JSON.stringify(kinds)}`);

  step = 'limits through the page';
  await page.click(`${row} button[data-action="limits"]`);
  const filled = await page.$eval('#limits-host', (e) => e.value);
  if (filled !== host) throw new Error(`Limits… filled in "${filled}"`);
  // The delay field has the focus: the keyboard replaces its value and submits the form.
  await page.keyboard.down('Control');
  await page.keyboard.press('KeyA');
  await page.keyboard.up('Control');
  await page.keyboard.type('200ms');
  await page.keyboard.press('Enter');
  await until(`${host}'s delay set (API)`, async () => (await hostOf())?.delay_ms === 200);
  await page.waitForSelector(`${row} td:nth-child(4)`, { timeout });
  await page.waitForFunction((selector) => document.querySelector(selector)?.textContent === '200 ms',
    { timeout }, `${row} td:nth-child(4)`);

  step = 'resume through the page';
  await page.click(`${row} button[data-action="resume"]`);
  await until(`${host} resumed (API)`, async () => (await hostOf())?.paused === false);
  await until('the crawl to go on', async () => (await api('GET', '/api/status')).records > status.records);

  step = 'stop through the page';
  await page.click('#stop'); // asks
  stopped = true;
  await page.click('#stop'); // stops
  await page.waitForSelector('#state[data-state="ended"]', { timeout: 30000 });
  const ended = await page.$eval('#state', (e) => e.textContent);
  console.log(`dashboard-check: after Stop the page says: ${ended}`);
  if (problems.length) throw new Error(problems.join('\n'));
  mkdirSync(shots, { recursive: true });
  await page.screenshot({ path: join(shots, 'dashboard-ended.png'), fullPage: true });
  console.log('dashboard-check: ok');
} catch (error) {
  console.error(`dashboard-check: FAILED at "${step}": ${error.message}`);
  for (const p of problems) console.error(`  ${p}`);
  if (page) {
    mkdirSync(shots, { recursive: true });
    const file = join(shots, `dashboard-failed-${step.replace(/[^a-z]+/gi, '-')}.png`);
    await page.screenshot({ path: file, fullPage: true }).catch(() => {});
    console.error(`dashboard-check: screenshot in ${file}`);
  }
  process.exitCode = 1;
} finally {
  await browser.close();
}
