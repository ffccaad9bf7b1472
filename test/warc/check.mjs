// Reads WARC files with webrecorder's warcio.js, an implementation independent of asiocrawl's writer, and
// checks them against what the test server served.
// Usage: node check.mjs EXPECTED.json FILE.warc[.gz]...
// EXPECTED.json: {"exchanges": [{"url": ..., "payload_base64": ..., "type": "response"|"revisit",
//                                "truncated": bool, "profile": "server-not-modified" | "identical-payload-digest"
//                                (revisits; optional), "status": N (optional)}]}, in the order they were archived.
// A server-not-modified revisit (a 304) has no payload: it carries no WARC-Payload-Digest, and its payload_base64
// is the earlier capture's.
// Exits 0 and prints "ok ..." when every check passes; prints each failure and exits 1 otherwise.
import { createHash } from "node:crypto";
import { createReadStream, readFileSync } from "node:fs";
import { AsyncIterReader, WARCParser } from "warcio";

const failures = [];
const fail = (message) => failures.push(message);

function base32(bytes) {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
  let bits = 0;
  let value = 0;
  let out = "";
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += alphabet[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += alphabet[(value << (5 - bits)) & 31];
  return out;
}

const sha1 = (bytes) => "sha1:" + base32(createHash("sha1").update(bytes).digest());

async function readAll(iterable) {
  const chunks = [];
  for await (const chunk of iterable) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks);
}

// Pass 1 reads blocks raw (no HTTP parsing) for the block digests; pass 2 lets warcio parse the HTTP
// messages and removes the chunked transfer coding with its own reader, for the payload digests.
async function readFile(path, parseHttp) {
  const records = [];
  const parser = new WARCParser(createReadStream(path), { parseHttp });
  for await (const record of parser) {
    const headers = Object.fromEntries(record.warcHeaders.headers.entries());
    const entry = { path, headers, type: record.warcType };
    if (parseHttp) {
      entry.httpHeaders = record.httpHeaders;
      if (record.httpHeaders) {
        const te = record.httpHeaders.headers.get("Transfer-Encoding") || "";
        const chunked = te.toLowerCase().split(",").pop().trim() === "chunked";
        entry.payload = await readAll(chunked ? new AsyncIterReader(record.reader, null, true) : record.reader);
      } else {
        entry.payload = await record.readFully(false);
      }
    } else {
      entry.block = Buffer.from(await record.readFully(false));
    }
    records.push(entry);
  }
  return records;
}

const expected = JSON.parse(readFileSync(process.argv[2], "utf8")).exchanges;
const files = process.argv.slice(3);
if (files.length === 0) fail("no WARC files given");

const raw = [];
const parsed = [];
for (const file of files) {
  const blocks = await readFile(file, false);
  const messages = await readFile(file, true);
  if (blocks.length !== messages.length) fail(`${file}: the two passes saw different record counts`);
  if (blocks.length === 0 || blocks[0].type !== "warcinfo") fail(`${file}: does not start with warcinfo`);
  raw.push(...blocks);
  parsed.push(...messages);
}

const idPattern = /^<urn:uuid:[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}>$/;
const datePattern = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/;
const ids = new Set();
for (const [i, record] of raw.entries()) {
  const h = record.headers;
  const where = `${record.path} record ${i} (${record.type})`;
  if (!idPattern.test(h["warc-record-id"] || "")) fail(`${where}: bad WARC-Record-ID ${h["warc-record-id"]}`);
  if (ids.has(h["warc-record-id"])) fail(`${where}: duplicate WARC-Record-ID`);
  ids.add(h["warc-record-id"]);
  if (!datePattern.test(h["warc-date"] || "")) fail(`${where}: bad WARC-Date ${h["warc-date"]}`);
  if (Number(h["content-length"]) !== record.block.length) fail(`${where}: Content-Length mismatch`);
  if (record.type === "warcinfo") continue;
  if (h["warc-block-digest"] !== sha1(record.block))
    fail(`${where}: block digest ${h["warc-block-digest"]} != ${sha1(record.block)}`);
  if (!h["warc-target-uri"]) fail(`${where}: no WARC-Target-URI`);
  if (h["warc-ip-address"] !== "127.0.0.1") fail(`${where}: WARC-IP-Address ${h["warc-ip-address"]}`);
}

