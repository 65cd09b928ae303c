#!/usr/bin/env node
// A league.v2 player that is a real MCP server on the official TypeScript SDK (npm
// `@modelcontextprotocol/sdk`, pinned in package.json; installed by scripts/mcp-ts-env), served the way
// the SDK's own examples serve it, over node:http:
//
//   stateful   the SDK's simpleStreamableHttp example: a transport per session, created by `initialize`;
//              any other POST without a known `Mcp-Session-Id` is answered 400 "Bad Request: No valid
//              session ID provided" (so a plain JSON-RPC call gets 400, not the transport's 406);
//   stateless  the SDK's simpleStatelessStreamableHttp example: a new server and transport per POST
//              (`sessionIdGenerator: undefined`).
//
// Each message it handles is one tool named as the specification names the method: the message under
// one argument (`handle_game_invitation(message)`, the notifications), or its fields as the tool's own
// arguments (`choose_parity(match_id, player_id, …)`). It registers through the gateway's MCP endpoint
// with the SDK's client. Every message is checked (type, protocol, the league's token, sender form); an
// off-spec one is refused with a tool error and counted.
//
// Usage: node player.mjs <league /mcp url> <name> [stateful|stateless]
// Prints one JSON line when the league completes (or it gives up):
// {"name", "player_id", "received": {message_type: count}, "refused": {reason: count}, "sessions",
//  "plain_calls": POSTs answered 400 for want of a session, "errors": [...], "completed"}.

import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { z } from 'zod';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const [leagueUrl, name, mode = 'stateful'] = process.argv.slice(2);
if (!leagueUrl || !name || !['stateful', 'stateless'].includes(mode)) {
  console.error('usage: player.mjs <league /mcp url> <name> [stateful|stateless]');
  process.exit(2);
}
const NOTIFICATIONS = {
  notify_round: 'ROUND_ANNOUNCEMENT',
  notify_match_result: 'GAME_OVER',
  update_standings: 'LEAGUE_STANDINGS_UPDATE',
  notify_round_completed: 'ROUND_COMPLETED',
  notify_league_completed: 'LEAGUE_COMPLETED',
  notify_game_error: 'GAME_ERROR',
};
const TYPED_SENDER = /^(player|referee|league_manager):[A-Z0-9]+$/;
const state = { playerId: null, token: null, leagueToken: null, received: {}, refused: {}, sessions: 0,
  plainCalls: 0, errors: [] };
let finished = false;
let completed;
const done = new Promise((resolve) => { completed = () => { finished = true; resolve(); }; });

const count = (table, key) => { table[key] = (table[key] ?? 0) + 1; };
const now = () => new Date().toISOString();

// Checks one message; an off-spec one is refused (a tool error) and counted by reason.
function received(message, expectedType, role) {
  const refuse = (reason, text) => {
    count(state.refused, reason);
    throw new Error(text);
  };
  if (typeof message !== 'object' || message === null) refuse('not_an_object', 'E002 Invalid Request');
  if (state.leagueToken && message.auth_token !== state.leagueToken) refuse('auth', 'E012 Invalid auth token');
  if (message.protocol !== 'league.v2') refuse('protocol', 'E018 Protocol mismatch');
  if (message.message_type !== expectedType) refuse('message_type', 'E002 Unknown message type');
  const sender = message.sender;
  if (typeof sender !== 'string' || !TYPED_SENDER.test(sender) || !sender.startsWith(`${role}:`)) {
    refuse('sender', 'E003 Sender not registered');
  }
  if (!message.conversation_id) refuse('missing_field', 'E003 Missing required field: conversation_id');
  count(state.received, expectedType);
}

function reply(messageType, conversationId, fields) {
  const message = { protocol: 'league.v2', message_type: messageType, sender: `player:${state.playerId}`,
    timestamp: now(), conversation_id: conversationId, auth_token: state.token, ...fields };
  return { content: [{ type: 'text', text: JSON.stringify(message) }], structuredContent: message };
}

