/**
 * What real release pipelines produce, through `provider verify` (in-process CLI, `--key`, so no request at all)
 * and `provider publish` against an emulator (which must then make no write): goreleaser's artifacts.json as a
 * second witness, extra SHA256SUMS lines (SBOMs, attestations), and the named signature failures — goreleaser
 * 2.15.0/2.15.1's checksum file listing its own signature, an expired signing subkey, a signature over another
 * checksum file. Shapes and sources are cited at each case.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as openpgp from 'openpgp';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Emulator } from '../../../src/emulator/server.js';
import { runCli } from '../../helpers/cli.js';
import { emulatorPerTest } from '../../helpers/emulator/index.js';
import { tempRoot } from '../../helpers/tmp.js';
import {
  FIXTURES,
  MANIFEST,
  R,
  SIG,
  SUMS,
  copyRelease,
  editArtifacts,
  editSums,
  keyId,
  publicKeyPath,
  runCliAtHome,
  signDetached,
  zipName,
} from '../../release/helpers.js';
import { FAST, writeRequests } from '../publish/helpers.js';

interface Doc {
  ok: boolean;
  warnings?: string[];
  artifactsJson?: { file: string; archives: number };
  error?: { code: string; message: string; hint: string; details: Record<string, unknown> };
}

const sha256 = (bytes: Uint8Array | string): string => createHash('sha256').update(bytes).digest('hex');
const fileSha = (dist: string, name: string): string => sha256(fs.readFileSync(path.join(dist, name)));
const signerSecret = fs.readFileSync(path.join(FIXTURES, 'keys', 'signer.sec.asc'), 'utf8');

/** `provider verify --json --key <key>` on a release folder. */
async function verify(dist: string, key = publicKeyPath('signer')): Promise<{ code: number; doc: Doc }> {
  const result = await runCliAtHome(['verify', dist, '--json', '--key', key], { cwd: path.dirname(dist) });
  return { code: result.exitCode, doc: JSON.parse(result.stdout) as Doc };
}

/**
 * Adds `lines` to SHA256SUMS in goreleaser's order, by file name byte for byte ("sorted to ensure the signature
 * is deterministic": goreleaser/goreleaser internal/pipe/checksums/checksums.go); re-signs unless told not to.
 */
async function addLines(dist: string, lines: string[], resign = true): Promise<void> {
  const byName = (a: string, b: string): number => (a.slice(66) < b.slice(66) ? -1 : 1);
  await editSums(dist, (l) => [...l, ...lines].sort(byName), { resign });
}

const emulator = emulatorPerTest();

/** `provider publish <dist> --key <key>` against an emulator; returns the result and the writes it saw. */
async function publish(dist: string, key: string): Promise<{ code: number; doc: Doc; writes: string[] }> {
  const e: Emulator = await emulator();
  const result = await runCli(
    ['publish', dist, '--json', '--key', key, '--hostname', e.url, '--organization', e.organization],
    { env: { TFE_TOKEN: e.ownerToken, ...FAST }, cwd: tempRoot() },
  );
  return { code: result.exitCode, doc: JSON.parse(result.stdout) as Doc, writes: writeRequests(e) };
}

