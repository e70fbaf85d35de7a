// Shared checks run by sdk-v1.mjs and sdk-v2.mjs against a live oml-server.
// Input comes from the environment (set by e2e/interop_test.go):
//   OML_MCP_URL   the server's /mcp endpoint
//   OML_API_KEY   a key with reader and writer grants on the case's scope
//   OML_CASE      JSON {scope, query, want_hit, missing_scope, operator_key,
//                 limited_keys: {"2025-11-25": key, "2026-07-28": key}}
//                 (limited keys may make 3 requests a minute)
// Each check prints "ok <name>" or "FAIL <name>: <why>"; the process exits 1
// when any check failed.

export const env = {
  url: must('OML_MCP_URL'),
  key: must('OML_API_KEY'),
  kase: JSON.parse(must('OML_CASE')),
};

function must(name) {
  const v = process.env[name];
  if (!v) {
    console.log(`FAIL setup: ${name} is not set`);
    process.exit(1);
  }
  return v;
}

// recordingFetch is fetch that remembers the Mcp-Protocol-Version header of
// the last request, so a check can say which era the client spoke.
export function recordingFetch() {
  const seen = { version: undefined };
  const f = async (input, init) => {
    const h = new Headers(init?.headers);
    if (h.get('mcp-protocol-version')) seen.version = h.get('mcp-protocol-version');
    return fetch(input, init);
  };
  return { fetch: f, seen };
}

let failed = 0;

async function check(name, fn) {
  try {
    const detail = await fn();
    console.log(`ok ${name}${detail ? ` (${detail})` : ''}`);
  } catch (e) {
    failed++;
    console.log(`FAIL ${name}: ${e?.stack ?? e}`);
  }
}

function assert(cond, msg) {
  if (!cond) throw new Error(msg);
}

// refusal asserts a tool result is OML's typed refusal with code, in
// structured content (isError: true), and returns its error object.
function refusal(res, code) {
  assert(res.isError === true, `want isError: true, got ${JSON.stringify(res)}`);
  const e = res.structuredContent?.error;
  assert(e && typeof e === 'object', `no structured {"error": …}: ${JSON.stringify(res)}`);
  assert(e.code === code, `code ${e.code}, want ${code}: ${JSON.stringify(e)}`);
  for (const k of ['rule', 'message']) assert(typeof e[k] === 'string' && e[k] !== '', `error.${k} missing`);
  assert(typeof e.retryable === 'boolean', 'error.retryable missing');
  assert(res.content?.[0]?.type === 'text' && JSON.parse(res.content[0].text).error.code === code, 'text content is not the same envelope');
  return e;
}

