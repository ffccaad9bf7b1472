// Prints every record of WARC files as read by webrecorder's warcio.js, one JSON object a line: its WARC
// headers, and the HTTP status line when the block is an HTTP message. For tests that check fields.
// Usage: node dump.mjs FILE.warc[.gz]...
import { createReadStream } from "node:fs";
import { WARCParser } from "warcio";

for (const path of process.argv.slice(2)) {
  const parser = new WARCParser(createReadStream(path), { parseHttp: true });
  for await (const record of parser) {
    const headers = Object.fromEntries(record.warcHeaders.headers.entries());
    const entry = { file: path, type: record.warcType, headers };
    if (record.httpHeaders) entry.http_status = record.httpHeaders.statusCode;
    await record.readFully(false);
    process.stdout.write(JSON.stringify(entry) + "\n");
  }
}
