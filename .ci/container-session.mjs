// Host side of .ci/container.sh: one paid session through the gateway in the container, as a
// fleet backend and a driver's app make it (mint a driver token, quote, start). The simulated
// charger connected to the same published port does the charging; the script prints the
// session id, and container.sh then watches it settle inside the container.
//   node .ci/container-session.mjs <base URL> <API key> <driver email> <charger id> <amount>
import process from 'node:process';
import { setTimeout as sleep } from 'node:timers/promises';

const [url, apiKey, driverEmail, chargerId, amount] = process.argv.slice(2);
if (!url || !apiKey || !driverEmail || !chargerId || !amount) {
  console.error('usage: container-session.mjs <url> <apiKey> <driverEmail> <chargerId> <amount>');
  process.exit(2);
}

async function post(path, body, authorization) {
  const res = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

const minted = await post('/v1/driver-tokens', { driverEmail }, `ApiKey ${apiKey}`);
if (minted.status !== 200) throw new Error(`mint: ${minted.status} ${JSON.stringify(minted.body)}`);
const auth = `Bearer ${minted.body.token}`;
const target = { chargerId, connectorId: '1', driverEmail };

// The charger may still be booting and reporting its vehicle: quote until the charger's own SoC
// is in (the driver token allows 60 quotes and starts a minute; this asks at most 30 times).
let quote;
for (let attempt = 0; attempt < 30; attempt += 1) {
  quote = await post('/v1/sessions/quote', target, auth);
  if (quote.status === 200 && quote.body.socSource === 'charger') break;
  await sleep(1000);
}
if (quote?.status !== 200 || quote.body.socSource !== 'charger') {
  throw new Error(`quote: ${quote?.status} ${JSON.stringify(quote?.body)}`);
}
console.error(`quote: ${JSON.stringify(quote.body)}`);
const started = await post('/v1/sessions', { ...target, amount: Number(amount) }, auth);
if (started.status !== 200)
  throw new Error(`start: ${started.status} ${JSON.stringify(started.body)}`);
console.error(`started: ${JSON.stringify(started.body)}`);
console.log(started.body.sessionId);
