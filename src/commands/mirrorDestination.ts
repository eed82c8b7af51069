/**
 * The private registry as a mirror's destination: `<organization>/<type>`, published by publish's own core from
 * the folder a version was staged into (so the key registered is the origin's armor, and SHA256SUMS and its
 * signature the origin's bytes), and read first so that a version it already holds whole is not downloaded.
 */
import { VerificationError } from '../errors.js';
import { registryPrefix } from '../lockfile/address.js';
import type { MirrorDestination } from '../mirror/run.js';
import { isOriginFailure } from '../mirror/remoteZips.js';
import type { PublishTuning } from '../publish/tuning.js';
import { Output, type TextStream } from '../ui/output.js';
import type { RunContext } from './context.js';
import { runPublish } from './publish.js';
import type { Session } from './session.js';

/** The destination of one run, over the run's registry session. */
export async function privateDestination(
  context: RunContext,
  session: Session,
  tuning: PublishTuning,
): Promise<MirrorDestination> {
  const registry = await session.registry();
  const { client, organization, settings } = registry;
  const [{ getVersion }, { listPlatforms }] = await Promise.all([
    import('../registry/versions.js'),
    import('../registry/providerPlatforms.js'),
  ]);
  const address = (type: string) => ({ organization, namespace: registry.namespace, name: type });
  return {
    host: settings.apiHost.host,
    organization,
    lockPrefix: registryPrefix(settings.apiHost, registry.namespace),
    async holds(type, version, expected) {
      const found = await getVersion(client, address(type), version);
      if (found === undefined) return undefined;
      const a = found.attributes;
      const keyId = a['key-id'];
      if (!a['shasums-uploaded'] || !a['shasums-sig-uploaded']) return { keyId, whole: false };
      const platforms = await listPlatforms(client, address(type), version);
      const whole = expected.every((e) =>
        platforms.some(
          (p) =>
            `${p.attributes.os}_${p.attributes.arch}` === e.platform &&
            p.attributes.filename === e.filename &&
            p.attributes.shasum === e.shasum &&
            p.attributes['provider-binary-uploaded'],
        ),
      );
      return { keyId, whole };
    },
    async publish(folder, progress, remote) {
      // Publish's own report goes into the mirror's: its one JSON document is read from a sink of its own,
      // while its steps and uploads are shown on the mirror's progress (nothing of them with --json).
      let text = '';
      const sink: TextStream = { write: (chunk: string) => ((text += chunk), true) };
      const output = new Output({
        stdout: sink,
        stderr: context.stderr,
        env: context.env,
        json: true,
        quiet: true,
      });
      output.addSecret(await session.token());
      // The key is the folder's (the origin's): a PROVIDER_GPG_KEY meant for the user's own releases is not used.
      const env = { ...context.env, PROVIDER_GPG_KEY: undefined };
      await runPublish({ ...context, env, output }, session, {
        dir: folder,
        // The mirror's own policy decided on the version, under both its addresses, before it was staged.
        policy: false,
        tuning,
        check: true,
        wait: true,
        progress,
        remote,
        undoAfter: isOriginFailure,
      });
      const doc = JSON.parse(text.trim()) as {
        version?: { created?: boolean };
        files?: { uploaded?: boolean }[];
        platforms?: { created?: boolean; uploaded?: boolean }[];
      };
      if (doc.version === undefined) throw new VerificationError('publish gave no report');
      const wrote =
        doc.version.created === true ||
        (doc.files ?? []).some((f) => f.uploaded === true) ||
        (doc.platforms ?? []).some((p) => p.created === true || p.uploaded === true);
      return { wrote };
    },
  };
}
