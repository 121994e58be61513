// client.mjs drives the checkout example's server with the MCP TypeScript
// SDK's client, as an external client would: it walks the checkout flow,
// checks what the gate shows and refuses at each step, and prints what it
// sees. Over stdio it starts the server and follows the session flow; with
// --url it connects to a stateless Streamable HTTP server and follows the
// flow with workflow handles.
//
//	node client.mjs <command> [args...]         # e.g. node client.mjs go run .. -stdio
//	node client.mjs --url http://HOST:PORT/mcp  # a server run with -http HOST:PORT -stateless
//
// The SDK's client validates a tool's structured content against the
// tool's output schema, error results included: refusals must be readable
// by it, for tools it has listed (all of them with handles; with sessions,
// one listed before the workflow hid it).
//
// It exits 0 when every expectation holds, and 1 with a message naming the
// first one that failed. TestTypeScriptClient (../tsclient_test.go) runs it
// against the test binary.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LATEST_PROTOCOL_VERSION, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

// The first protocol version without sessions: there the gate lists every
// tool and sends no list_changed (see mcpbind's package documentation), so
// the per-session flow below does not apply.
const SESSIONLESS_VERSION = '2026-07-28';
const REQUEST_TIMEOUT_MS = 15_000;
const LIST_CHANGED_TIMEOUT_MS = 5_000;
const META_KEY = 'chartgate/mcpbind';
const NO_STORE = '[Cache-Control: no-store]';

class ExpectationFailed extends Error {}

function fail(message) {
	throw new ExpectationFailed(message);
}

const json = (v) => JSON.stringify(v);

// canonical is JSON with object keys sorted, for comparing values whose key
// order does not matter.
function canonical(v) {
	if (Array.isArray(v)) {
		return `[${v.map(canonical).join(',')}]`;
	}
	if (v !== null && typeof v === 'object') {
		return `{${Object.keys(v).sort().map((k) => `${json(k)}:${canonical(v[k])}`).join(',')}}`;
	}
	return json(v) ?? 'undefined';
}

function expectEqual(what, got, want) {
	if (canonical(got) !== canonical(want)) {
		fail(`${what}: got ${json(got)}, want ${json(want)}`);
	}
}

function log(line = '') {
	process.stdout.write(line + '\n');
}

function indent(text, prefix = '    ') {
	return prefix + text.replaceAll('\n', '\n' + prefix);
}

const argv = process.argv.slice(2);
if (argv.length === 0 || (argv[0] === '--url' && argv.length !== 2)) {
	process.stderr.write('usage: node client.mjs <command> [args...]   (e.g. node client.mjs go run .. -stdio)\n');
	process.stderr.write('       node client.mjs --url http://HOST:PORT/mcp\n');
	process.exit(2);
}
const stateless = argv[0] === '--url';

// Over stdio the whole environment goes to the server: the SDK's default
// passes only a few variables, and go run (or the test binary,
// CHECKOUT_AS_COMMAND=1) needs the rest.
const transport = stateless
	? new StreamableHTTPClientTransport(new URL(argv[1]))
	: new StdioClientTransport({ command: argv[0], args: argv.slice(1), env: { ...process.env }, stderr: 'inherit' });

// The Client does not expose the negotiated protocol version; it hands it to
// the transport's optional setProtocolVersion after initialize.
let negotiated;
const setProtocolVersion = transport.setProtocolVersion?.bind(transport);
transport.setProtocolVersion = (version) => {
	negotiated = version;
	setProtocolVersion?.(version);
};

const client = new Client({ name: 'chartgate-checkout-tsclient', version: '0.0.0' });

// notifications/tools/list_changed: counted here, consumed by
// expectListChanged, and checked for strays by expectNoListChanged.
let changesReceived = 0;
let changesExpected = 0;
let wake = () => {};
client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
	changesReceived++;
	log('  ← notifications/tools/list_changed');
	wake();
});

async function expectListChanged(after) {
	if (changesReceived <= changesExpected) {
		let timer;
		await new Promise((resolve) => {
			wake = resolve;
			timer = setTimeout(resolve, LIST_CHANGED_TIMEOUT_MS);
		});
		clearTimeout(timer);
		wake = () => {};
	}
	if (changesReceived <= changesExpected) {
		fail(`no notifications/tools/list_changed within ${LIST_CHANGED_TIMEOUT_MS} ms after ${after}`);
	}
	changesExpected++;
	if (changesReceived > changesExpected) {
		fail(`${changesReceived - changesExpected + 1} notifications/tools/list_changed after ${after}, want one`);
	}
}

