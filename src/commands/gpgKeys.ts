/**
 * `provider gpg-keys list` and `gpg-keys add <armored-public-key-file>`: the signing keys registered for the
 * namespace. A secret key is refused before anything is sent; anything else the registry judges itself
 * (it accepts only RSA and DSA keys), and its refusal is shown in its own words.
 */
import * as path from 'node:path';
import * as openpgp from 'openpgp';
import { ApiError, UnexpectedAnswerError, UsageError } from '../errors.js';
import { addGpgKey, listGpgKeys } from '../registry/gpgKeys.js';
import { keyFileTooLarge } from '../release/keySource.js';
import { FileTooLargeError, readCapped, SMALL_FILE_CAPS } from '../release/smallFile.js';
import { printTable } from '../ui/table.js';
import { gpgKeyView, respond } from './manage/views.js';
import type { SessionCore } from './session.js';

const EXPORT_HINT = 'Export the public key with: gpg --armor --export <key id> > public-key.asc';
const WRITE_HINT =
  'Adding keys needs a token of the owners team, or of a team with the "Manage Private Registry" permission; check --organization/--namespace too.';

/** Lists the namespace's keys: key id, created, id. */
export const runGpgKeysList: SessionCore<unknown> = async (context, session) => {
  const { output } = context;
  const { client, namespace, settings } = await session.registry();
  const keys = (await listGpgKeys(client, namespace)).map(gpgKeyView);
  const hostname = settings.apiHost.host;
  return respond(output, { hostname, namespace, keys }, () => {
    if (keys.length === 0) {
      output.info(
        `No keys are registered for ${namespace} on ${hostname}; add one with provider gpg-keys add <public-key.asc>.`,
      );
      return;
    }
    printTable(
      output,
      ['KEY ID', 'CREATED', 'ID'],
      keys.map((k) => [k.keyId, k.createdAt, k.id]),
      [2],
    );
  });
};

/** Registers an armored public key for the namespace and prints the key id the registry gave it. */
export const runGpgKeysAdd: SessionCore<{ file: string | undefined }> = async (context, session, options) => {
  const { output } = context;
  const shown = options.file ?? '';
  const armored = await readKeyFile(path.resolve(context.cwd, shown), shown);
  const local = await inspectPublicKey(armored, shown);
  const { client, namespace, settings } = await session.registry();
  const hostname = settings.apiHost.host;
  const existing = (await listGpgKeys(client, namespace)).find(
    (k) => k.attributes['key-id'].toUpperCase() === local.keyId,
  );
  if (existing) {
    const view = gpgKeyView(existing);
    return respond(output, { alreadyRegistered: true, hostname, key: view }, () =>
      output.result(
        `Key ${view.keyId} is already registered for ${namespace} on ${hostname} (id ${view.id}); nothing to do.`,
      ),
    );
  }
  let added;
  try {
    added = await addGpgKey(client, namespace, armored);
  } catch (error) {
    throw explainRefusal(error, local, shown, namespace);
  }
  const view = gpgKeyView(added);
  const { algorithm, userId } = local;
  return respond(output, { alreadyRegistered: false, hostname, key: view, algorithm, userId }, () =>
    output.result(
      `Registered key ${view.keyId} (${algorithm}, ${userId}) for ${namespace} on ${hostname} (id ${view.id})`,
    ),
  );
};

interface LocalKey {
  keyId: string;
  algorithm: string;
  userId: string;
}

async function readKeyFile(file: string, shown: string): Promise<string> {
  try {
    return (await readCapped(file, SMALL_FILE_CAPS.key)).toString('utf8');
  } catch (error) {
    if (error instanceof FileTooLargeError) throw keyFileTooLarge(shown, error, shown);
    const code = (error as NodeJS.ErrnoException).code;
    throw new UsageError(
      `${shown}: the key file ${code === 'ENOENT' ? 'does not exist' : `cannot be read (${code})`}`,
      {
        hint: EXPORT_HINT,
        details: { file: shown },
      },
    );
  }
}

/** Reads the key locally: a secret key or unreadable text is refused here and never sent. */
async function inspectPublicKey(armored: string, shown: string): Promise<LocalKey> {
  if (armored.includes('-----BEGIN PGP PRIVATE KEY BLOCK-----')) throw secretKeyError(shown);
  let keys: openpgp.Key[];
  try {
    keys = await openpgp.readKeys({ armoredKeys: armored });
  } catch (error) {
    throw new UsageError(
      `${shown} is not an ASCII-armored OpenPGP public key (${(error as Error).message})`,
      {
        hint: EXPORT_HINT,
        details: { file: shown },
      },
    );
  }
  if (keys.some((k) => k.isPrivate())) throw secretKeyError(shown);
  const [key] = keys;
  if (key === undefined || keys.length > 1) {
    throw new UsageError(`${shown} holds ${keys.length} keys; the registry takes one key per request`, {
      hint: 'Export only the signing key: gpg --armor --export <key id> > public-key.asc',
      details: { file: shown },
    });
  }
  const info = key.getAlgorithmInfo();
  const algorithm = info.algorithm.startsWith('rsa')
    ? `RSA ${info.bits ?? ''}`.trim()
    : info.algorithm === 'dsa'
      ? 'DSA'
      : `ECC ${info.algorithm}${info.curve ? ` ${info.curve}` : ''}`;
  return {
    keyId: key.getKeyID().toHex().toUpperCase(),
    algorithm,
    userId: key.getUserIDs()[0] ?? '(no user id)',
  };
}

function secretKeyError(shown: string): UsageError {
  return new UsageError(`${shown} holds a SECRET key; it was not sent anywhere`, {
    hint: 'Register only the public half: gpg --armor --export <key id> > public-key.asc (never --export-secret-keys), then provider gpg-keys add public-key.asc.',
    details: { file: shown },
  });
}

/** The registry's refusal, with what to do about it; its own words stay in the message. */
function explainRefusal(error: unknown, local: LocalKey, shown: string, namespace: string): unknown {
  // An answer of the wrong shape is no refusal: the key may well be registered. It keeps its own message.
  if (!(error instanceof ApiError) || error instanceof UnexpectedAnswerError) return error;
  const ecc = local.algorithm.startsWith('ECC');
  const hint =
    error.status === 404
      ? WRITE_HINT
      : error.status === 422 && ecc
        ? `Key ${local.keyId} in ${shown} is ${local.algorithm}; the registry accepts only RSA and DSA keys. Create one with: gpg --quick-gen-key "<name> <email>" rsa4096 sign, sign SHA256SUMS with it, and add its public key.`
        : error.hint;
  return new ApiError(
    `The registry refused key ${local.keyId} from ${shown} for ${namespace}: ${error.serverDetail ?? `status ${error.status}`}`,
    {
      status: error.status,
      serverDetail: error.serverDetail,
      ...(hint ? { hint } : {}),
      details: { ...error.details, file: shown, keyId: local.keyId, algorithm: local.algorithm },
      cause: error,
    },
  );
}
