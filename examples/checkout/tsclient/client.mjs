// client.mjs drives the checkout example's stdio server with the MCP
// TypeScript SDK's client, as an external client would: it starts the
// server, walks the checkout flow, checks what the gate shows and refuses at
// each step, and prints what it sees.
//
//	node client.mjs <command> [args...]
//	node client.mjs go run .. -stdio
//
// It exits 0 when every expectation holds, and 1 with a message naming the
// first one that failed. TestTypeScriptClient (../tsclient_test.go) runs it
// against the test binary.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
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
if (argv.length === 0) {
	process.stderr.write('usage: node client.mjs <command> [args...]   (e.g. node client.mjs go run .. -stdio)\n');
	process.exit(2);
}
const [command, ...args] = argv;

// The whole environment goes to the server: the SDK's default passes only a
// few variables, and go run (or the test binary, CHECKOUT_AS_COMMAND=1)
// needs the rest.
const transport = new StdioClientTransport({ command, args, env: { ...process.env }, stderr: 'inherit' });

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

function expectRefused(what, res) {
	if (res.isError !== true) {
		fail(`${what}: the call was not refused (isError ${json(res.isError)}): ${json(res)}`);
	}
	if (res._meta?.[META_KEY] !== undefined) {
		fail(`${what}: a refused call reports a transition: ${json(res._meta[META_KEY])}`);
	}
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
	expectRefused('early cart_pay', res);
	const refusal = res.structuredContent ?? {};
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
	expectRefused('cart_add_item after confirmation', res);
	expectEqual(
		'cart_add_item after confirmation: refusal code, state, reachable, path',
		[res.structuredContent?.code, res.structuredContent?.state, res.structuredContent?.reachable, res.structuredContent?.path ?? []],
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