describe("goreleaser's artifacts.json", () => {
  it('is checked on the good release and named in the --json document', async () => {
    const { code, doc } = await verify(copyRelease());
    expect(code).toBe(0);
    expect(doc.artifactsJson).toEqual({ file: 'artifacts.json', archives: 5 });
    expect(doc.warnings).toEqual([]);
  });

  it('is not required (no artifactsJson in the document without it)', async () => {
    const dist = copyRelease();
    fs.rmSync(path.join(dist, 'artifacts.json'));
    const { code, doc } = await verify(dist);
    expect(code).toBe(0);
    expect(doc.artifactsJson).toBeUndefined();
  });

  it('exit 3 when extra.Checksum of an archive differs from the file (SHA256SUMS agreeing with the file)', async () => {
    // Shape: goreleaser/goreleaser www/content/customization/general/artifacts.md ("Checksum": "sha256:abc123...").
    const dist = copyRelease();
    const zip = zipName('linux_amd64');
    editArtifacts(dist, (list) =>
      list.map((a) =>
        a.name === zip ? { ...a, extra: { ...a.extra, Checksum: `sha256:${'a'.repeat(64)}` } } : a,
      ),
    );
    const { code, doc } = await verify(dist);
    expect(code).toBe(3);
    expect(doc.error!.message).toBe(
      `artifacts.json says ${zip} has sha256:${'a'.repeat(64)}, the file hashes to ${fileSha(dist, zip)} (${SUMS} line 3 agrees with the file)`,
    );
    expect(doc.error!.hint).toContain('goreleaser release --clean');
    expect(doc.error!.hint).toContain('never mix the dist folders of two runs');
    const published = await publish(dist, publicKeyPath('signer'));
    expect([published.code, published.doc.error!.message]).toEqual([3, doc.error!.message]);
    expect(published.writes).toEqual([]);
  });

  const disagreements: [string, (dist: string) => void, string][] = [
    [
      'the checksum artifact names another run’s SHA256SUMS',
      (d) =>
        editArtifacts(d, (l) =>
          l.map((a) => (a.type === 'Checksum' ? { ...a, name: a.name.replace('1.2.3', '1.2.2') } : a)),
        ),
      `artifacts.json says the checksum file is terraform-provider-example_1.2.2_SHA256SUMS, the folder's is ${SUMS}`,
    ],
    [
      'the signature artifact names another signature',
      (d) =>
        editArtifacts(d, (l) =>
          l.map((a) => (a.type === 'Signature' ? { ...a, name: a.name.replace('1.2.3', '1.2.2') } : a)),
        ),
      `artifacts.json says the signature is terraform-provider-example_1.2.2_SHA256SUMS.sig, the folder's is ${SIG}`,
    ],
    [
      'a manifest artifact that is not the folder’s manifest',
      // The manifest is a `File` artifact named by release.extra_files' name_template (a goreleaser provider
      // release's artifacts.json, code index id 44779040871: "type":"File", name "…_manifest.json").
      (d) =>
        editArtifacts(d, (l) => [
          ...l,
          {
            name: 'terraform-provider-example_1.2.2_manifest.json',
            path: 'terraform-registry-manifest.json',
            type: 'File',
          },
        ]),
      `artifacts.json says the manifest is terraform-provider-example_1.2.2_manifest.json, the folder's is ${MANIFEST}`,
    ],
    [
      'a zip in the folder that artifacts.json does not list',
      (d) => editArtifacts(d, (l) => l.filter((a) => a.name !== zipName('darwin_arm64'))),
      `${zipName('darwin_arm64')} is in the folder, but artifacts.json does not list it: the archive comes from another goreleaser run`,
    ],
    [
      'an archive artifacts.json lists that is not in the folder',
      (d) =>
        editArtifacts(d, (l) => [
          ...l,
          { ...l[0]!, name: zipName('freebsd_amd64'), path: `dist/${zipName('freebsd_amd64')}` },
        ]),
      `artifacts.json lists ${zipName('freebsd_amd64')}, which is not in`,
    ],
  ];

  it.each(disagreements)('exit 3 when %s', async (_name, mutate, message) => {
    const dist = copyRelease();
    mutate(dist);
    const { code, doc } = await verify(dist);
    expect(code).toBe(3);
    expect(doc.error!.message).toContain(message);
    expect(doc.error!.hint).toContain('never mix the dist folders of two runs');
  });

  it('exit 3 when extra.Checksum is not sha256:<hex>', async () => {
    const dist = copyRelease();
    editArtifacts(dist, (l) =>
      l.map((a) => (a.type === 'Archive' ? { ...a, extra: { ...a.extra, Checksum: 'sha512:00' } } : a)),
    );
    const { code, doc } = await verify(dist);
    expect(code).toBe(3);
    expect(doc.error!.message).toContain(
      'the checksum "sha512:00"; goreleaser writes "sha256:<64 hex digits>"',
    );
  });

  it('warns, and checks against SHA256SUMS only, when archives carry no extra.Checksum (goreleaser < 1.13)', async () => {
    // extra.Checksum came with goreleaser/goreleaser#3548 (v1.13).
    const dist = copyRelease();
    editArtifacts(dist, (l) => l.map((a) => (a.type === 'Archive' ? { ...a, extra: { Format: 'zip' } } : a)));
    const { code, doc } = await verify(dist);
    expect(code).toBe(0);
    expect(doc.warnings).toEqual([
      `artifacts.json gives no extra.Checksum for any archive (goreleaser before 1.13 wrote none); the archives are checked against ${SUMS} only`,
    ]);
    expect(doc.artifactsJson).toEqual({ file: 'artifacts.json', archives: 5 });
  });

  const malformed: [string, (file: string) => void, string][] = [
    ['not JSON', (f) => fs.writeFileSync(f, '[{"name":'), 'artifacts.json is not JSON ('],
    [
      "not goreleaser's list",
      (f) => fs.writeFileSync(f, '[{"name":"x","path":"dist/x","type":7}]'),
      "artifacts.json is not goreleaser's artifact list (0.type: ",
    ],
    [
      'above its cap (16 MiB)',
      (f) => {
        fs.writeFileSync(f, '');
        fs.truncateSync(f, 16 * 1024 * 1024 + 1);
      },
      'artifacts.json is 16.0 MiB;',
    ],
  ];

  it.each(malformed)('is only a warning naming the file when %s', async (_name, write, warning) => {
    const dist = copyRelease();
    write(path.join(dist, 'artifacts.json'));
    const { code, doc } = await verify(dist);
    expect(code).toBe(0);
    expect(doc.warnings).toHaveLength(1);
    expect(doc.warnings![0]).toContain(warning);
    expect(doc.warnings![0]).toContain('it is not used to cross-check the release');
    expect(doc.artifactsJson).toBeUndefined();
  });
});

