#!/usr/bin/env node
// rdq testee "node-files": a file-backed envelope store speaking the testee
// protocol, version 1 (spec: testee-protocol.md). Plain Node.js 20, no npm
// dependencies. Run by the kit as:
//
//   pytest --rdq-plugin=stdio --rdq-testee "node plugins_example/node/testee.js"
//
// Requests arrive on stdin, one JSON object per line; exactly one response per
// request goes to stdout. The testee claims `concurrent` (rule C18): requests
// are handled with asynchronous file I/O as they arrive and each is answered
// when it is done, so answers may come in another order than the requests
// (the kit matches them by seq). stdout carries nothing else: the log goes to
// stderr. See README.md beside this file.
'use strict';

const fsp = require('fs/promises');
const path = require('path');

const NAME = 'node-files';
const VERSION = '1.0.0';
const PROTOCOL = 1;
const NAMESPACE_RE = /^[a-z][a-z0-9_]{0,39}$/; // C14
const MAX_DEPTH = 1000; // nesting guard for the recursive reader and writer

function log(message) {
  process.stderr.write(`[${NAME}] ${message}\n`);
}

// ---------------------------------------------------------------------------
// Lossless JSON.
//
// JSON.parse turns every number into a double, so 9223372036854775807 comes
// back as 9223372036854775808 (C5), and it silently keeps the last of two
// duplicate keys (C11). This reader keeps each number as its source text
// (JsonNumber), objects as Maps in source order, and refuses duplicate keys,
// lone surrogates and anything that is not JSON. The writer prints the number
// text back verbatim, so every integer and every double survives exactly.
// ---------------------------------------------------------------------------

class JsonNumber {
  constructor(text) {
    this.text = text;
  }
}

class JsonSyntaxError extends Error {}

const NUMBER_RE = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;

function parseJson(text) {
  let i = 0;
  const n = text.length;

  function fail(what) {
    throw new JsonSyntaxError(`${what} at offset ${i}`);
  }

  function skipWs() {
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) i++;
      else break;
    }
  }

  function parseString() {
    // text[i] is the opening quote. Find the closing quote (one not preceded
    // by an odd number of backslashes), then let JSON.parse decode the
    // escapes of that one token: it also refuses raw control characters.
    let j = i + 1;
    for (;;) {
      j = text.indexOf('"', j);
      if (j < 0) fail('unterminated string');
      let k = j - 1;
      while (text.charCodeAt(k) === 0x5c) k--;
      if ((j - 1 - k) % 2 === 0) break;
      j++;
    }
    let s;
    try {
      s = JSON.parse(text.slice(i, j + 1));
    } catch (e) {
      fail(`invalid string (${e.message})`);
    }
    if (!s.isWellFormed()) fail('string with a lone surrogate (C4)');
    i = j + 1;
    return s;
  }

  function parseValue(depth) {
    if (depth > MAX_DEPTH) fail('nesting deeper than ' + MAX_DEPTH);
    skipWs();
    if (i >= n) fail('unexpected end of input');
    const c = text[i];
    if (c === '{') {
      i++;
      const map = new Map();
      skipWs();
      if (text[i] === '}') {
        i++;
        return map;
      }
      for (;;) {
        skipWs();
        if (text[i] !== '"') fail('expected a string key');
        const key = parseString();
        if (map.has(key)) fail(`duplicate key ${JSON.stringify(key)} (C11)`);
        skipWs();
        if (text[i] !== ':') fail("expected ':'");
        i++;
        map.set(key, parseValue(depth + 1));
        skipWs();
        if (text[i] === ',') {
          i++;
        } else if (text[i] === '}') {
          i++;
          return map;
        } else {
          fail("expected ',' or '}'");
        }
      }
    }
    if (c === '[') {
      i++;
      const list = [];
      skipWs();
      if (text[i] === ']') {
        i++;
        return list;
      }
      for (;;) {
        list.push(parseValue(depth + 1));
        skipWs();
        if (text[i] === ',') {
          i++;
        } else if (text[i] === ']') {
          i++;
          return list;
        } else {
          fail("expected ',' or ']'");
        }
      }
    }
    if (c === '"') return parseString();
    if (text.startsWith('true', i)) {
      i += 4;
      return true;
    }
    if (text.startsWith('false', i)) {
      i += 5;
      return false;
    }
    if (text.startsWith('null', i)) {
      i += 4;
      return null;
    }
    NUMBER_RE.lastIndex = i;
    const m = NUMBER_RE.exec(text);
    if (m) {
      i += m[0].length;
      return new JsonNumber(m[0]);
    }
    fail(`unexpected character ${JSON.stringify(c)}`);
  }

  const value = parseValue(0);
  skipWs();
  if (i !== n) fail('trailing characters after the JSON value');
  return value;
}