// run drives the checks with a connected client; era is the protocol
// version the client must have spoken.
// run's connect(key) returns another client of the same SDK and era,
// connected with key.
export async function run(client, seen, era, connect) {
  const { kase } = env;
  let tools = [];

  await check('capabilities: tools and resources, no listChanged, no logging', () => {
    const caps = client.getServerCapabilities();
    assert(caps?.tools, `no tools capability: ${JSON.stringify(caps)}`);
    assert(!caps.tools.listChanged, `tools.listChanged advertised: ${JSON.stringify(caps)}`);
    assert(!caps.logging, `logging advertised: ${JSON.stringify(caps)}`);
    return JSON.stringify(caps);
  });

  await check('resources: the bootstrap and the skill, listed and read; a forged cursor refused', async () => {
    const caps = client.getServerCapabilities();
    assert(caps?.resources, `no resources capability: ${JSON.stringify(caps)}`);
    const { resources, nextCursor } = await client.listResources();
    assert(!caps.resources.subscribe && !caps.resources.listChanged, `resources.subscribe or listChanged advertised: ${JSON.stringify(caps)}`);
    const uris = resources.map((r) => r.uri);
    assert(uris.includes('oml://skill') && uris.includes('skill://oml/SKILL.md'), `resources: ${JSON.stringify(uris)}`);
    assert(!nextCursor, `a nextCursor on a short list: ${nextCursor}`);
    const { resourceTemplates } = await client.listResourceTemplates();
    assert(resourceTemplates.some((t) => t.uriTemplate === 'oml://kb/{workarea}/{+path}'), `templates: ${JSON.stringify(resourceTemplates)}`);
    const read = await client.readResource({ uri: 'skill://oml/SKILL.md' });
    assert(read.contents?.[0]?.text?.startsWith('---\nname: oml'), `SKILL.md: ${JSON.stringify(read).slice(0, 200)}`);
    let refused = false;
    try {
      await client.listResources({ cursor: 'forged' });
    } catch (e) {
      refused = e?.code === -32602;
    }
    assert(refused, 'a forged cursor was not refused with -32602');
    return `${uris.length} resources`;
  });

  await check('tools/list', async () => {
    ({ tools } = await client.listTools());
    assert(tools.some((t) => t.name === 'oml_recall'), 'oml_recall missing');
    for (const t of tools) assert(t.outputSchema?.type === 'object', `${t.name}: no object outputSchema`);
    assert(seen.version === era, `spoke ${seen.version}, want ${era}`);
    return `${tools.length} tools, ${seen.version}`;
  });

  await check('annotations: writes are not idempotent without a key', () => {
    for (const name of ['oml_remember', 'oml_learn']) {
      const t = tools.find((x) => x.name === name);
      assert(t, `${name} missing`);
      assert(t.annotations?.idempotentHint !== true, `${name} claims idempotentHint`);
    }
  });

  await check('oml_recall finds the promoted memory', async () => {
    const res = await client.callTool({ name: 'oml_recall', arguments: { query: kase.query, scope: kase.scope, k: 5 } });
    assert(!res.isError, `refused: ${JSON.stringify(res.structuredContent)}`);
    const sc = res.structuredContent;
    assert(Array.isArray(sc.steering) && Array.isArray(sc.hits), `shape: ${JSON.stringify(sc)}`);
    assert(sc.hits.some((h) => h.artifact_id === kase.want_hit), `hit ${kase.want_hit} missing: ${JSON.stringify(sc)}`);
    return `${sc.hits.length} hits`;
  });

  await check('refusal reaches the caller typed (access.not_found)', async () => {
    const res = await client.callTool({ name: 'oml_recall', arguments: { query: kase.query, scope: kase.missing_scope } });
    refusal(res, 'access.not_found');
  });

  await check('brain refusals reach the caller typed (a knowledge-base put naming no workarea, a foreign session, a NUL in a path)', async () => {
    const project = await client.callTool({ name: 'brain_put', arguments: { store: 'project', path: '/fs/a.md', content: 'x' } });
    refusal(project, 'request.validation');
    const foreign = await client.callTool({ name: 'brain_get', arguments: { session: 'ses_01JB2XCQ4T8Z9K2M5P7R1VH3ND', path: '/fs/a.md' } });
    refusal(foreign, 'access.not_found');
    const nul = await client.callTool({ name: 'brain_get', arguments: { session: 'ses_01JB2XCQ4T8Z9K2M5P7R1VH3ND', path: '/fs/a\u0000b' } });
    refusal(nul, 'request.validation');
  });

  await check('knowledge base, documents and search: a page put is held and its author alone reads it; refusals typed', async () => {
    const put = await client.callTool({ name: 'brain_put', arguments: { store: 'project', workarea: kase.scope, path: `/fs/interop-${era}.md`, content: '# Interop\n\nHeld until reviewed.' } });
    assert(!put.isError && put.structuredContent.state === 'held' && /^sha256:/.test(put.structuredContent.version), `put: ${JSON.stringify(put)}`);
    assert(put.structuredContent.revision === undefined, `a held version shows a revision: ${JSON.stringify(put.structuredContent)}`);
    const got = await client.callTool({ name: 'brain_get', arguments: { store: 'project', workarea: kase.scope, path: `/fs/interop-${era}.md` } });
    assert(!got.isError && got.structuredContent.state === 'held' && got.structuredContent.content.startsWith('# Interop'), `get: ${JSON.stringify(got)}`);
    refusal(await client.callTool({ name: 'brain_history', arguments: { workarea: kase.scope, path: `/fs/interop-${era}.md` } }), 'access.not_found');
    refusal(await client.callTool({ name: 'brain_put', arguments: { store: 'project', workarea: kase.scope, path: '/kv/x', content: 'x' } }), 'request.validation');
    refusal(await client.callTool({ name: 'search', arguments: { query: '-everything' } }), 'request.validation');
    const found = await client.callTool({ name: 'search', arguments: { query: kase.query, workarea: kase.scope } });
    assert(!found.isError && Array.isArray(found.structuredContent.hits), `search: ${JSON.stringify(found)}`);
    refusal(await client.callTool({ name: 'artifact_publish', arguments: { workarea: kase.scope, format: 'pdf', content: 'x', title: 't' } }), 'request.validation');
    refusal(await client.callTool({ name: 'artifact_get', arguments: { artifact_id: 'doc_01JB2XCQ4T8Z9K2M5P7R1VH3ND' } }), 'access.not_found');
    const doc = await client.callTool({ name: 'artifact_publish', arguments: { workarea: kase.scope, format: 'markdown', content: '# Interop doc\n\nBody.' } });
    assert(!doc.isError && doc.structuredContent.state === 'held' && doc.structuredContent.title === 'Interop doc', `publish: ${JSON.stringify(doc)}`);
    refusal(await client.callTool({ name: 'comment_post', arguments: { artifact_id: doc.structuredContent.artifact_id, body: 'x' } }), 'access.not_found');
    return `page ${put.structuredContent.version.slice(0, 15)}…, ${found.structuredContent.hits.length} search hits`;
  });

  await check('missing required field is request.validation naming it', async () => {
    const res = await client.callTool({ name: 'oml_remember', arguments: { workarea: kase.scope, text: 'no claim key' } });
    const e = refusal(res, 'request.validation');
    assert(/claim_key.*required/.test(e.message), `message does not say claim_key is required: ${e.message}`);
    return e.message;
  });

  await check('wrong type is request.validation', async () => {
    const res = await client.callTool({ name: 'oml_recall', arguments: { query: kase.query, scope: kase.scope, k: 'five' } });
    refusal(res, 'request.validation');
  });

  await check('signal_append lands in feed_read (coordination tools)', async () => {
    const body = `from ${era} ${Date.now()}`;
    const res = await client.callTool({ name: 'signal_append', arguments: { workarea: kase.scope, kind: 'signal', body } });
    assert(!res.isError, `refused: ${JSON.stringify(res.structuredContent)}`);
    const id = res.structuredContent.event_id;
    const feed = await client.callTool({ name: 'feed_read', arguments: { workarea: kase.scope, since: 0, limit: 500 } });
    assert(!feed.isError, `feed refused: ${JSON.stringify(feed.structuredContent)}`);
    const ev = feed.structuredContent.events.find((e) => e.event_id === id);
    assert(ev && ev.payload?.body === body, `signal ${id} missing from the feed: ${JSON.stringify(feed.structuredContent)}`);
    return id;
  });

  await check('question_post refuses seven options, typed', async () => {
    const options = ['a', 'b', 'c', 'd', 'e', 'f', 'g'];
    const res = await client.callTool({ name: 'question_post', arguments: { workarea: kase.scope, body: 'which?', options } });
    const e = refusal(res, 'request.validation');
    return e.message;
  });

  await check('the events tail shows each event\'s hash, and the actor of its own', async () => {
    const res = await client.callTool({ name: 'oml_events_tail', arguments: { scope: kase.scope, after_seq: 0, limit: 500 } });
    assert(!res.isError, `refused: ${JSON.stringify(res.structuredContent)}`);
    const evs = res.structuredContent.events;
    assert(evs.length > 0 && evs.every((e) => /^[0-9a-f]{64}$/.test(e.hash) && typeof e.actor === 'string'), `events: ${JSON.stringify(evs.slice(0, 2))}`);
    assert(evs.some((e) => e.event_type === 'feed.signal' && e.actor !== ''), 'no own signal with its actor');
    return `${evs.length} events`;
  });

  await check('an operator key is refused content, naming D9', async () => {
    const op = await connect(kase.operator_key);
    const res = await op.callTool({ name: 'oml_recall', arguments: { query: kase.query, scope: kase.scope } });
    const e = refusal(res, 'access.verb_ceiling');
    assert(/\(D9\)/.test(e.rule), `rule does not name D9: ${e.rule}`);
    await op.close();
    return e.rule;
  });

  await check('a key over its rate limit gets a retryable tool error with its seconds', async () => {
    const limited = await connect(kase.limited_keys[era]);
    let e;
    for (let i = 0; i < 6 && !e; i++) {
      const res = await limited.callTool({ name: 'oml_recall', arguments: { query: kase.query, scope: kase.scope } });
      if (res.isError) e = refusal(res, 'limit.rate');
    }
    assert(e, 'six calls at 3 a minute were all answered');
    assert(e.retryable === true && e.retry_after_seconds >= 1, `not retryable with seconds: ${JSON.stringify(e)}`);
    await limited.close();
    return `retry in ${e.retry_after_seconds} s`;
  });

  await check('a verb outside the catalog is absent (JSON-RPC -32602)', async () => {
    let err;
    try {
      await client.callTool({ name: 'oml_promote', arguments: {} });
    } catch (e) {
      err = e;
    }
    assert(err, 'oml_promote did not fail');
    assert(err.code === -32602 && /Unknown tool: oml_promote/.test(err.message), `got ${err.code} ${err.message}`);
  });

  await client.close();
  if (failed > 0) process.exit(1);
}
