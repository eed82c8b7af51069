// The `runtask serve --exec` handler of the send tests: records what serve handed it (payload file, plan JSON,
// and what a token-less download of the configuration version gets), then prints its verdict as JSON.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const env = process.env;
const payload = JSON.parse(readFileSync(env.RUNTASK_PAYLOAD, 'utf8'));
const plan = env.RUNTASK_PLAN_JSON ? readFileSync(env.RUNTASK_PLAN_JSON, 'utf8') : null;
let cvWithoutToken = null;
if (env.SEND_TEST_PROBE_CV === '1' && payload.configuration_version_download_url) {
  const response = await fetch(payload.configuration_version_download_url, { redirect: 'manual' });
  cvWithoutToken = response.status;
}
if (env.SEND_TEST_OUT) {
  const file = join(env.SEND_TEST_OUT, `${env.RUNTASK_STAGE}.json`);
  writeFileSync(file, JSON.stringify({ payload, plan, cvWithoutToken, stage: env.RUNTASK_STAGE }));
}
const status = env.SEND_TEST_STATUS ?? 'passed';
process.stdout.write(
  JSON.stringify({
    status,
    message: `checked the ${env.RUNTASK_STAGE} request: ${status}`,
    url: 'https://checks.example.com/r/1',
    outcomes: [
      {
        id: 'CHK-1',
        description: 'terraform_data.example would be created',
        tags: { Severity: [{ label: 'Low', level: 'info' }] },
      },
    ],
  }) + '\n',
);