function newServer() {
  const server = new McpServer({ name, version: '1.0.0' });
  const message = { message: z.object({}).passthrough() };
  server.registerTool('handle_game_invitation', { description: 'GAME_INVITATION: always joins.',
    inputSchema: message }, ({ message: invitation }) => {
    received(invitation, 'GAME_INVITATION', 'referee');
    return reply('GAME_JOIN_ACK', invitation.conversation_id, { match_id: invitation.match_id,
      player_id: state.playerId, arrival_timestamp: now(), accept: true });
  });
  const fields = { protocol: z.string(), message_type: z.string(), sender: z.string(), timestamp: z.string(),
    conversation_id: z.string(), match_id: z.string(), player_id: z.string(), game_type: z.string(),
    context: z.object({}).passthrough(), deadline: z.string(), auth_token: z.string().optional() };
  server.registerTool('choose_parity', { description: 'CHOOSE_PARITY_CALL, its fields as arguments.',
    inputSchema: fields }, (call) => {
    received(call, 'CHOOSE_PARITY_CALL', 'referee');
    return reply('CHOOSE_PARITY_RESPONSE', call.conversation_id, { match_id: call.match_id,
      player_id: state.playerId, parity_choice: Math.random() < 0.5 ? 'even' : 'odd' });
  });
  for (const [tool, kind] of Object.entries(NOTIFICATIONS)) {
    server.registerTool(tool, { description: `${kind}: acknowledged.`, inputSchema: message },
      ({ message: notification }) => {
        const role = ['GAME_OVER', 'GAME_ERROR'].includes(kind) ? 'referee' : 'league_manager';
        received(notification, kind, role);
        if (kind === 'LEAGUE_COMPLETED') completed();
        const ack = { status: 'ok' };
        return { content: [{ type: 'text', text: JSON.stringify(ack) }], structuredContent: ack };
      });
  }
  return server;
}

function readBody(request) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    request.on('data', (chunk) => chunks.push(chunk));
    request.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      try { resolve(text ? JSON.parse(text) : undefined); } catch (error) { reject(error); }
    });
    request.on('error', reject);
  });
}

function badRequest(response, message) {
  response.writeHead(400, { 'content-type': 'application/json' });
  response.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
}

// The SDK's simpleStreamableHttp example, over node:http.
const transports = {};
async function stateful(request, response, body) {
  const sessionId = request.headers['mcp-session-id'];
  if (sessionId && transports[sessionId]) {
    await transports[sessionId].handleRequest(request, response, body);
    return;
  }
  if (!sessionId && request.method === 'POST' && isInitializeRequest(body)) {
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => { transports[id] = transport; state.sessions += 1; },
    });
    transport.onclose = () => { if (transport.sessionId) delete transports[transport.sessionId]; };
    await newServer().connect(transport);
    await transport.handleRequest(request, response, body);
    return;
  }
  state.plainCalls += 1;
  badRequest(response, 'Bad Request: No valid session ID provided');
}

// The SDK's simpleStatelessStreamableHttp example, over node:http.
async function stateless(request, response, body) {
  if (request.method !== 'POST') {
    response.writeHead(405, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed.' }, id: null }));
    return;
  }
  const server = newServer();
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
  response.on('close', () => { transport.close(); server.close(); });
  await server.connect(transport);
  await transport.handleRequest(request, response, body);
}

async function register(port) {
  const request = { protocol: 'league.v2', message_type: 'LEAGUE_REGISTER_REQUEST',
    sender: `player:${name.toUpperCase()}`, timestamp: now(), conversation_id: `conv-${name}-register`,
    player_meta: { display_name: name, version: '1.0.0', game_types: ['even_odd'],
      contact_endpoint: `http://127.0.0.1:${port}/mcp`, protocol_version: '2.1.0' } };
  const client = new Client({ name, version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(leagueUrl)));
  try {
    const answer = await client.callTool({ name: 'register_player', arguments: request });
    const result = answer.structuredContent;
    if (answer.isError || !result || result.status !== 'ACCEPTED') {
      state.errors.push(`registration refused: ${JSON.stringify(answer)}`);
      return false;
    }
    state.playerId = result.player_id;
    state.token = result.auth_token;
    state.leagueToken = result.league_auth_token ?? null;
    return true;
  } finally {
    await client.close();
  }
}

const web = http.createServer(async (request, response) => {
  try {
    const body = request.method === 'POST' ? await readBody(request) : undefined;
    await (mode === 'stateful' ? stateful : stateless)(request, response, body);
  } catch (error) {
    state.errors.push(String(error));
    if (!response.headersSent) badRequest(response, `Bad Request: ${error}`);
  }
});
await new Promise((resolve) => web.listen(0, '127.0.0.1', resolve));
try {
  if (await register(web.address().port)) {
    const giveUp = new Promise((_, reject) => setTimeout(() => reject(new Error('no LEAGUE_COMPLETED in 300 s')), 300_000).unref());
    await Promise.race([done, giveUp]);
  }
} catch (error) {
  state.errors.push(String(error));
}
console.log(JSON.stringify({ name, player_id: state.playerId, received: state.received, refused: state.refused,
  sessions: state.sessions, plain_calls: state.plainCalls, errors: state.errors, completed: finished }));
web.closeAllConnections();
web.close();
process.exit(0);
