// asiocrawl's live dashboard (docs/CONTROL.md, "The dashboard"): polls the control API once a second and
// draws what it answers; the controls call the same API. No library, no inline script (the page's
// Content-Security-Policy allows only this file).
'use strict';

const tokenKey = 'asiocrawl.token';
const maxSamples = 1800; // as the server keeps (crawl_history::max_samples)
let token = sessionStorage.getItem(tokenKey) || '';
let samples = []; // [t, records, bytes, failures, 2xx, 3xx, 4xx, 5xx, none]
let connected = false;
let ended = false;
let lastStatus = null;
let stopArmed = false;
let timer = null;
let polling = false; // a poll under way
let again = false; // ... and another asked for meanwhile

const $ = (id) => document.getElementById(id);

class Unauthorized extends Error {}

async function api(method, path, body) {
  const headers = {};
  if (token) headers.Authorization = 'Bearer ' + token;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const response = await fetch(path, {
    method, headers, cache: 'no-store',
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (response.status === 401) throw new Unauthorized();
  const answer = await response.json();
  if (!response.ok) throw new Error(answer.error || response.statusText);
  return answer;
}

// The state line is announced (aria-live) when it changes, not at every poll: the time goes apart.
function setState(kind, text) {
  const state = $('state');
  state.dataset.state = kind;
  if (state.textContent !== text) state.textContent = text;
}

const integer = new Intl.NumberFormat('en');
const decimal = new Intl.NumberFormat('en', { maximumFractionDigits: 1 });

function bytes(n) {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) { n /= 1024; ++i; }
  return (i === 0 ? integer.format(n) : decimal.format(n)) + ' ' + units[i];
}

function duration(seconds) {
  const s = Math.floor(seconds);
  const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60);
  return (h ? h + 'h ' : '') + (h || m ? m + 'm ' : '') + (s % 60) + 's';
}

function cell(row, text, className) {
  const td = document.createElement('td');
  td.textContent = text;
  if (className) td.className = className;
  row.appendChild(td);
  return td;
}

function fillTable(id, items, fill, empty) {
  const body = $(id).tBodies[0];
  const rows = [];
  for (const item of items) {
    const row = document.createElement('tr');
    fill(row, item);
    rows.push(row);
  }
  if (rows.length === 0) {
    const row = document.createElement('tr');
    cell(row, empty).colSpan = $(id).tHead.rows[0].cells.length;
    rows.push(row);
  }
  body.replaceChildren(...rows);
}

function setField(name, text, value) {
  const dd = document.querySelector(`[data-field="${name}"]`);
  dd.textContent = text;
  if (value !== undefined) dd.dataset.value = String(value);
}

// Pages/s and bytes/s over the latest five seconds of samples (or what there is).
function recentRates() {
  if (samples.length < 2) return [0, 0];
  const last = samples[samples.length - 1];
  let first = samples[samples.length - 2];
  for (let i = samples.length - 2; i >= 0 && last[0] - samples[i][0] <= 5; --i) first = samples[i];
  const dt = last[0] - first[0];
  return dt > 0 ? [(last[1] - first[1]) / dt, (last[2] - first[2]) / dt] : [0, 0];
}

function svg(name, attributes, text) {
  const element = document.createElementNS('http://www.w3.org/2000/svg', name);
  for (const [key, value] of Object.entries(attributes)) element.setAttribute(key, String(value));
  if (text !== undefined) element.textContent = text;
  return element;
}

function drawChart() {
  const chart = $('rate-chart');
  const width = 960, height = 200, left = 44, bottom = 22, top = 8, right = 8;
  const points = [];
  for (let i = 1; i < samples.length; ++i) {
    const dt = samples[i][0] - samples[i - 1][0];
    if (dt > 0) points.push([samples[i][0], (samples[i][1] - samples[i - 1][1]) / dt]);
  }
  const parts = [svg('line', { class: 'axis', x1: left, y1: height - bottom, x2: width - right, y2: height - bottom }),
    svg('line', { class: 'axis', x1: left, y1: top, x2: left, y2: height - bottom })];
  let description = 'No samples yet.';
  if (points.length > 0) {
    const t0 = points[0][0], t1 = Math.max(points[points.length - 1][0], t0 + 1);
    const peak = Math.max(1, ...points.map((p) => p[1]));
    const x = (t) => left + ((t - t0) / (t1 - t0)) * (width - left - right);
    const y = (v) => height - bottom - (v / peak) * (height - bottom - top);
    const line = points.map((p) => `${x(p[0]).toFixed(1)},${y(p[1]).toFixed(1)}`).join(' ');
    parts.push(svg('polyline', { class: 'line', points: line }));
    parts.push(svg('text', { x: 2, y: top + 10 }, decimal.format(peak)));
    parts.push(svg('text', { x: 2, y: height - bottom }, '0'));
    parts.push(svg('text', { x: left, y: height - 6 }, duration(t0)));
    parts.push(svg('text', { x: width - right, y: height - 6, 'text-anchor': 'end' }, duration(t1)));
    const mean = (samples[samples.length - 1][1] - samples[0][1]) / Math.max(t1 - samples[0][0], 1e-9);
    description = `${points.length} samples from ${duration(t0)} to ${duration(t1)} of crawl time: ` +
      `peak ${decimal.format(peak)} pages/s, mean ${decimal.format(mean)} pages/s.`;
  }
  chart.replaceChildren(...parts);
  chart.dataset.points = String(points.length);
  $('rate-desc').textContent = description;
}

