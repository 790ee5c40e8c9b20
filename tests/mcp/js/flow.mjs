// The agent flow with the official TypeScript SDK client, over Streamable HTTP or stdio:
// capabilities → search → fetch with handles → propose (dry run, then real) → turn status.
// Usage: node flow.mjs '<json>' where json = {transport: "http"|"stdio", url?, token?, command?, args?, env?,
// query, text, key}. Prints one JSON document with what each step returned.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const spec = JSON.parse(process.argv[2]);
const transport = spec.transport === "stdio"
  ? new StdioClientTransport({ command: spec.command, args: spec.args, env: spec.env, stderr: "pipe" })
  : new StreamableHTTPClientTransport(new URL(spec.url), {
      requestInit: { headers: { Authorization: `Bearer ${spec.token}` } },
    });
const client = new Client({ name: "fastpad-ts-flow", version: "1.0.0" });
await client.connect(transport);

const call = async (name, args) => {
  const result = await client.callTool({ name, arguments: args });
  if (result.isError) throw new Error(`${name}: ${JSON.stringify(result.structuredContent)}`);
  return result.structuredContent;
};

const out = { protocol: transport.protocolVersion ?? null, server: client.getServerVersion() };
out.tools = (await client.listTools()).tools.map((t) => t.name);
const { session } = await call("fastpad_capabilities", {});
const search = await call("fastpad_search", { session, query: spec.query });
out.hits = search.hits.map((h) => h.note_id);
const noteId = search.hits[0].note_id;
const fetched = (await call("fastpad_fetch", { session, note_ids: [noteId], with_handles: true })).notes[0];
out.markdown = fetched.markdown;
const handles = Object.values(fetched.handles);
const proposal = {
  session, note_id: noteId, expected_frontier: fetched.frontier, idempotency_key: spec.key,
  ops: [{ op: "insert_after", handle: handles[handles.length - 1], text: spec.text }],
};
const dry = await call("fastpad_propose", { ...proposal, dry_run: true });
out.dry_run = { turn: dry.turn, diffs: dry.diffs };
const real = await call("fastpad_propose", proposal);
out.proposal = { turn: real.turn, diffs: real.diffs };
out.status = (await call("fastpad_turn", { session, action: "status", turn_id: real.turn.turn_id })).turn;
// A failed call is a result, not an exception: its problem document must satisfy the tool's output
// schema too (this client validates structuredContent even when isError is set).
const failed = await client.callTool({ name: "fastpad_fetch", arguments: { note_ids: [noteId] } });
out.failure = { isError: failed.isError, problem: failed.structuredContent };
await client.close();
process.stdout.write(JSON.stringify(out));
