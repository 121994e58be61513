// client.mjs drives chartgate serve, run with a workflow in front of MCP's
// reference filesystem server, with the MCP TypeScript SDK's client, as a
// host would: the tool it lists (with their output schemas), a refused call
// it can read, a transition, then the call allowed.
//
//	node client.mjs ROOT COMMAND [ARG...]
//
// ROOT is the directory the filesystem server serves; COMMAND runs
// chartgate serve. It exits 0 when every expectation holds, 1 with a
// message otherwise. TestServeTypeScriptClient (../../serve_tsclient_test.go)
// runs it.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const META_KEY = 'chartgate/mcpbind';
const [root, command, ...args] = process.argv.slice(2);
if (!command) {
	process.stderr.write('usage: node client.mjs ROOT COMMAND [ARG...]\n');
	process.exit(2);
}

function fail(message) {
	throw new Error(message);
}

const text = (res) => (res.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');

const client = new Client({ name: 'chartgate-serve-tsclient', version: '0.0.0' });
const transport = new StdioClientTransport({ command, args, env: { ...process.env }, stderr: 'inherit' });

async function run() {
	await client.connect(transport, { timeout: 15_000 });
	const listed = await client.listTools();
	const names = listed.tools.map((t) => t.name).sort();
	console.log(`tools in plan: ${names.join(', ')}`);
	for (const want of ['read_text_file', 'workflow_status', 'workflow_transition']) {
		if (!names.includes(want)) fail(`${want} is not listed: ${names}`);
	}
	if (names.includes('write_file')) fail('write_file is listed while planning');
	const read = listed.tools.find((t) => t.name === 'read_text_file');
	if (!read.outputSchema) fail('read_text_file has no output schema: the refusal below would not be checked against one');

	// A refusal carries no structured content (the client checks that
	// against the tool's output schema, error results included): first for
	// a tool the client has not listed, below for one it has.
	let res = await client.callTool({ name: 'write_file', arguments: { path: `${root}/a.txt`, content: 'x' } });
	const refusal = res._meta?.[META_KEY];
	if (res.isError !== true || refusal?.code !== 'FORBIDDEN' || res.structuredContent !== undefined) {
		fail(`write_file while planning: ${JSON.stringify(res)}`);
	}
	console.log(`refused: ${text(res).split('\n')[0]}`);

	res = await client.callTool({ name: 'workflow_transition', arguments: { event: 'PLANNED', data: { rationale: 'ts client' } } });
	if (res.isError) fail(`PLANNED: ${text(res)}`);
	res = await client.callTool({ name: 'write_file', arguments: { path: `${root}/a.txt`, content: 'x' } });
	if (res.isError) fail(`write_file while implementing: ${text(res)}`);

	// .env: the interrupt hides write_file; the client still has it listed
	// (with its output schema): its refusal must be readable too.
	await client.listTools();
	res = await client.callTool({ name: 'write_file', arguments: { path: `${root}/.env`, content: 'K=1' } });
	if (res.isError || !text(res).includes('matches interrupt env_changed')) fail(`.env: ${text(res)}`);
	res = await client.callTool({ name: 'write_file', arguments: { path: `${root}/b.txt`, content: 'y' } });
	if (res.isError !== true || res._meta?.[META_KEY]?.state !== 'env_check') fail(`write_file during the interrupt: ${JSON.stringify(res)}`);
	console.log('ok: chartgate serve with the TypeScript SDK client');
}

let code = 0;
try {
	await run();
} catch (err) {
	code = 1;
	process.stderr.write(`FAIL: ${err?.stack ?? err}\n`);
} finally {
	await client.close().catch(() => {});
}
process.exit(code);
