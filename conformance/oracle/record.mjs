#!/usr/bin/env node
// Conformance oracle: runs chartgate case files through real XState v5 and
// records the snapshots it produces.
//
//   node record.mjs [--check] PATH...   PATH = a case file or a directory (recursive, *.json)
//   node record.mjs --serve             one case JSON per stdin line -> one filled case per stdout line
//
// The case format (v1 and v2) is described in docs/conformance-case-format.md,
// and what this recorder does with each key in README.md next to this file. The modules: json.mjs (JSON helpers),
// declarative.mjs (conditions, expressions, declared xstate.* actions),
// actors.mjs (machines and promise/callback/machine actors), clock.mjs (the
// simulated and event-loop clocks), run.mjs (running one case).

import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { isPlainObject, deepEqual, ORDERED, parseOrdered, toOrdered, stringifyOrdered } from './json.mjs';
import { runCase, errorMessage } from './run.mjs';

const KEY_ORDER = [
  'name',
  'description',
  'clock',
  'input',
  'machine',
  'guards',
  'actions',
  'delays',
  'actors',
  'snapshot',
  'steps',
  'expected',
  'expectedError'
];

// Builds the ordered tree of the filled case: the case's own keys keep their
// authored order inside, top-level keys follow KEY_ORDER, unknown keys go last.
function fillCase(orderedCase, result, name) {
  const top = new Map(orderedCase[ORDERED]);
  top.delete('expectedError');
  top.set('expected', toOrdered(result.expected));
  if (result.expectedError !== undefined) top.set('expectedError', result.expectedError);
  if (name !== undefined) top.set('name', name);
  const entries = [];
  for (const k of KEY_ORDER) if (top.has(k)) entries.push([k, top.get(k)]);
  for (const [k, v] of top) if (!KEY_ORDER.includes(k)) entries.push([k, v]);
  return { [ORDERED]: entries };
}

// The case name is the file's path under the last `cases/` directory, without `.json`.
function nameFromPath(file) {
  const parts = path.resolve(file).split(path.sep);
  const i = parts.lastIndexOf('cases');
  if (i < 0 || i === parts.length - 1) return undefined;
  return parts.slice(i + 1).join('/').replace(/\.json$/, '');
}

function listCaseFiles(p) {
  const st = fs.statSync(p);
  if (st.isFile()) return [p];
  const out = [];
  for (const ent of fs.readdirSync(p, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const full = path.join(p, ent.name);
    if (ent.isDirectory()) out.push(...listCaseFiles(full));
    else if (ent.isFile() && ent.name.endsWith('.json')) out.push(full);
  }
  return out;
}

// ---------------------------------------------------------------------------
// Modes

async function recordFiles(paths, check) {
  const files = paths.flatMap(listCaseFiles);
  let failed = 0;
  let changed = 0;
  for (const file of files) {
    let kase;
    let ordered;
    try {
      const text = fs.readFileSync(file, 'utf8');
      kase = JSON.parse(text);
      ordered = parseOrdered(text);
      if (!isPlainObject(kase)) throw new Error('a case must be a JSON object');
    } catch (err) {
      console.error(`${file}: cannot read case: ${errorMessage(err)}`);
      failed++;
      continue;
    }
    let result;
    try {
      result = await runCase(kase);
    } catch (err) {
      console.error(`${file}: cannot run case: ${errorMessage(err)}`);
      failed++;
      continue;
    }
    const name = nameFromPath(file) ?? kase.name;
    if (check) {
      const problems = [];
      if (!deepEqual(kase.expected, result.expected)) problems.push('expected');
      if ((kase.expectedError ?? null) !== (result.expectedError ?? null)) problems.push('expectedError');
      if (name !== undefined && kase.name !== name) problems.push(`name (want ${JSON.stringify(name)})`);
      if (problems.length > 0) {
        console.log(`${file}: differs from XState: ${problems.join(', ')}`);
        changed++;
      }
    } else {
      const text = stringifyOrdered(fillCase(ordered, result, name)) + '\n';
      if (fs.readFileSync(file, 'utf8') !== text) {
        fs.writeFileSync(file, text);
        changed++;
      }
    }
  }
  if (check) {
    console.log(`checked ${files.length} case(s): ${changed} differ, ${failed} failed to run`);
    return changed > 0 || failed > 0 ? 1 : 0;
  }
  console.log(`recorded ${files.length} case(s): ${changed} rewritten, ${failed} failed to run`);
  return failed > 0 ? 1 : 0;
}

// In --serve mode machines come from a random generator, so a machine that
// loops forever must not hang the server: past this many microsteps in one
// macrostep the case records XState's "Infinite loop detected" error.
const SERVE_MAX_ITERATIONS = 1000;

async function serve() {
  const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  for await (const line of rl) {
    if (line.trim() === '') continue;
    let out;
    try {
      const kase = JSON.parse(line);
      const ordered = parseOrdered(line);
      if (!isPlainObject(kase)) throw new Error('a case must be a JSON object');
      try {
        out = stringifyOrdered(fillCase(ordered, await runCase(kase, { maxIterations: SERVE_MAX_ITERATIONS })), 0);
      } catch (err) {
        // The case could not be built or run (e.g. createMachine threw).
        const entries = ordered[ORDERED].filter(([k]) => k !== 'oracleError');
        entries.push(['oracleError', errorMessage(err)]);
        out = stringifyOrdered({ [ORDERED]: entries }, 0);
      }
    } catch (err) {
      out = JSON.stringify({ oracleError: `invalid case JSON: ${errorMessage(err)}` });
    }
    process.stdout.write(out + '\n');
  }
}

function usage() {
  console.error('usage: node record.mjs [--check] PATH...\n       node record.mjs --serve');
  return 2;
}

async function main(argv) {
  if (argv.includes('--serve')) {
    if (argv.length !== 1) return usage();
    await serve();
    return 0;
  }
  const check = argv.includes('--check');
  const paths = argv.filter((a) => a !== '--check');
  if (paths.length === 0 || paths.some((p) => p.startsWith('--'))) return usage();
  for (const p of paths) {
    if (!fs.existsSync(p)) {
      console.error(`${p}: no such file or directory`);
      return 2;
    }
  }
  return await recordFiles(paths, check);
}

process.exitCode = await main(process.argv.slice(2));