function expectNoListChanged(after) {
	if (changesReceived > changesExpected) {
		fail(`an unexpected notifications/tools/list_changed after ${after}`);
	}
}

async function expectTools(when, want) {
	const res = await client.listTools(undefined, { timeout: REQUEST_TIMEOUT_MS });
	const names = res.tools.map((t) => t.name);
	log(`  tools (${when}): ${names.join(', ')}`);
	expectEqual(`tools/list ${when}`, names, want);
	for (const t of res.tools) {
		if (!t.description?.endsWith(NO_STORE)) {
			fail(`tools/list ${when}: the description of ${t.name} does not end with ${NO_STORE}: ${json(t.description)}`);
		}
	}
	return res.tools;
}

function text(res) {
	return (res.content ?? [])
		.filter((c) => c.type === 'text')
		.map((c) => c.text)
		.join('\n');
}

async function call(name, args = {}) {
	log();
	log(`→ ${name} ${json(args)}`);
	const res = await client.callTool({ name, arguments: args }, undefined, { timeout: REQUEST_TIMEOUT_MS });
	log(`  ${res.isError ? 'refused (isError)' : 'result'}:`);
	log(indent(text(res)));
	if (res.structuredContent !== undefined) {
		log(`  structuredContent: ${json(res.structuredContent)}`);
	}
	const note = res._meta?.[META_KEY];
	if (note !== undefined) {
		log(`  _meta ${META_KEY}: ${json(note)}`);
	}
	return res;
}

// expectRefused checks a refused call and returns its refusal, which the
// gate puts in _meta (structured content would have to match the tool's
// output schema).
function expectRefused(what, res) {
	if (res.isError !== true) {
		fail(`${what}: the call was not refused (isError ${json(res.isError)}): ${json(res)}`);
	}
	if (res.structuredContent !== undefined) {
		fail(`${what}: a refusal has structured content, which a tool's output schema may reject: ${json(res.structuredContent)}`);
	}
	const ref = res._meta?.[META_KEY];
	if (typeof ref?.code !== 'string' || ref.event !== undefined) {
		fail(`${what}: no refusal under _meta ${META_KEY}: ${json(res._meta)}`);
	}
	return ref;
}

// expectRan checks a call that ran, the statesync notice its text starts
// with, and the transition the gate notes in _meta (none when transition is
// null).
function expectRan(what, res, { notice, structured, transition }) {
	if (res.isError) {
		fail(`${what}: the call was refused or failed: ${json(text(res))}`);
	}
	const body = text(res);
	if (notice !== null) {
		const want = `[System: Cache invalidated for cart.* — caused by ${notice}]\n`;
		if (!body.startsWith(want)) {
			fail(`${what}: the result text does not start with the invalidation notice ${json(want)}: ${json(body)}`);
		}
	} else if (body.startsWith('[System:')) {
		fail(`${what}: an unexpected notice: ${json(body)}`);
	}
	expectEqual(`${what}: structuredContent`, res.structuredContent, structured);
	expectEqual(`${what}: _meta ${META_KEY}`, res._meta?.[META_KEY] ?? null, transition);
}

async function expectStatus(what, want) {
	const res = await call('workflow_status');
	if (res.isError) {
		fail(`${what}: workflow_status failed: ${json(text(res))}`);
	}
	const s = res.structuredContent ?? {};
	expectEqual(`${what}: workflow_status state, status, tools and events`, [s.state, s.status, s.tools, s.events], want);
}

async function run() {
	try {
		await client.connect(transport, { timeout: REQUEST_TIMEOUT_MS });
	} catch (err) {
		fail(`could not connect to ${json(argv)}: ${err?.message ?? err}`);
	}
	const server = client.getServerVersion();
	log(`connected to ${server?.name} ${server?.version} (${json(argv)})`);
	log(`MCP protocol ${negotiated ?? '(unknown)'}: negotiated by the TypeScript SDK (it asks for ${LATEST_PROTOCOL_VERSION})`);
	if (negotiated === undefined) {
		fail('the negotiated protocol version was not seen: the SDK no longer calls transport.setProtocolVersion');
	}
	if (stateless) {
		await runHandles();
	} else {
		await runSession();
	}
}

