// The official TypeScript SDK v1 client (@modelcontextprotocol/sdk), in the
// 2025-11-25 era (initialize handshake), against a live oml-server.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { env, recordingFetch, run } from './checks.mjs';

const { fetch, seen } = recordingFetch();
async function connect(key, f = globalThis.fetch) {
  const c = new Client({ name: 'oml-interop-sdk-v1', version: '1.0.0' });
  await c.connect(
    new StreamableHTTPClientTransport(new URL(env.url), {
      fetch: f,
      requestInit: { headers: { Authorization: `Bearer ${key}` } },
    }),
  );
  return c;
}
const client = await connect(env.key, fetch);
await run(client, seen, '2025-11-25', connect);
