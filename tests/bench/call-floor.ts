/**
 * The floor under the bench's "CPU per engine call": what one HTTP request and its JSON parse cost a
 * bare client on this machine, nothing of oas. Run as a process of its own (as the poll client is):
 * `node call-floor.js ROUNDS URL [URL ...]` sends ROUNDS rounds of one request to each URL at once
 * through one undici Agent (kept-alive connections, unbounded per origin, as oas's transport), each
 * answer read and parsed as JSON, after 5 rounds not counted (connections, JIT); prints
 * `{ cpuMsPerRequest, requests }` from its own user + system CPU (every thread of the process).
 */
import { Agent, request } from 'undici';

const [roundsText, ...urls] = process.argv.slice(2);
const rounds = Number(roundsText);
if (!Number.isInteger(rounds) || rounds <= 0 || urls.length === 0) {
  process.stderr.write('usage: call-floor ROUNDS URL [URL ...]\n');
  process.exit(2);
}
const agent = new Agent({ keepAliveTimeout: 10_000, connections: null });
const round = () => Promise.all(urls.map(async (url) => {
  const answer = await request(url, { dispatcher: agent, headers: { accept: 'application/json' } });
  return JSON.parse(await answer.body.text()) as unknown;
}));
for (let i = 0; i < 5; i++) await round();
const before = process.cpuUsage();
for (let i = 0; i < rounds; i++) await round();
const used = process.cpuUsage(before);
await agent.close();
process.stdout.write(JSON.stringify({ cpuMsPerRequest: (used.user + used.system) / 1000 / (rounds * urls.length), requests: rounds * urls.length }));