// runSession follows the checkout flow in the session's own workflow.
async function runSession() {
	if (negotiated >= SESSIONLESS_VERSION) {
		fail(
			`the session negotiated protocol ${negotiated}, which has no sessions: there the gate lists every tool ` +
				'and sends no notifications/tools/list_changed by design, so this per-session checkout flow does not ' +
				`apply. Pin a client that negotiates a version before ${SESSIONLESS_VERSION}, or give this script a sessionless flow.`,
		);
	}
	if (client.getServerCapabilities()?.tools?.listChanged !== true) {
		fail(`the server does not advertise tools.listChanged: ${json(client.getServerCapabilities())}`);
	}

	log();
	const tools = await expectTools('state empty', ['cart_add_item', 'cart_view', 'workflow_status', 'workflow_transition']);
	for (const t of tools) {
		log(`    ${t.name}: ${t.description}`);
	}

	// Too early: the gate refuses cart_pay, says how to get there, and does
	// not run it (the order number below would be 2 otherwise).
	let res = await call('cart_pay', { payment_method: 'card' });
	const refusal = expectRefused('early cart_pay', res);
	expectEqual('early cart_pay: refusal code, tool, state', [refusal.code, refusal.tool, refusal.state], ['FORBIDDEN', 'cart_pay', 'empty']);
	expectEqual('early cart_pay: refusal available', refusal.available, ['cart_add_item', 'cart_view', 'workflow_status', 'workflow_transition']);
	expectEqual('early cart_pay: refusal reachable', refusal.reachable, true);
	expectEqual(
		'early cart_pay: refusal path (tool, event)',
		(refusal.path ?? []).map((s) => [s.tool, s.event]),
		[['cart_add_item', 'ADD_ITEM'], ['cart_checkout', 'CHECKOUT']],
	);
	if (!text(res).includes('call cart_add_item, then cart_checkout')) {
		fail(`early cart_pay: the refusal text does not name the path: ${json(text(res))}`);
	}
	log(`  path: ${refusal.path.map((s) => `${s.tool} (${s.event})`).join(' → ')}`);

	res = await call('cart_view');
	expectRan('cart_view in empty', res, { notice: null, structured: { items: [] }, transition: null });
	expectNoListChanged('the refused cart_pay');
	await expectTools('still empty', ['cart_add_item', 'cart_view', 'workflow_status', 'workflow_transition']);

	res = await call('cart_add_item', { product_id: 'sku-42' });
	expectRan('cart_add_item', res, {
		notice: 'cart.add_item',
		structured: { items: ['sku-42'] },
		transition: { event: 'ADD_ITEM', from: 'empty', to: 'has_items', toolsChanged: true },
	});
	await expectListChanged('cart_add_item');
	await expectTools('state has_items', ['cart_add_item', 'cart_checkout', 'cart_view', 'workflow_status', 'workflow_transition']);

	res = await call('cart_checkout');
	expectRan('cart_checkout', res, {
		notice: 'cart.checkout',
		structured: { order_id: 'pending', items: ['sku-42'] },
		transition: { event: 'CHECKOUT', from: 'has_items', to: 'payment', toolsChanged: true },
	});
	await expectListChanged('cart_checkout');

	// cart_checkout again, before the client lists the tools again: it still
	// has cart_checkout, with its output schema, from the last list. The
	// refusal must reach it all the same.
	res = await call('cart_checkout');
	const again = expectRefused('cart_checkout again before re-listing', res);
	expectEqual('cart_checkout again: refusal code, state', [again.code, again.state], ['FORBIDDEN', 'payment']);
	expectNoListChanged('the refused cart_checkout');
	await expectTools('state payment', ['cart_pay', 'cart_view', 'workflow_status', 'workflow_transition']);

	res = await call('cart_pay', { payment_method: 'card' });
	expectRan('cart_pay', res, {
		notice: 'cart.pay',
		structured: { order_id: 'order-1', items: ['sku-42'], payment_method: 'card' },
		transition: { event: 'PAY', from: 'payment', to: 'confirmed', toolsChanged: true },
	});
	await expectListChanged('cart_pay');
	await expectTools('state confirmed', ['cart_view', 'workflow_status', 'workflow_transition']);

	await expectStatus('confirmed', ['confirmed', 'done', ['cart_view', 'workflow_status', 'workflow_transition'], []]);

	// After the final state nothing leads back to cart_add_item.
	res = await call('cart_add_item', { product_id: 'sku-7' });
	const late = expectRefused('cart_add_item after confirmation', res);
	expectEqual(
		'cart_add_item after confirmation: refusal code, state, reachable, path',
		[late.code, late.state, late.reachable, late.path ?? []],
		['FORBIDDEN', 'confirmed', false, []],
	);

	// The gate sends list_changed before the result of the call that caused
	// it; a ping round trip gives a stray one time to arrive all the same.
	await client.ping({ timeout: REQUEST_TIMEOUT_MS });
	expectNoListChanged('the end of the flow');
	expectEqual('notifications/tools/list_changed received', changesReceived, 3);
	log();
	log(`ok: checkout flow passed with the TypeScript SDK client, protocol ${negotiated}`);
}

