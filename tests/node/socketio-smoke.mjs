// Live updates through the real npm clients against a running server (driven by
// tests/live_socketio.rs): `socket.io-client` v4 over WebSocket, long-polling and the upgrade,
// `StacksApiSocketClient` and the JSON-RPC `connectWebSocketClient` of
// `@stacks/blockchain-api-client`. Reads one JSON line of subjects from argv, prints
// {"ready":...} once every client is subscribed, then for each stdin command:
//   "dump"          -> {"clients": {name: [{event, args}]}, ...}
//   "resume <seq>"  -> a new client resumes from <seq>; prints what it got once it is quiet
import { io } from 'socket.io-client';
import { StacksApiSocketClient, connectWebSocketClient } from '@stacks/blockchain-api-client';
import readline from 'node:readline';

const base = process.argv[2];
const s = JSON.parse(process.argv[3]);
const got = {};
const acks = {};
const record = (name) => {
  got[name] = [];
  return (event, ...args) => got[name].push({ event, args });
};
const connected = (socket) =>
  new Promise((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('connect_error', reject);
  });
const emitAck = (socket, ...args) => new Promise((resolve) => socket.emit(...args, (err) => resolve(err)));
const quiet = (name, ms) =>
  new Promise((resolve) => {
    let n = -1;
    const t = setInterval(() => {
      if (got[name].length === n) {
        clearInterval(t);
        resolve();
      }
      n = got[name].length;
    }, ms);
  });

// A: the incumbent's client, handshake subscriptions, WebSocket transport (its default).
const a = new StacksApiSocketClient({ url: base, subscriptions: ['block', 'microblock', 'mempool'] });
a.socket.onAny(record('handshake_ws'));
// Listen for the connections before anything is awaited: they may complete meanwhile.
const aUp = connected(a.socket);
// B: raw socket.io-client on long-polling only, subscribing by event with acks.
const b = io(base, { transports: ['polling'], upgrade: false });
b.onAny(record('polling'));
const bUp = connected(b);
// C: polling upgraded to WebSocket (socket.io-client's default), then an unsubscribe.
const c = io(base);
c.onAny(record('upgraded'));
const cUp = connected(c);
// D: JSON-RPC through the incumbent's client, for the same blocks.
const rpc = await connectWebSocketClient(base.replace(/^http/, 'ws') + '/extended/v1/ws');
got.jsonrpc_blocks = [];
await rpc.subscribeBlocks((block) => got.jsonrpc_blocks.push({ event: 'block', args: [block] }));

await Promise.all([aUp, bUp, cUp]);
const bTopics = [
  `address-transaction:${s.address}`,
  `address-stx-balance:${s.address}`,
  `transaction:${s.tx_id}`,
  'nft-event',
  `nft-asset-event:${s.asset}+${s.value}`,
  `nft-collection-event:${s.asset}`,
];
acks.polling = await emitAck(b, 'subscribe', bTopics);
acks.upgraded_subscribe = await emitAck(c, 'subscribe', ['block', 'mempool']);
acks.upgraded_unsubscribe = await emitAck(c, 'unsubscribe', 'mempool');
acks.invalid_topic = await emitAck(b, 'subscribe', 'blocks-of-nothing');
// E: a handshake with an invalid topic is refused.
const e = io(base, { transports: ['websocket'], query: { subscriptions: 'block,nope' }, reconnection: false });
acks.invalid_handshake = await connected(e).then(
  () => 'connected',
  (err) => err.message,
);
e.close();
// Wait for C's upgrade so the dump reports the transport it ended on.
for (let i = 0; i < 100 && c.io.engine.transport.name !== 'websocket'; i++) {
  await new Promise((r) => setTimeout(r, 50));
}
console.log(JSON.stringify({ ready: true, acks }));

const transports = () => ({
  handshake_ws: a.socket.io.engine.transport.name,
  polling: b.io.engine.transport.name,
  upgraded: c.io.engine.transport.name,
});
for await (const line of readline.createInterface({ input: process.stdin })) {
  const [cmd, arg] = line.trim().split(' ');
  if (cmd === 'dump') {
    console.log(JSON.stringify({ clients: got, transports: transports() }));
  } else if (cmd === 'resume') {
    const r = StacksApiSocketClient.connect({
      url: base,
      subscriptions: ['block'],
      socketOpts: { query: { since_seq: arg } },
    });
    r.socket.onAny(record('resumed'));
    await connected(r.socket).catch((err) => console.log(JSON.stringify({ resumed: [], error: err.message })));
    await quiet('resumed', 500);
    console.log(JSON.stringify({ resumed: got.resumed }));
    r.socket.close();
  } else if (cmd === 'quit') {
    break;
  }
}
a.socket.close();
b.close();
c.close();
await rpc.webSocket.close();
process.exit(0);
