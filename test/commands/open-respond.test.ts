/**
 * The two steps the read, check and delete cores share: `openVersion` checks the arguments (`<version>` first,
 * then what the core adds) before the session is asked for anything, and `respond` answers with one JSON
 * document `{ ok: true, … }` under `--json`, else prints for people; both exit 0.
 */
import { describe, expect, it, vi } from 'vitest';
import type { RunContext } from '../../src/commands/context.js';
import type { Session } from '../../src/commands/session.js';
import { UsageError } from '../../src/errors.js';
import { openVersion, parsePlatformArgument } from '../../src/commands/manage/context.js';
import { respond } from '../../src/commands/manage/views.js';
import { Output } from '../../src/ui/output.js';
import { Capture } from '../helpers/cli.js';

// A session that fails the test's expectations if it is asked for anything.
function untouchedSession(): { session: Session; registry: ReturnType<typeof vi.fn> } {
  const registry = vi.fn(() => Promise.reject(new Error('the session was asked')));
  return { session: { registry } as unknown as Session, registry };
}

const context = { cwd: '/nowhere' } as RunContext;

describe('openVersion', () => {
  it('refuses a bad <version> before a bad platform, and before asking the session for anything', async () => {
    const { session, registry } = untouchedSession();
    const platform = vi.fn(() => parsePlatformArgument('nonsense'));
    await expect(openVersion(context, session, 'one.two', platform)).rejects.toThrow(
      /"one.two" is not a provider version/,
    );
    expect(platform).not.toHaveBeenCalled();
    await expect(openVersion(context, session, 'v1.2.3', platform)).rejects.toThrow(
      /platform "nonsense" is not <os>_<arch>/,
    );
    await expect(openVersion(context, session, undefined)).rejects.toBeInstanceOf(UsageError);
    expect(registry).not.toHaveBeenCalled();
  });

  it('opens the provider once the arguments hold, the version without its v', async () => {
    const settings = { name: 'example', apiHost: { host: 'registry.example' } };
    const client = {};
    const registry = vi.fn(() =>
      Promise.resolve({ settings, client, organization: 'org', namespace: 'space' }),
    );
    const session = { registry } as unknown as Session;
    const opened = await openVersion(context, session, 'v1.2.3', () => parsePlatformArgument('linux/amd64'));
    expect(opened).toEqual({
      provider: {
        client,
        address: { organization: 'org', namespace: 'space', name: 'example' },
        hostname: 'registry.example',
        source: 'registry.example/space/example',
      },
      version: '1.2.3',
      more: { os: 'linux', arch: 'amd64' },
    });
  });
});

describe('respond', () => {
  const output = (json: boolean) => {
    const stdout = new Capture();
    return { stdout, output: new Output({ stdout, stderr: new Capture(), env: {}, json }) };
  };

  it('answers --json with the one document, ok first, and prints nothing for people', () => {
    const { stdout, output: sink } = output(true);
    const text = vi.fn();
    expect(respond(sink, { version: '1.2.3', platforms: [] }, text)).toBe(0);
    expect(text).not.toHaveBeenCalled();
    expect(stdout.text).toBe(`${JSON.stringify({ ok: true, version: '1.2.3', platforms: [] })}\n`);
    expect(Object.keys(JSON.parse(stdout.text) as object)).toEqual(['ok', 'version', 'platforms']);
  });

  it('otherwise prints for people, and no document', () => {
    const { stdout, output: sink } = output(false);
    expect(respond(sink, { version: '1.2.3' }, () => sink.result('version 1.2.3'))).toBe(0);
    expect(stdout.text).toBe('version 1.2.3\n');
  });
});