// runHandles follows the checkout flow on a stateless server: every tool is
// listed (with its output schema), and the workflow is named by the
// workflow_id that workflow_start returns.
async function runHandles() {
	if (client.getServerCapabilities()?.tools?.listChanged === true) {
		fail(`a stateless server advertises tools.listChanged, which it never sends: ${json(client.getServerCapabilities())}`);
	}
	log();
	const listed = await client.listTools(undefined, { timeout: REQUEST_TIMEOUT_MS });
	const names = listed.tools.map((t) => t.name).sort();
	log(`  tools: ${names.join(', ')}`);
	expectEqual('tools/list', names, ['cart_add_item', 'cart_checkout', 'cart_pay', 'cart_view', 'workflow_start', 'workflow_status', 'workflow_transition']);
	const pay = listed.tools.find((t) => t.name === 'cart_pay');
	if (pay.outputSchema === undefined || !pay.inputSchema.required?.includes('workflow_id')) {
		fail(`cart_pay should have an output schema and take a workflow_id: ${json(pay)}`);
	}

	// Without a workflow id: refused, and readable although cart_pay has an
	// output schema.
	let res = await call('cart_pay', { payment_method: 'card' });
	let ref = expectRefused('cart_pay without a workflow id', res);
	expectEqual('cart_pay without a workflow id: refusal code, path', [ref.code, (ref.path ?? []).map((s) => s.tool)], ['WORKFLOW_REQUIRED', ['workflow_start']]);

	res = await call('workflow_start');
	if (res.isError) {
		fail(`workflow_start: ${json(text(res))}`);
	}
	const id = res.structuredContent?.workflow_id;
	if (typeof id !== 'string' || id.length !== 32) {
		fail(`workflow_start returned no workflow_id: ${json(res.structuredContent)}`);
	}

	res = await call('cart_pay', { payment_method: 'card', workflow_id: id });
	ref = expectRefused('early cart_pay', res);
	expectEqual(
		'early cart_pay: refusal code, state, workflow, path',
		[ref.code, ref.state, ref.workflow, (ref.path ?? []).map((s) => [s.tool, s.event])],
		['FORBIDDEN', 'empty', id, [['cart_add_item', 'ADD_ITEM'], ['cart_checkout', 'CHECKOUT']]],
	);

	res = await call('cart_add_item', { product_id: 'sku-42', workflow_id: id });
	expectRan('cart_add_item', res, {
		notice: 'cart.add_item',
		structured: { items: ['sku-42'] },
		transition: { event: 'ADD_ITEM', from: 'empty', to: 'has_items', toolsChanged: true },
	});
	res = await call('cart_checkout', { workflow_id: id });
	expectRan('cart_checkout', res, {
		notice: 'cart.checkout',
		structured: { order_id: 'pending', items: ['sku-42'] },
		transition: { event: 'CHECKOUT', from: 'has_items', to: 'payment', toolsChanged: true },
	});
	res = await call('cart_pay', { payment_method: 'card', workflow_id: id });
	expectRan('cart_pay', res, {
		notice: 'cart.pay',
		structured: { order_id: 'order-1', items: ['sku-42'], payment_method: 'card' },
		transition: { event: 'PAY', from: 'payment', to: 'confirmed', toolsChanged: true },
	});
	res = await call('cart_pay', { payment_method: 'card', workflow_id: id });
	ref = expectRefused('cart_pay again', res);
	expectEqual('cart_pay again: refusal code, state, reachable', [ref.code, ref.state, ref.reachable], ['FORBIDDEN', 'confirmed', false]);
	expectEqual('notifications/tools/list_changed received', changesReceived, 0);
	log();
	log(`ok: checkout flow with workflow handles passed with the TypeScript SDK client, protocol ${negotiated}`);
}

let code = 0;
try {
	await run();
} catch (err) {
	code = 1;
	if (err instanceof ExpectationFailed) {
		process.stderr.write(`FAIL: ${err.message}\n`);
	} else {
		process.stderr.write(`FAIL: ${err?.stack ?? err}\n`);
	}
} finally {
	await client.close().catch(() => {});
}
process.exit(code);
