// The test handler for `runtask serve --exec`: reports what it was given (environment, payload file, plan
// JSON, working directory) to the test platform, waits for its orders, then prints and exits as told.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';

const env = process.env;
const base = env.TEST_PLATFORM_URL;
const payload = JSON.parse(readFileSync(env.RUNTASK_PAYLOAD, 'utf8'));
const plan = env.RUNTASK_PLAN_JSON ? JSON.parse(readFileSync(env.RUNTASK_PLAN_JSON, 'utf8')) : null;
const key = env.RUNTASK_RUN_ID;

async function post(path, body) {
  const response = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return response.json();
}

const orders = await post('/handler/start', {
  key,
  env: { ...env },
  payload,
  payloadFile: env.RUNTASK_PAYLOAD,
  plan,
  cwd: process.cwd(),
  pid: process.pid,
});
if (orders.spawnChild) {
  const child = spawn('sleep', ['300'], { stdio: 'ignore' });
  await post('/handler/child', { key, pid: child.pid });
}
if (orders.hang) {
  setInterval(() => undefined, 60_000);
} else {
  if (orders.stderr) process.stderr.write(orders.stderr);
  if (orders.stdout) process.stdout.write(orders.stdout);
  process.exitCode = orders.exitCode ?? 0;
}
