/**
 * Where the public keys come from: a file (`--key` or the configuration file), the `PROVIDER_GPG_KEY`
 * variable, or the keys registered on the registry for the namespace. The core asks a KeySource only when it
 * reaches the signature, so a release that fails earlier costs no network request.
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { UsageError } from '../errors.js';
import { isMirroredKeyFile } from './filenames.js';
import type { GpgKeyResource } from '../terraform/api.js';
import { FileTooLargeError, readCapped, SMALL_FILE_CAPS, tooLargeMessage } from './smallFile.js';
import type { KeyOrigin } from './types.js';

/** One armored public key (or key ring) to try, with a description of where it came from. */
export interface CandidateKey {
  armored: string;
  origin: KeyOrigin;
  /** `--key ./signer.asc`, `PROVIDER_GPG_KEY`, `registry key 23 (namespace acme)`. */
  label: string;
}

/** A place keys come from. */
export interface KeySource {
  readonly origin: KeyOrigin;
  /** Names the source in messages. */
  readonly label: string;
  /** What to do when the signer is not among the keys. */
  readonly missingKeyHint: string;
  load(): Promise<CandidateKey[]>;
}

/** Keys from an armored file; `shown` is the path as the user wrote it. */
export function fileKeySource(path: string, shown: string, origin: 'flag' | 'config'): KeySource {
  const label = origin === 'flag' ? `--key ${shown}` : `key file ${shown} (configuration file)`;
  return {
    origin,
    label,
    missingKeyHint: `Give the public key that made the signature (gpg --armor --export <key id> > key.asc), or sign with the key in ${shown}.`,
    async load() {
      let armored: string;
      try {
        armored = (await readCapped(path, SMALL_FILE_CAPS.key)).toString('utf8');
      } catch (error) {
        if (error instanceof FileTooLargeError) throw keyFileTooLarge(label, error, path);
        const code = (error as NodeJS.ErrnoException).code;
        throw new UsageError(
          `${label}: the file ${code === 'ENOENT' ? 'does not exist' : `cannot be read (${code})`}`,
          {
            hint: 'Export the public key with: gpg --armor --export <key id> > key.asc',
            details: { file: path },
          },
        );
      }
      return [{ armored, origin, label }];
    },
  };
}

/**
 * The signing keys a release folder carries beside its files (`provider mirror --to-dir` writes the key its
 * origin served as `terraform-provider-<name>_<version>_signing-key.asc`); undefined when it holds none.
 */
export async function folderKeySource(dir: string): Promise<KeySource | undefined> {
  const names = (await readdir(dir).catch(() => [] as string[])).filter(isMirroredKeyFile).sort();
  if (names.length === 0) return undefined;
  const label = `key file ${names.join(', ')} (in the release folder)`;
  return {
    origin: 'folder',
    label,
    missingKeyHint: `Give the public key that made the signature with --key <file>; ${names.join(', ')} did not make it.`,
    async load() {
      const keys: CandidateKey[] = [];
      for (const name of names) {
        const file = join(dir, name);
        const one = await fileKeySource(file, name, 'config').load();
        keys.push(
          ...one.map((k) => ({
            ...k,
            origin: 'folder' as const,
            label: `key file ${name} (in the release folder)`,
          })),
        );
      }
      return keys;
    },
  };
}

/** Keys from armored text (the `PROVIDER_GPG_KEY` variable). */
export function textKeySource(armored: string, variable: string): KeySource {
  return {
    origin: 'env',
    label: variable,
    missingKeyHint: `Put the public key that made the signature in ${variable} (gpg --armor --export <key id>).`,
    load: () => Promise.resolve([{ armored, origin: 'env', label: variable }]),
  };
}

/**
 * Looks up the keys registered on the registry for a namespace. The command layer builds it over the run's one
 * registry session; verification only calls it, and never builds a client of its own.
 */
export type RegistryKeyLookup = (namespace: string) => Promise<GpgKeyResource[]>;

/** The keys registered on the registry for a namespace, looked up on first use. */
export function registryKeySource(lookup: RegistryKeyLookup, namespace: string, host: string): KeySource {
  return {
    origin: 'registry',
    label: `the keys registered for ${namespace} on ${host}`,
    missingKeyHint: `Register the signing key with \`provider gpg-keys add <public-key.asc> --namespace ${namespace}\`, or pass it with --key <file>.`,
    async load() {
      const keys = await lookup(namespace);
      return keys.map((k) => ({
        armored: k.attributes['ascii-armor'],
        origin: 'registry' as const,
        label: `registry key ${k.attributes['key-id']} (id ${k.id}, namespace ${k.attributes.namespace})`,
      }));
    },
  };
}

/** The UsageError for a key file above its cap (`shown` names it as the user wrote it, `file` is its path). */
export function keyFileTooLarge(shown: string, error: FileTooLargeError, file: string): UsageError {
  return new UsageError(tooLargeMessage(shown, error, 'an armored public key (a few KB)'), {
    hint: 'Export only the signing key: gpg --armor --export <key id> > key.asc',
    details: { file, bytes: error.bytes, limit: error.limit },
  });
}
