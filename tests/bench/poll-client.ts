/**
 * The bench's polling client, run as a process of its own: `node poll-client.js URL COUNT`.
 * Sends COUNT sequential GETs of URL on one kept-alive connection and prints the round-trip
 * times in milliseconds as a JSON array. A separate small process, so that the bench's own heap
 * (the fakes, the earlier runs' results) and its garbage collector are not in the figures.
 */
import http from 'node:http';

const [url, countText] = process.argv.slice(2);
const count = Number(countText);
if (!url || !Number.isInteger(count) || count <= 0) {
  process.stderr.write('usage: poll-client URL COUNT\n');
  process.exit(2);
}
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

function get(): Promise<number> {
  return new Promise((resolve, reject) => {
    http.get(url!, { agent }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    }).on('error', reject);
  });
}

for (let i = 0; i < 50; i++) await get(); // warm-up: connection, JIT
const times: number[] = [];
let refused = 0;
for (let i = 0; i < count; i++) {
  const started = performance.now();
  if ((await get()) !== 200) refused++;
  times.push(performance.now() - started);
}
agent.destroy();
process.stdout.write(JSON.stringify({ times, refused }));
