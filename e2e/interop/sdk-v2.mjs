// The official TypeScript SDK v2 client (@modelcontextprotocol/client),
// pinned to the 2026-07-28 era (server/discover, per-request _meta), against
// a live oml-server.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { env, recordingFetch, run } from './checks.mjs';

const { fetch, seen } = recordingFetch();
async function connect(key, f = globalThis.fetch) {
  const c = new Client(
    { name: 'oml-interop-sdk-v2', version: '1.0.0' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  await c.connect(
    new StreamableHTTPClientTransport(new URL(env.url), {
      fetch: f,
      requestInit: { headers: { Authorization: `Bearer ${key}` } },
    }),
  );
  return c;
}
const client = await connect(env.key, fetch);
if (client.getNegotiatedProtocolVersion?.() !== '2026-07-28') {
  console.log(`FAIL era: negotiated ${client.getNegotiatedProtocolVersion?.()}`);
  process.exit(1);
}
await run(client, seen, '2026-07-28', connect);