function hostAction(host, paused) {
  const button = document.createElement('button');
  button.type = 'button';
  button.textContent = paused ? 'Resume' : 'Pause';
  button.dataset.host = host;
  button.dataset.action = paused ? 'resume' : 'pause';
  button.setAttribute('aria-label', `${paused ? 'Resume' : 'Pause'} ${host}`);
  button.addEventListener('click', () => act(`${button.textContent} ${host}`,
    () => api('POST', `/api/hosts/${encodeURIComponent(host)}/${button.dataset.action}`)));
  return button;
}

// Fills the controls' host fields with this host's limits, for Set limits.
function limitsAction(h) {
  const button = document.createElement('button');
  button.type = 'button';
  button.textContent = 'Limits…';
  button.dataset.host = h.host;
  button.dataset.action = 'limits';
  button.setAttribute('aria-label', `Set the limits of ${h.host}`);
  button.addEventListener('click', () => {
    $('limits-host').value = h.host;
    $('limits-delay').value = `${h.delay_ms}ms`;
    $('limits-max').value = String(h.max_per_host);
    $('limits-delay').focus();
  });
  return button;
}

function renderStatus(s) {
  const [rate, byteRate] = recentRates();
  setField('records', integer.format(s.records), s.records);
  setField('rate', decimal.format(rate), rate);
  setField('byte_rate', bytes(byteRate) + '/s', byteRate);
  for (const name of ['waiting', 'in_flight', 'hosts', 'failures', 'robots_denied', 'retries'])
    setField(name, integer.format(s[name]), s[name]);
  setField('bytes', bytes(s.bytes), s.bytes);
  setField('elapsed', duration(s.elapsed_seconds), s.elapsed_seconds);

  const classes = Object.entries(s.status_classes);
  const total = classes.reduce((sum, [, n]) => sum + n, 0);
  fillTable('classes', classes, (row, [name, n]) => {
    row.dataset.class = name;
    cell(row, name);
    cell(row, integer.format(n), 'num').dataset.value = String(n);
    const bar = document.createElement('span');
    bar.className = 'bar';
    bar.style.width = `${total ? (100 * n) / total : 0}px`;
    const share = cell(row, ` ${total ? decimal.format((100 * n) / total) : 0}%`);
    share.prepend(bar);
  }, 'No records yet.');

  const kinds = Object.entries(s.failures_by_kind).sort((a, b) => b[1] - a[1]);
  fillTable('kinds', kinds, (row, [kind, n]) => {
    cell(row, kind);
    cell(row, integer.format(n), 'num');
  }, 'No failures.');

  fillTable('busiest', s.busiest_hosts, (row, h) => {
    row.dataset.host = h.host;
    cell(row, h.host);
    cell(row, integer.format(h.waiting), 'num');
    cell(row, integer.format(h.in_flight), 'num');
    cell(row, `${h.delay_ms} ms`, 'num');
    cell(row, String(h.max_per_host), 'num');
    cell(row, integer.format(h.done), 'num');
    cell(row, integer.format(h.failures), 'num');
    const state = cell(row, h.paused ? 'paused' : 'running', h.paused ? 'paused' : '');
    state.dataset.paused = String(h.paused);
    const actions = cell(row, '');
    actions.appendChild(hostAction(h.host, h.paused));
    actions.append(' ');
    actions.appendChild(limitsAction(h));
  }, 'No hosts yet.');

  fillTable('slowest', s.slowest_hosts, (row, h) => {
    cell(row, h.host);
    cell(row, integer.format(h.requests), 'num');
    cell(row, `${decimal.format(h.mean_ms)} ms`, 'num');
    cell(row, `${decimal.format(h.max_ms)} ms`, 'num');
  }, 'No requests yet.');
}