// Responses and revisits, and the requests that point at them.
const byId = new Map();
const captures = [];
for (const record of parsed) {
  if (record.type === "response" || record.type === "revisit") {
    byId.set(record.headers["warc-record-id"], record);
    captures.push(record);
  }
}
const paired = new Map();
for (const record of parsed) {
  if (record.type !== "request") continue;
  const target = byId.get(record.headers["warc-concurrent-to"]);
  if (!target) {
    fail(`request for ${record.headers["warc-target-uri"]}: WARC-Concurrent-To names no response`);
    continue;
  }
  if (paired.has(target)) fail(`two requests for one response of ${target.headers["warc-target-uri"]}`);
  paired.set(target, record);
  if (record.headers["warc-target-uri"] !== target.headers["warc-target-uri"])
    fail(`request/response URIs differ: ${record.headers["warc-target-uri"]}`);
  if (!record.httpHeaders || record.httpHeaders.method !== "GET")
    fail(`request for ${record.headers["warc-target-uri"]} is not a parsed GET`);
  if (record.headers["content-type"] !== "application/http;msgtype=request")
    fail(`request for ${record.headers["warc-target-uri"]}: Content-Type ${record.headers["content-type"]}`);
}

if (captures.length !== expected.length)
  fail(`${captures.length} responses/revisits archived, ${expected.length} expected`);
let revisits = 0;
for (const [i, want] of expected.entries()) {
  const got = captures[i];
  if (!got) break;
  const h = got.headers;
  const uri = h["warc-target-uri"];
  if (uri !== want.url) fail(`capture ${i}: URI ${uri}, expected ${want.url}`);
  if (got.type !== want.type) fail(`${uri}: type ${got.type}, expected ${want.type}`);
  if (!paired.has(got)) fail(`${uri}: no request record points at it`);
  if (!got.httpHeaders) fail(`${uri}: warcio found no HTTP response head`);
  const payload = Buffer.from(want.payload_base64, "base64");
  const notModified = got.type === "revisit" && (h["warc-profile"] || "").endsWith("/revisit/server-not-modified");
  if (want.profile && h["warc-profile"] !== `http://netpreserve.org/warc/1.1/revisit/${want.profile}`)
    fail(`${uri}: WARC-Profile ${h["warc-profile"]}, expected ${want.profile}`);
  if (want.status && got.httpHeaders && Number(got.httpHeaders.statusCode) !== want.status)
    fail(`${uri}: HTTP status ${got.httpHeaders.statusCode}, expected ${want.status}`);
  if (notModified) {
    if (h["warc-payload-digest"] !== undefined) fail(`${uri}: a server-not-modified revisit with a payload digest`);
  } else if (h["warc-payload-digest"] !== sha1(payload))
    fail(`${uri}: payload digest is not that of the served body`);
  if (Boolean(h["warc-truncated"]) !== Boolean(want.truncated)) fail(`${uri}: WARC-Truncated ${h["warc-truncated"]}`);
  if (got.type === "response") {
    if (!got.payload.equals(payload))
      fail(`${uri}: archived payload (${got.payload.length} bytes) differs from the served body (${payload.length})`);
    if (h["warc-payload-digest"] !== sha1(got.payload)) fail(`${uri}: payload digest mismatch`);
  } else {
    ++revisits;
    const original = byId.get(h["warc-refers-to"]);
    if (!original) fail(`${uri}: WARC-Refers-To names no earlier record`);
    else {
      if (notModified) {
        if (original.headers["warc-payload-digest"] !== sha1(payload))
          fail(`${uri}: the record it refers to does not hold the expected payload`);
      } else if (original.headers["warc-payload-digest"] !== h["warc-payload-digest"])
        fail(`${uri}: revisit digest differs from the record it refers to`);
      if (h["warc-refers-to-target-uri"] !== original.headers["warc-target-uri"])
        fail(`${uri}: WARC-Refers-To-Target-URI mismatch`);
      if (h["warc-refers-to-date"] !== original.headers["warc-date"]) fail(`${uri}: WARC-Refers-To-Date mismatch`);
    }
    if (got.payload.length !== 0) fail(`${uri}: a revisit carries a payload`);
  }
}

if (failures.length > 0) {
  for (const message of failures) console.error("FAIL " + message);
  process.exit(1);
}
console.log(`ok ${raw.length} records in ${files.length} file(s), ${captures.length} captures, ${revisits} revisits`);
