// Replays a WACZ for real: serves a directory holding replayweb.page's ui.js and replay/sw.js, an index.html
// that embeds <replay-web-page source="site.wacz" url="...">, and the WACZ, on 127.0.0.1 (a secure context,
// as service workers need), opens it in headless Chromium and checks that the archived page renders with
// its text and that a link inside it leads to another archived page, inside the archive.
// Usage: node replay-check.mjs --dir DIR --url ARCHIVED_URL --text TEXT --link LINK_TEXT --link-text TEXT
//        [--chromium /usr/bin/chromium] [--timeout-ms 90000]
// Prints one line per step; exits 0 when every check passed, 1 otherwise.
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import puppeteer from 'puppeteer-core';

const args = {};
for (let i = 2; i < process.argv.length; i += 2) args[process.argv[i].replace(/^--/, '')] = process.argv[i + 1];
for (const required of ['dir', 'url', 'text', 'link', 'link-text']) {
  if (!args[required]) {
    console.error(`replay-check: --${required} is required`);
    process.exit(2);
  }
}
const timeoutMs = Number(args['timeout-ms'] || 90000);
const chromium = args.chromium || '/usr/bin/chromium';
const root = path.resolve(args.dir);

const types = {'.html': 'text/html', '.js': 'application/javascript', '.json': 'application/json',
               '.wacz': 'application/wacz+zip'};

// A static server with byte ranges: replayweb.page reads a WACZ's index and records by Range requests.
let requests = 0;
const server = http.createServer((req, res) => {
  ++requests;
  const name = decodeURIComponent(new URL(req.url, 'http://x').pathname);
  const file = path.join(root, name.endsWith('/') ? name + 'index.html' : name);
  if (!file.startsWith(root) || !fs.existsSync(file) || !fs.statSync(file).isFile()) {
    res.writeHead(404).end();
    return;
  }
  const size = fs.statSync(file).size;
  const headers = {'Content-Type': types[path.extname(file)] || 'application/octet-stream', 'Accept-Ranges': 'bytes',
                   'Cache-Control': 'no-store'};
  const range = /^bytes=(\d*)-(\d*)$/.exec(req.headers.range || '');
  if (range && (range[1] !== '' || range[2] !== '')) {
    let start = range[1] === '' ? size - Number(range[2]) : Number(range[1]);
    let end = range[1] === '' || range[2] === '' ? size - 1 : Math.min(Number(range[2]), size - 1);
    if (start < 0) start = 0;
    if (start > end || start >= size) {
      res.writeHead(416, {'Content-Range': `bytes */${size}`}).end();
      return;
    }
    res.writeHead(206, {...headers, 'Content-Range': `bytes ${start}-${end}/${size}`, 'Content-Length': end - start + 1});
    if (req.method === 'HEAD') return res.end();
    fs.createReadStream(file, {start, end}).pipe(res);
    return;
  }
  res.writeHead(200, {...headers, 'Content-Length': size});
  if (req.method === 'HEAD') return res.end();
  fs.createReadStream(file).pipe(res);
});
await new Promise(resolve => server.listen(0, '127.0.0.1', resolve));
const origin = `http://127.0.0.1:${server.address().port}`;
console.log(`replay-check: serving ${root} on ${origin}`);

const deadline = Date.now() + timeoutMs;
let failed = false;
let browser;

// The frame that shows `url` replayed (replayweb.page's ".../w/<collection>/<timestamp>mp_/<url>"), whose
// body text holds `text`.
async function replayedFrame(page, url, text) {
  let last = '';
  while (Date.now() < deadline) {
    for (const frame of page.frames()) {
      if (!frame.url().startsWith(origin + '/') || !frame.url().includes('mp_/' + url)) continue;
      try {
        const body = await frame.evaluate(() => document.body ? document.body.innerText : '');
        if (body.includes(text)) return frame;
        last = `${frame.url()}: ${body.slice(0, 200)}`;
      } catch (e) {
        last = `${frame.url()}: ${e.message}`; // navigating
      }
    }
    await new Promise(r => setTimeout(r, 250));
  }
  throw new Error(`no frame replays ${url} with "${text}" (last seen: ${last || page.frames().map(f => f.url()).join(' ')})`);
}

try {
  browser = await puppeteer.launch({
    executablePath: chromium,
    headless: true,
    args: ['--no-sandbox', '--disable-dev-shm-usage', '--no-first-run', '--no-default-browser-check'],
  });
  const page = await browser.newPage();
  const offsite = [];
  page.on('request', r => { if (!r.url().startsWith(origin) && !r.url().startsWith('data:') && !r.url().startsWith('blob:')) offsite.push(r.url()); });
  await page.goto(`${origin}/index.html`, {waitUntil: 'load'});
  const frame = await replayedFrame(page, args.url, args.text);
  console.log(`replay-check: ok: ${args.url} renders from the archive with "${args.text}" (${frame.url()})`);

  // A link of the archived page: rewritten into the archive, and followed there.
  const href = await frame.evaluate(label => {
    const a = [...document.querySelectorAll('a')].find(e => e.textContent.trim() === label);
    return a ? a.href : null;
  }, args.link);
  if (!href) throw new Error(`no link "${args.link}" in the replayed page`);
  // wombat.js (replay's client side) shows a link's original URL to the page's scripts; the navigation it
  // makes must stay inside the archive: a replay URL on the loopback server (the live site is gone).
  const target = href.includes('mp_/') ? href.slice(href.indexOf('mp_/') + 4) : href;
  await frame.evaluate(label => {
    [...document.querySelectorAll('a')].find(e => e.textContent.trim() === label).click();
  }, args.link);
  const next = await replayedFrame(page, target, args['link-text']);
  console.log(`replay-check: ok: link "${args.link}" resolves inside the archive to ${target} with "${args['link-text']}" (${next.url()})`);
  // Everything came from the loopback server: the live site is gone by now, and nothing else was asked.
  const outside = offsite.filter(u => !u.startsWith('chrome'));
  if (outside.length) console.log(`replay-check: note: requests beyond ${origin} from the top page: ${outside.slice(0, 5).join(' ')}`);
  console.log(`replay-check: ${requests} requests served`);
} catch (e) {
  failed = true;
  console.log(`replay-check: FAILED: ${e.message}`);
} finally {
  if (browser) await browser.close().catch(() => {});
  server.close();
}
process.exit(failed ? 1 : 0);