// Compact JSON text: no raw newline can appear (JSON.stringify escapes
// control characters, U+0000 included, and keeps astral characters whole),
// so the result is always one protocol line.
function toJson(value, depth = 0) {
  if (depth > MAX_DEPTH) throw new Error('nesting deeper than ' + MAX_DEPTH);
  if (value === null) return 'null';
  if (value === true) return 'true';
  if (value === false) return 'false';
  if (typeof value === 'string') return JSON.stringify(value);
  if (value instanceof JsonNumber) return value.text;
  if (Array.isArray(value)) return '[' + value.map((v) => toJson(v, depth + 1)).join(',') + ']';
  if (value instanceof Map) {
    const parts = [];
    for (const [k, v] of value) parts.push(JSON.stringify(k) + ':' + toJson(v, depth + 1));
    return '{' + parts.join(',') + '}';
  }
  throw new Error(`not a JSON value: ${typeof value}`);
}

// ---------------------------------------------------------------------------
// Storage: one file per envelope, <state>/node-files/<namespace>/<hex id>.json.
// A namespace is a directory, so drop removes exactly one namespace (C14).
// Files are replaced atomically (write a temporary file, then rename), so a
// write replaces wholly (C13) and a crash never leaves half an envelope.
// ---------------------------------------------------------------------------

const STATE_DIR = process.env.RDQ_STATE_DIR || path.join(process.cwd(), '.rdq', 'node-testee');
const ROOT = path.join(STATE_DIR, NAME);
let tmpCounter = 0;

class RequestError extends Error {
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}

function namespaceDir(req) {
  const ns = req.get('namespace');
  if (typeof ns !== 'string' || !NAMESPACE_RE.test(ns)) {
    throw new RequestError(
      'INVALID_ENVELOPE',
      `namespace=${toJsonSafe(ns)} is not a valid namespace: expected ${NAMESPACE_RE.source} (C14)`,
    );
  }
  return path.join(ROOT, ns);
}

function envelopeFile(dir, id) {
  // Hex of the UTF-8 id: any string is a safe, case-preserving file name.
  return path.join(dir, Buffer.from(id, 'utf8').toString('hex') + '.json');
}

function toJsonSafe(value) {
  try {
    return value === undefined ? 'undefined' : toJson(value);
  } catch {
    return String(value);
  }
}

async function writeAtomically(dir, file, data) {
  // C18: the envelope goes to a temporary file of its own, then rename()
  // replaces the old file in one step, so a concurrent read opens either the
  // whole old file or the whole new one. A concurrent drop (another testee
  // process) may remove the directory between mkdir and rename: try again a
  // few times.
  for (let tries = 0; ; tries++) {
    const tmp = path.join(dir, `.tmp-${process.pid}-${tmpCounter++}`);
    try {
      await fsp.mkdir(dir, { recursive: true });
      await fsp.writeFile(tmp, data);
      await fsp.rename(tmp, file);
      return;
    } catch (e) {
      try {
        await fsp.rm(tmp, { force: true });
      } catch {
        // the directory went away with it
      }
      if (e.code !== 'ENOENT' || tries >= 3) throw e;
    }
  }
}

// ---------------------------------------------------------------------------
// Requests
// ---------------------------------------------------------------------------

function opHello(req) {
  const protocol = req.get('protocol');
  if (protocol !== undefined && !(protocol instanceof JsonNumber && protocol.text === String(PROTOCOL))) {
    throw new RequestError('NOT_SUPPORTED', `protocol=${toJsonSafe(protocol)} is not supported: this testee speaks protocol ${PROTOCOL}`);
  }
  return `"name":${JSON.stringify(NAME)},"version":${JSON.stringify(VERSION)},"envelope_versions":[1],"capabilities":["durable","concurrent"]`;
}

async function opWrite(req) {
  const dir = namespaceDir(req);
  const env = req.get('envelope');
  if (!(env instanceof Map)) {
    throw new RequestError('INVALID_ENVELOPE', `envelope=${toJsonSafe(env)} is not a JSON object`);
  }
  const version = env.get('envelope_version');
  if (!(version instanceof JsonNumber)) {
    throw new RequestError('INVALID_ENVELOPE', `envelope_version=${toJsonSafe(version)} is not a number`);
  }
  // C16: only version 1 is stored; 1.0 is the same number as 1 (C5).
  if (!/^1(?:\.0+)?$/.test(version.text)) {
    throw new RequestError(
      'UNSUPPORTED_ENVELOPE_VERSION',
      `envelope_version=${version.text} is not supported: this testee stores version 1`,
    );
  }
  const id = env.get('id');
  if (typeof id !== 'string' || id.length === 0) {
    throw new RequestError('INVALID_ENVELOPE', `id=${toJsonSafe(id)} is not a non-empty string`);
  }
  // Everything else, unknown fields included, is stored as received (C10).
  await writeAtomically(dir, envelopeFile(dir, id), toJson(env));
  return '';
}

