// This file holds the JSON helpers of the conformance oracle: deep equality,
// dotted-path lookup, JSON cloning, and the order-preserving parse and
// stringify that case files are rewritten with.

// ---------------------------------------------------------------------------
// JSON helpers

export const hasOwn = (o, k) => Object.prototype.hasOwnProperty.call(o, k);
export const isPlainObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

// Deep JSON equality; object key order is ignored.
export function deepEqual(a, b) {
  if (a === b) return true;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    return a.every((x, i) => deepEqual(x, b[i]));
  }
  if (isPlainObject(a)) {
    if (!isPlainObject(b)) return false;
    const ka = Object.keys(a).filter((k) => a[k] !== undefined);
    const kb = Object.keys(b).filter((k) => b[k] !== undefined);
    if (ka.length !== kb.length) return false;
    return ka.every((k) => hasOwn(b, k) && deepEqual(a[k], b[k]));
  }
  return false;
}

export const MISSING = Symbol('missing');

// Looks up a dotted path ("context.a.b", "event.items.0") in the scope.
// Returns MISSING when some segment is absent.
export function lookup(scope, dotted) {
  if (typeof dotted !== 'string' || dotted === '') {
    throw new Error(`invalid path ${JSON.stringify(dotted)}`);
  }
  let cur = scope;
  for (const seg of dotted.split('.')) {
    if (Array.isArray(cur)) {
      if (!/^(0|[1-9][0-9]*)$/.test(seg) || Number(seg) >= cur.length) return MISSING;
      cur = cur[Number(seg)];
    } else if (isPlainObject(cur)) {
      if (!hasOwn(cur, seg)) return MISSING;
      cur = cur[seg];
    } else {
      return MISSING;
    }
    if (cur === undefined) return MISSING;
  }
  return cur;
}

export const clone = (v) => (v === undefined ? undefined : JSON.parse(JSON.stringify(v)));

// ---------------------------------------------------------------------------
// Order-preserving JSON text handling.
//
// JSON.parse puts integer-like keys ("1", "10") before the others, so a file
// rewritten from a parsed object would lose its authored key order -- and key
// order is document order for `states`. Case files are therefore re-written
// from an ordered tree: objects become {[ORDERED]: [[key, value], ...]}.

export const ORDERED = Symbol('ordered');

export function parseOrdered(text) {
  let i = 0;
  const fail = (msg) => {
    throw new SyntaxError(`${msg} at offset ${i}`);
  };
  const ws = () => {
    while (i < text.length && ' \t\n\r'.includes(text[i])) i++;
  };
  const value = () => {
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      const entries = [];
      ws();
      if (text[i] === '}') {
        i++;
        return { [ORDERED]: entries };
      }
      for (;;) {
        ws();
        if (text[i] !== '"') fail('expected a key');
        const key = str();
        ws();
        if (text[i] !== ':') fail("expected ':'");
        i++;
        const v = value();
        const at = entries.findIndex(([k]) => k === key);
        if (at >= 0) entries.splice(at, 1); // later duplicate wins, like JSON.parse
        entries.push([key, v]);
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === '}') {
          i++;
          return { [ORDERED]: entries };
        }
        fail("expected ',' or '}'");
      }
    }
    if (c === '[') {
      i++;
      const items = [];
      ws();
      if (text[i] === ']') {
        i++;
        return items;
      }
      for (;;) {
        items.push(value());
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === ']') {
          i++;
          return items;
        }
        fail("expected ',' or ']'");
      }
    }
    if (c === '"') return str();
    const m = /^(?:-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null)/.exec(text.slice(i, i + 400));
    if (!m) fail('unexpected character');
    i += m[0].length;
    return JSON.parse(m[0]);
  };
  const str = () => {
    const m = /^"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"/.exec(text.slice(i));
    if (!m) fail('bad string');
    i += m[0].length;
    return JSON.parse(m[0]);
  };
  const v = value();
  ws();
  if (i !== text.length) fail('trailing characters');
  return v;
}

// Plain JS value -> ordered tree (JS key order).
export function toOrdered(v) {
  if (Array.isArray(v)) return v.map(toOrdered);
  if (isPlainObject(v)) {
    return { [ORDERED]: Object.entries(v).filter(([, x]) => x !== undefined).map(([k, x]) => [k, toOrdered(x)]) };
  }
  return v;
}

// Ordered tree -> JSON text, formatted like JSON.stringify(v, null, indent).
export function stringifyOrdered(v, indent = 2, depth = 0) {
  const pad = (d) => (indent ? '\n' + ' '.repeat(indent * d) : '');
  const sep = indent ? ': ' : ':';
  if (Array.isArray(v)) {
    if (v.length === 0) return '[]';
    return '[' + v.map((x) => pad(depth + 1) + stringifyOrdered(x, indent, depth + 1)).join(',') + pad(depth) + ']';
  }
  if (v !== null && typeof v === 'object' && v[ORDERED]) {
    const entries = v[ORDERED];
    if (entries.length === 0) return '{}';
    return (
      '{' +
      entries.map(([k, x]) => pad(depth + 1) + JSON.stringify(k) + sep + stringifyOrdered(x, indent, depth + 1)).join(',') +
      pad(depth) +
      '}'
    );
  }
  return JSON.stringify(v);
}
