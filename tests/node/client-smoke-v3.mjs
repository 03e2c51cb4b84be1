// The `/extended/v3` routes through the incumbent's generated client (driven by
// tests/client_smoke.rs after the shared smoke script, against the same server): each call goes
// through the client's typed path and parameters, must answer 200 with the v3 envelope, and the
// lists are followed one page along their `next` cursor.
// Usage: node client-smoke-v3.mjs <baseUrl> --principal ST...
import { createClient } from '@stacks/blockchain-api-client';

const args = process.argv.slice(2);
const baseUrl = args.find(a => !a.startsWith('--'));
const principal = args[args.indexOf('--principal') + 1];
const host = new URL(baseUrl).hostname;
if (!['127.0.0.1', 'localhost', '::1', '[::1]'].includes(host)) {
  console.error(`refusing non-loopback host ${host}`);
  process.exit(2);
}
const client = createClient({ baseUrl });

const results = [];
// `fn` calls the client; `shape` checks the body and returns what is wrong with it, if anything.
async function check(label, fn, shape = () => null) {
  try {
    const { data, error, response } = await fn();
    const wrong = response.status === 200 ? shape(data) : JSON.stringify(error ?? data).slice(0, 200);
    const ok = !wrong;
    results.push({ label, ok });
    console.log(`${ok ? 'PASS' : 'FAIL'} ${String(response.status).padEnd(4)} ${label}${ok ? '' : ' ' + wrong}`);
    return ok ? data : undefined;
  } catch (e) {
    results.push({ label, ok: false });
    console.log(`FAIL ---- ${label} ${e && e.message}`);
    return undefined;
  }
}

// The cursor envelope every v3 list answers with; `nonEmpty` when the fixture has rows for it.
const page = (nonEmpty) => (d) => {
  if (!d || !Array.isArray(d.results) || typeof d.total !== 'number' || typeof d.limit !== 'number')
    return 'not a v3 page: ' + JSON.stringify(d).slice(0, 200);
  if (!d.cursor || !('next' in d.cursor) || !('previous' in d.cursor) || !('current' in d.cursor))
    return 'no cursor {next, previous, current}';
  if (d.results.length > d.limit || d.total < d.results.length) return `limit ${d.limit}, total ${d.total}, ${d.results.length} rows`;
  if (nonEmpty && d.results.length === 0) return 'empty';
  return null;
};

// A list's first page (limit 2) and, when there is one, the page its `next` cursor names.
async function walk(label, path, params, nonEmpty) {
  const query = { ...(params.query ?? {}), limit: 2 };
  const first = await check(`GET ${path} (limit 2)`, () => client.GET(path, { params: { ...params, query } }), page(nonEmpty));
  const next = first?.cursor?.next;
  if (next) {
    await check(`GET ${path} (next page)`, () => client.GET(path, { params: { ...params, query: { ...query, cursor: next } } }), (d) =>
      page(true)(d) ?? (d.cursor.current === next ? null : `current ${d.cursor.current}, asked ${next}`) ?? (d.cursor.previous === first.cursor.current ? null : `previous ${d.cursor.previous}`));
  }
  return first;
}

const txs = await walk('transactions', '/extended/v3/transactions', {}, true);
const txId = txs?.results?.[0]?.tx_id;
if (txId) {
  const path = { tx_id: txId };
  await check('GET /extended/v3/transactions/{tx_id}', () => client.GET('/extended/v3/transactions/{tx_id}', { params: { path } }), (d) => (d?.tx_id === txId ? null : `tx_id ${d?.tx_id}`));
  await walk('events', '/extended/v3/transactions/{tx_id}/events', { path }, false);
}
await walk('block transactions', '/extended/v3/blocks/{height_or_hash}/transactions', { path: { height_or_hash: 'latest' } }, false);
await walk('mempool', '/extended/v3/mempool/transactions', {}, false);

const p = { principal };
const mine = await walk('principal transactions', '/extended/v3/principals/{principal}/transactions', { path: p }, true);
const myTx = mine?.results?.[0]?.transaction?.tx_id;
if (myTx) {
  await walk('tx balance changes', '/extended/v3/principals/{principal}/transactions/{tx_id}/balance-changes', { path: { ...p, tx_id: myTx } }, true);
  await walk('balance changes', '/extended/v3/principals/{principal}/balance-changes', { path: p, query: { tx_id: [myTx] } }, true);
}
await check('GET /extended/v3/principals/{principal}/balances/stx', () => client.GET('/extended/v3/principals/{principal}/balances/stx', { params: { path: p } }), (d) => (typeof d?.balance === 'string' ? null : 'no balance'));
await walk('ft balances', '/extended/v3/principals/{principal}/balances/ft', { path: p }, false);
await walk('nft balances', '/extended/v3/principals/{principal}/balances/nft', { path: p }, false);
await walk('principal mempool', '/extended/v3/principals/{principal}/mempool/transactions', { path: p }, false);
await check('GET /extended/v3/principals/{principal}/nonces', () => client.GET('/extended/v3/principals/{principal}/nonces', { params: { path: p } }));
await check('GET /extended/v3/principals/{principal}/staking', () => client.GET('/extended/v3/principals/{principal}/staking', { params: { path: p } }));
await walk('bond positions', '/extended/v3/principals/{principal}/staking/bonds', { path: p }, false);
await walk('bonds', '/extended/v3/staking/bonds', {}, false);
await walk('signers', '/extended/v3/staking/signers', {}, false);

const failed = results.filter(r => !r.ok).length;
console.log(`\n${results.length - failed}/${results.length} passed`);
process.exit(failed ? 1 : 0);