describe('extra lines in SHA256SUMS', () => {
  // Pipelines list SBOMs and attestations in the signed sums (openai/terraform-provider-openai#98: 13 SPDX SBOMs);
  // Terraform only looks up the zip's own line (hashicorp/terraform: internal/getproviders/
  // package_authentication.go) but records every line as zh: in lock files (hashicorp/terraform#33599).
  it('are tolerated with one warning naming the files and lines, when the signature covers them', async () => {
    const dist = copyRelease();
    const sbom = `${R}_linux_amd64.sbom.json`;
    const intoto = 'multiple.intoto.jsonl';
    fs.writeFileSync(path.join(dist, sbom), '{"spdxVersion":"SPDX-2.3"}\n');
    fs.writeFileSync(path.join(dist, intoto), '{"payloadType":"application/vnd.in-toto+json"}\n');
    await addLines(dist, [
      `${fileSha(dist, sbom)}  ${sbom}`,
      `${fileSha(dist, intoto)}  ${intoto}`,
      `${sha256('src')}  ${R}_source.tar.gz`,
    ]);
    const { code, doc } = await verify(dist);
    expect(code).toBe(0);
    expect(doc.warnings).toEqual([
      `${SUMS} lists 3 files besides the archives and the manifest: line 1 ${intoto}, line 4 ${sbom}, line 8 ${R}_source.tar.gz (not in the folder). ` +
        'Terraform ignores such lines when installing, but records each as a zh: hash in .terraform.lock.hcl, and the public registry refuses the release; ' +
        'list only the zips and the manifest, and give SBOMs, attestations and other files a checksum file of their own',
    ]);
  });

  it('still have their hash checked when the file is there', async () => {
    const dist = copyRelease();
    const sbom = `${R}_linux_amd64.sbom.json`;
    fs.writeFileSync(path.join(dist, sbom), '{}\n');
    await addLines(dist, [`${sha256('other')}  ${sbom}`]);
    const { code, doc } = await verify(dist);
    expect(code).toBe(3);
    expect(doc.error!.message).toContain(`${sbom} does not match ${SUMS} line 3`);
  });

  it('a listed zip of the provider that is missing stays an error', async () => {
    const dist = copyRelease();
    await addLines(dist, [`${sha256('x')}  ${zipName('freebsd_amd64')}`]);
    const { code, doc } = await verify(dist);
    expect(code).toBe(3);
    expect(doc.error!.message).toContain(`${SUMS} line 3 lists ${zipName('freebsd_amd64')}, which is not in`);
  });
});

