/**
 * A large scanner report through a real `runtask serve` (issue 33): a valid SARIF document with 40 000 distinct
 * rules and 20 000 results (what a scan of a repository of 20 000 files prints) used to hold the integrator's one
 * thread for tens of seconds in the schema's uniqueness check, so that /healthz and every other request waited.
 * Here /healthz is probed from the moment the handler has exited (the integrator's `handler.exited` line, which
 * comes just before the report is read) until the check is logged finished: at least one probe sent after the
 * handler exited must be answered before the report is read to its end. Then the report's result reaches the
 * platform, right. Ordering and outcomes only: no duration is asserted.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { POST_PLAN_REQUEST } from '../documented-payloads.js';
import { KEY, bytesOf, post, requestFor } from '../helpers.js';
import { TestPlatform, statusOf } from '../platform.js';
import { ensureBuilt, spawnServe, type ServeProcess } from '../serveProcess.js';
import { tempDir } from '../../helpers/tmp.js';

const platform = TestPlatform.perFile();
let dir: string;
let serve: ServeProcess | undefined;

beforeAll(() => {
  ensureBuilt();
  dir = tempDir('report-size');
}, 120_000);
afterAll(async () => {
  await serve?.stop();
});

const RULES = 40_000;
const RESULTS = 20_000;

/** The report: every rule distinct; one result per file, every 1000th an error, the others notes. */
function largeReport(): string {
  const rules = Array.from({ length: RULES }, (_, i) => ({
    id: `BIG${i}`,
    shortDescription: { text: `rule ${i}` },
    defaultConfiguration: { level: 'note' },
  }));
  const results = Array.from({ length: RESULTS }, (_, i) => ({
    ruleId: `BIG${(i * 7) % RULES}`,
    ...(i % 1000 === 0 ? { level: 'error' } : {}),
    message: { text: `finding in file ${i}` },
    locations: [
      { physicalLocation: { artifactLocation: { uri: `src/f${i}.tf` }, region: { startLine: 1 } } },
    ],
  }));
  return JSON.stringify({
    version: '2.1.0',
    runs: [{ tool: { driver: { name: 'bigscan', rules } }, results }],
  });
}

describe('a report with 40 000 rules', () => {
  it('/healthz answers while the report is being read, and the result is right', async () => {
    const file = join(dir, 'report.sarif');
    writeFileSync(file, largeReport());
    serve = await spawnServe({
      platform,
      stateDir: join(dir, 'state'),
      exec: `cat '${file}'`,
      key: KEY,
      cwd: dir,
      args: ['--verbose', '--timeout', '5m'],
    });
    const p = serve;
    const request = requestFor(POST_PLAN_REQUEST, platform);
    expect((await post(p.url, bytesOf(request))).status).toBe(200);
    await p.waitForEvent('handler.exited', (l) => l.run_id === request.run_id);
    const finished = (): boolean =>
      p.events().some((l) => l.event === 'handler.finished' && l.run_id === request.run_id);
    // Each probe is sent after the handler exited; whether the check was logged finished is read when it answers.
    const probes: { status: number; beforeFinished: boolean }[] = [];
    while (!finished()) {
      const { status } = await p.health();
      probes.push({ status, beforeFinished: !finished() });
    }
    expect(probes.filter((probe) => probe.status === 200 && probe.beforeFinished).length).toBeGreaterThan(0);

    const final = await p.orExit(
      platform.waitFor(
        (r) =>
          r.method === 'PATCH' &&
          r.path.includes(request.task_result_id) &&
          ['passed', 'failed'].includes(statusOf(r) ?? ''),
      ),
    );
    const attributes = (final.json as { data: { attributes: { status: string; message: string } } }).data
      .attributes;
    expect(attributes.status).toBe('failed');
    expect(attributes.message).toMatch(/^20 errors, 19980 notes in bigscan \(fails on error\)/);
    const finishedLine = p.events().find((l) => l.event === 'handler.finished');
    expect(finishedLine?.msg).toBe('handler finished: failed (sarif)');
  }, 600_000);
});