function renderErrors(e) {
  $('errors-note').textContent = e.total > e.errors.length
    ? `The latest ${e.errors.length} of ${integer.format(e.total)} errors, newest first.`
    : 'Newest first.';
  fillTable('errors', e.errors, (row, x) => {
    cell(row, duration(x.at));
    cell(row, x.url, 'url');
    cell(row, x.kind);
    cell(row, x.status ? String(x.status) : '–', 'num');
    cell(row, x.detail || '');
  }, 'No errors.');
}

// The next poll in `delay` ms, or at once after a control was used.
function schedule(delay) {
  clearTimeout(timer);
  timer = setTimeout(poll, delay);
}

async function poll() {
  if (polling) {
    again = true;
    return;
  }
  polling = true;
  let next = 1000;
  try {
    const since = samples.length ? samples[samples.length - 1][0] : -1;
    const [status, history, errors] = await Promise.all([
      api('GET', '/api/status'), api('GET', `/api/history?since=${since}`), api('GET', '/api/errors?limit=20')]);
    samples.push(...history.samples);
    if (samples.length > maxSamples) samples = samples.slice(samples.length - maxSamples);
    connected = true;
    lastStatus = status;
    $('token-form').hidden = true;
    $('main').hidden = false;
    renderStatus(status);
    renderErrors(errors);
    drawChart();
    if (status.waiting === 0 && status.in_flight === 0 && status.records > 0)
      setState('idle', 'Nothing waiting or in flight: the crawl is finishing.');
    else
      setState('running', 'Running.');
    $('updated').textContent = `Updated ${new Date().toLocaleTimeString()}.`;
  } catch (error) {
    if (error instanceof Unauthorized) {
      $('main').hidden = true;
      $('token-form').hidden = false;
      $('token-error').textContent = token ? 'That token was refused.' : '';
      setState('token', 'A token is needed.');
      $('token').focus();
      next = null; // polling resumes when a token is given
    } else if (connected && error instanceof TypeError) {
      // The listener is gone: the crawl has ended. Keep what was shown last.
      ended = true;
      const records = lastStatus ? ` after ${integer.format(lastStatus.records)} records` : '';
      setState('ended', `The crawl has ended${records} (the listener closed at ${new Date().toLocaleTimeString()}).`);
      for (const button of document.querySelectorAll('main button')) button.disabled = true;
      next = null;
    } else {
      setState('error', `Cannot reach the crawl: ${error.message}`);
    }
  }
  polling = false;
  if (next !== null && !ended) schedule(again ? 0 : next);
  again = false;
}

async function act(what, call) {
  const result = $('control-result');
  try {
    const answer = await call();
    result.dataset.ok = 'true';
    result.textContent = `${what}: ${JSON.stringify(answer)}`;
  } catch (error) {
    result.dataset.ok = 'false';
    result.textContent = `${what}: ${error instanceof Unauthorized ? 'token refused' : error.message}`;
  }
  if (!ended) schedule(0); // show what the call changed
}

function hostField() {
  return $('limits-host').value.trim().toLowerCase();
}

function setup() {
  $('token-form').addEventListener('submit', (event) => {
    event.preventDefault();
    token = $('token').value.trim();
    sessionStorage.setItem(tokenKey, token);
    $('token').value = '';
    schedule(0);
  });
  $('limits-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const body = {};
    const delay = $('limits-delay').value.trim();
    if (delay) body.delay = /^[0-9.]+$/.test(delay) ? Number(delay) : delay;
    if ($('limits-max').value) body.max_per_host = Number($('limits-max').value);
    const host = hostField();
    act(`Limits for ${host}`, () => api('PUT', `/api/hosts/${encodeURIComponent(host)}`, body));
  });
  $('pause-host').addEventListener('click', () => {
    const host = hostField();
    if (host) act(`Pause ${host}`, () => api('POST', `/api/hosts/${encodeURIComponent(host)}/pause`));
  });
  $('resume-host').addEventListener('click', () => {
    const host = hostField();
    if (host) act(`Resume ${host}`, () => api('POST', `/api/hosts/${encodeURIComponent(host)}/resume`));
  });
  $('seeds-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const urls = $('seeds').value.split('\n').map((u) => u.trim()).filter((u) => u);
    if (urls.length) act('Seeds', () => api('POST', '/api/seeds', { urls }));
  });
  // Two presses: the first asks, the second stops (no modal dialog).
  $('stop').addEventListener('click', () => {
    if (!stopArmed) {
      stopArmed = true;
      $('stop').textContent = 'Press again to stop: nothing new starts, fetches in flight finish';
      return;
    }
    stopArmed = false;
    $('stop').textContent = 'Stop the crawl';
    act('Stop', () => api('POST', '/api/stop'));
  });
  poll();
}

setup();