describe('named signature failures', () => {
  /** verify and publish agree: exit 3 with the same message, and publish wrote nothing. */
  async function refused(dist: string, key = publicKeyPath('signer')): Promise<NonNullable<Doc['error']>> {
    const verified = await verify(dist, key);
    expect(verified.code).toBe(3);
    const published = await publish(dist, key);
    expect(published.code).toBe(3);
    expect(published.doc.error!.message).toBe(verified.doc.error!.message);
    expect(published.writes).toEqual([]);
    return verified.doc.error!;
  }

  /** The goreleaser 2.15.0/2.15.1 shape: the signed sums, then the .sig's own line added after signing. */
  async function goreleaser215(dist: string): Promise<void> {
    await addLines(dist, [`${fileSha(dist, SIG)}  ${SIG}`], false);
  }

  it('goreleaser 2.15.0/2.15.1: SHA256SUMS lists its own signature, added after signing', async () => {
    // goreleaser/goreleaser#6508 ("checksums.txt.sig hash is added back into checksums.txt"), #6514 (2.15.1,
    // signs.artifacts: checksum); provider shape: cloudflare/terraform-provider-cloudflare#6990 ("an entry for
    // the SHA256SUMS.sig file"); the way out: opentofu/registry#3974 (pin v2.14.3, ship a new patch version).
    const dist = copyRelease();
    await goreleaser215(dist);
    const error = await refused(dist);
    expect(error.message).toContain(
      `${SUMS} lists its own signature ${SIG} (line 1), so it was rewritten after it was signed and the signature cannot verify`,
    );
    expect(error.message).toContain(
      'goreleaser 2.15.0 and 2.15.1 rewrote the checksum file after signing it',
    );
    expect(error.message).toContain('the signature does verify over the file without its .sig lines');
    expect(error.hint).toContain('Pin goreleaser 2.14.3 or upgrade past 2.15.1');
    expect(error.hint).toContain('publish a NEW patch version; never overwrite a published one');
    expect(error.details).toMatchObject({ line: 1, verifiesWithoutSigLines: true });
  });

  it('goreleaser 2.15.0 with signs.artifacts: all (every .sig listed) is named the same way', async () => {
    const dist = copyRelease();
    const zip = zipName('linux_amd64');
    fs.writeFileSync(
      path.join(dist, `${zip}.sig`),
      await signDetached(fs.readFileSync(path.join(dist, zip)), signerSecret),
    );
    await addLines(
      dist,
      [`${fileSha(dist, `${zip}.sig`)}  ${zip}.sig`, `${fileSha(dist, SIG)}  ${SIG}`],
      false,
    );
    const error = await refused(dist);
    expect(error.message).toContain(`lists its own signature ${SIG} (line 1)`);
    expect(error.message).toContain('the signature does verify over the file without its .sig lines');
  });

  it('a sums file listing its own .sig that was signed again still gets a warning', async () => {
    const dist = copyRelease();
    await addLines(dist, [`${fileSha(dist, SIG)}  ${SIG}`]);
    const { code, doc } = await verify(dist);
    expect(code).toBe(0);
    expect(doc.warnings).toEqual([
      expect.stringContaining(
        `${SUMS} line 1 lists its own signature ${SIG}, as goreleaser 2.15.0 and 2.15.1 wrote it`,
      ),
    ]);
  });

  it('a valid signature by the right key over a different SHA256SUMS (another run)', async () => {
    // The sums of another run: one zip rebuilt (different hash), signed by the same key.
    const dist = copyRelease();
    const sums = fs.readFileSync(path.join(dist, SUMS), 'utf8');
    const other = sums.replace(fileSha(dist, zipName('linux_amd64')), sha256('rebuilt'));
    // A minute after the fixture key was made (openpgp.js refuses to sign before a key's creation).
    const signerKey = await openpgp.readKey({ armoredKey: fs.readFileSync(publicKeyPath('signer'), 'utf8') });
    const when = new Date(signerKey.getCreationTime().getTime() + 60_000);
    fs.writeFileSync(
      path.join(dist, SIG),
      await signDetached(new TextEncoder().encode(other), signerSecret, when),
    );
    const error = await refused(dist);
    expect(error.message).toBe(
      `${SIG} was made by key ${keyId('signer')} on ${when.toISOString()}, but over a different checksum file than ${SUMS}: the signed digest does not match its bytes`,
    );
    expect(error.hint).toBe(
      `Sign this ${SUMS} again (gpg --detach-sign ${SUMS}); never mix the dist folders of two runs (goreleaser release --clean). ` +
        'If this version was already published, publish a NEW patch version instead; never overwrite a published one.',
    );
  });

  describe('a signing subkey that expired', () => {
    const created = new Date('2020-01-01T00:00:00Z');
    const DAY_S = 24 * 3600;
    let keyFile: string;
    let fingerprint: string;
    let subkeyId: string;
    let primaryId: string;
    let validThenSig: Uint8Array;
    let expiredThenSig: Uint8Array;

    beforeAll(async () => {
      const sums = fs.readFileSync(path.join(FIXTURES, 'release', SUMS));
      const dir = tempRoot();
      // RSA (the registry accepts no ECC), certify-only primary and a signing subkey expiring after one day.
      const expiring = await openpgp.generateKey({
        type: 'rsa',
        rsaBits: 2048,
        userIDs: [{ name: 'Subkey Expiry Test' }],
        date: created,
        subkeys: [{ sign: true, keyExpirationTime: DAY_S }],
        format: 'object',
      });
      keyFile = path.join(dir, 'expiring.asc');
      fs.writeFileSync(keyFile, expiring.publicKey.armor());
      fingerprint = expiring.publicKey.getFingerprint().toUpperCase();
      primaryId = expiring.publicKey.getKeyID().toHex().toUpperCase();
      subkeyId = expiring.publicKey.subkeys[0]!.getKeyID().toHex().toUpperCase();
      validThenSig = await signDetached(sums, expiring.privateKey.armor(), new Date('2020-01-01T12:00:00Z'));

      // Signed on day 10, after the subkey's expiry on day 2 (a signing tool that ignored the expiry, or a wrong
      // clock): the binding is made to say "never expires" in memory only, for openpgp.js to sign; the public key
      // given to verify is the one generated, which says day 2.
      const binding = expiring.privateKey.subkeys[0]!.bindingSignatures[0]!;
      binding.keyExpirationTime = 0;
      binding.keyNeverExpires = true;
      // The object itself, not its armor: re-read, the altered binding would no longer verify.
      expiredThenSig = (await openpgp.sign({
        message: await openpgp.createMessage({ binary: sums }),
        signingKeys: expiring.privateKey,
        detached: true,
        format: 'binary',
        date: new Date('2020-01-10T00:00:00Z'),
      })) as Uint8Array;
    }, 120_000);

    it('names the subkey, its expiry and the way out (signed while valid)', async () => {
      const dist = copyRelease();
      fs.writeFileSync(path.join(dist, SIG), validThenSig);
      const error = await refused(dist, keyFile);
      expect(error.message).toBe(
        `${SIG}: the signing subkey ${subkeyId} of key ${primaryId} expired on 2020-01-02 (it made this signature on 2020-01-01, while it was valid); signatures by expired keys fail in Terraform 1.6.0 ("openpgp: key expired", hashicorp/terraform#34004) and in OpenTofu with OPENTOFU_ENFORCE_GPG_EXPIRATION=true, which it warns will become the default`,
      );
      expect(error.hint).toContain(`gpg --quick-set-expire ${fingerprint} 1y '*'`);
      expect(error.hint).toContain(`gpg --armor --export ${fingerprint} > key.asc`);
      expect(error.hint).toContain('provider gpg-keys add key.asc');
      expect(error.hint).toContain(`gpg --detach-sign ${SUMS}`);
      expect(error.hint).toContain('publish a NEW patch version instead; never overwrite a published one');
    });

    it('says when the subkey had already expired when it signed', async () => {
      const dist = copyRelease();
      fs.writeFileSync(path.join(dist, SIG), expiredThenSig);
      const error = await refused(dist, keyFile);
      expect(error.message).toBe(
        `${SIG}: the signing subkey ${subkeyId} of key ${primaryId} expired on 2020-01-02, before it made this signature on 2020-01-10; signatures by expired keys fail in Terraform 1.6.0 ("openpgp: key expired", hashicorp/terraform#34004) and in OpenTofu with OPENTOFU_ENFORCE_GPG_EXPIRATION=true, which it warns will become the default`,
      );
      expect(error.details).toMatchObject({
        expires: '2020-01-02T00:00:00.000Z',
        signed: '2020-01-10T00:00:00.000Z',
      });
    });
  });
});