async function opRead(req) {
  const dir = namespaceDir(req);
  const id = req.get('id');
  if (typeof id !== 'string') {
    throw new RequestError('INVALID_ENVELOPE', `id=${toJsonSafe(id)} is not a string`);
  }
  let text;
  try {
    text = await fsp.readFile(envelopeFile(dir, id), 'utf8');
  } catch (e) {
    if (e.code === 'ENOENT') return '"envelope":null';
    throw e;
  }
  // Re-read losslessly, so a damaged file becomes an INTERNAL error instead of
  // a broken protocol line; the stored text itself is what goes back.
  try {
    parseJson(text);
  } catch (e) {
    throw new RequestError('INTERNAL', `stored envelope id=${JSON.stringify(id)} is damaged: ${e.message}`);
  }
  return `"envelope":${text}`;
}

async function opDrop(req) {
  await fsp.rm(namespaceDir(req), { recursive: true, force: true });
  return '';
}

const OPS = { hello: opHello, write: opWrite, read: opRead, drop: opDrop };

function response(seqText, ok, rest) {
  return `{"seq":${seqText},"ok":${ok}${rest ? ',' + rest : ''}}\n`;
}

function failure(seqText, code, message) {
  return response(seqText, false, `"error":{"code":${JSON.stringify(code)},"message":${JSON.stringify(message)}}`);
}

// The seq of a request our strict reader refused (say, a duplicate key inside
// the envelope), recovered with the lenient JSON.parse so the answer still
// matches its request; null when even that fails.
function looseSeq(text) {
  try {
    const seq = JSON.parse(text).seq;
    if (Number.isSafeInteger(seq)) return String(seq);
  } catch {
    // not JSON at all
  }
  return 'null';
}

// Resolves to [responseLine, exitAfter].
async function handleLine(bytes) {
  let req;
  let text = null;
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
    req = parseJson(text);
  } catch (e) {
    log(`malformed request: ${e.message}`);
    return [failure(looseSeq(text), 'INVALID_ENVELOPE', `request is not valid JSON: ${e.message}`), false];
  }
  if (!(req instanceof Map)) {
    return [failure('null', 'INVALID_ENVELOPE', 'request is not a JSON object'), false];
  }
  const seq = req.get('seq');
  const seqText = seq instanceof JsonNumber ? seq.text : 'null';
  if (!(seq instanceof JsonNumber) || !/^-?[0-9]+$/.test(seq.text)) {
    return [failure(seqText, 'INVALID_ENVELOPE', `seq=${toJsonSafe(seq)} is not an integer`), false];
  }
  const op = req.get('op');
  if (op === 'bye') return [response(seqText, true, ''), true];
  const handler = typeof op === 'string' && Object.hasOwn(OPS, op) ? OPS[op] : null;
  if (handler === null) {
    return [failure(seqText, 'NOT_SUPPORTED', `op=${toJsonSafe(op)} is not supported: expected one of hello, write, read, drop, bye`), false];
  }
  try {
    return [response(seqText, true, await handler(req)), false];
  } catch (e) {
    if (e instanceof RequestError) {
      log(`${op} seq=${seqText}: ${e.code}: ${e.message}`);
      return [failure(seqText, e.code, e.message), false];
    }
    log(`${op} seq=${seqText} failed: ${e && e.stack ? e.stack : e}`);
    return [failure(seqText, 'INTERNAL', `${op} failed: ${e && e.message ? e.message : e}`), false];
  }
}

// ---------------------------------------------------------------------------
// Framing: split stdin on '\n' bytes (not on '\r' or U+2028 as readline
// might), answer each line when its work is done, exit 0 after bye or at the
// end of input once every request in flight has been answered.
// ---------------------------------------------------------------------------

let pending = [];
let finished = false;

function finish() {
  if (finished) return;
  finished = true;
  process.stdin.pause();
  // The callback runs once the last response is handed to the OS.
  process.stdout.write('', () => process.exit(0));
}

let inFlight = 0;
let ended = false;

function answer(lineBytes) {
  inFlight++;
  handleLine(lineBytes).then(([line, exitAfter]) => {
    inFlight--;
    process.stdout.write(line);
    if (exitAfter || (ended && inFlight === 0)) finish();
  });
}

process.stdin.on('data', (chunk) => {
  let start = 0;
  let nl;
  while (!finished && (nl = chunk.indexOf(0x0a, start)) !== -1) {
    pending.push(chunk.subarray(start, nl));
    const lineBytes = pending.length === 1 ? pending[0] : Buffer.concat(pending);
    pending = [];
    start = nl + 1;
    if (lineBytes.length > 0) answer(lineBytes);
  }
  if (!finished && start < chunk.length) pending.push(chunk.subarray(start));
});

process.stdin.on('end', () => {
  if (!finished && pending.length > 0) {
    const lineBytes = Buffer.concat(pending);
    pending = [];
    if (lineBytes.length > 0) answer(lineBytes);
  }
  ended = true;
  if (inFlight === 0) finish();
});

process.stdout.on('error', (e) => {
  // The kit went away (EPIPE): nobody is listening any more.
  log(`stdout: ${e.message}`);
  process.exit(0);
});

log(`ready, protocol ${PROTOCOL}, state in ${ROOT}`);
