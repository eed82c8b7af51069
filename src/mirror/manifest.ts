/**
 * `provider mirror --manifest mirror.yaml`: the many-provider case in one file a platform team keeps in git.
 *
 *     from: registry.terraform.io        # optional; --from on the command line wins
 *     providers:
 *       - source: hashicorp/aws
 *         versions: "~> 5.0"             # Terraform's constraint syntax (default: the latest release)
 *         latest: 3                      # only the newest 3 of what `versions` selects
 *         platforms: [linux_amd64]       # or "linux_amd64,darwin_arm64" (default: every platform)
 *       - source: hashicorp/random
 *
 * Read with the `yaml` package and checked with a zod schema; every problem is a UsageError naming the file and
 * the line, before any request: a syntax error, a warning (an unknown tag such as `!!js/function`, else read as a
 * plain string), and aliases that stand for more nodes than `maxAliasCount` allows (an alias bomb: a billion
 * strings from a few lines), refused as they are expanded.
 */
import { LineCounter, parseDocument, visit, type Document } from 'yaml';
import * as z from 'zod';
import { UsageError } from '../errors.js';
import { readRegularCapped, SMALL_FILE_CAPS } from '../release/smallFile.js';
import type { MirrorTarget } from './run.js';
import { parsePlatforms, parseProviders, versionSelector } from './select.js';

const entrySchema = z
  .object({
    source: z.string().min(1),
    versions: z.string().optional(),
    latest: z.number().int().min(1).max(1000).optional(),
    platforms: z.union([z.string(), z.array(z.string())]).optional(),
  })
  .strict();

const manifestSchema = z
  .object({
    from: z.string().min(1).optional(),
    providers: z.array(entrySchema).min(1),
  })
  .strict();

/** A manifest as read: the origin it names, and one target per provider. */
export interface MirrorManifest {
  from: string | undefined;
  targets: MirrorTarget[];
}

/** Reads and checks `file` (a path as given, `shown` in messages). */
export async function readManifest(file: string, shown: string): Promise<MirrorManifest> {
  let text: string;
  try {
    // A regular file of at most 1 MiB (some thousands of providers): never a pipe or a device, never read whole
    // whatever its size.
    text = (await readRegularCapped(file, SMALL_FILE_CAPS.key)).bytes.toString('utf8');
  } catch (error) {
    const why = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    throw new UsageError(`--manifest ${shown} cannot be read (${why})`, {
      hint: 'Name a YAML file listing the providers to mirror (docs/mirror.md, "A manifest").',
    });
  }
  const lines = new LineCounter();
  const document = parseDocument(text, { lineCounter: lines, prettyErrors: false });
  const lineOf = (offset: number | undefined): number =>
    offset === undefined ? 1 : lines.linePos(offset).line;
  const hint = 'Fix the YAML; a manifest is a mapping with `providers:`, a list of entries with `source:`.';
  const [error] = document.errors;
  if (error !== undefined)
    throw new UsageError(`${shown}:${lineOf(error.pos[0])}: not valid YAML (${error.code})`, { hint });
  const [warning] = document.warnings;
  if (warning !== undefined) {
    const message = warning.message.split('\n')[0] ?? warning.code;
    throw new UsageError(`${shown}:${lineOf(warning.pos[0])}: ${message}`, { hint });
  }
  const parsed = manifestSchema.safeParse(toData(document, shown, lineOf));
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const path = issue.path.filter((part): part is string | number => typeof part !== 'symbol');
    const node = document.getIn(path, true) as { range?: [number, number, number] } | undefined;
    const at = path.length === 0 ? '' : ` at ${path.join('.')}`;
    throw new UsageError(`${shown}:${lineOf(node?.range?.[0])}: ${issue.message}${at}`, {
      hint: 'Each entry of providers: has source: <namespace>/<type>, and optionally versions:, latest: and platforms:.',
    });
  }
  const targets = parsed.data.providers.map((entry, index): MirrorTarget => {
    const line = lineOf(
      (document.getIn(['providers', index], true) as { range?: [number, number, number] } | undefined)
        ?.range?.[0],
    );
    const where = `${shown}:${line}`;
    const [provider] = withLine(where, () => parseProviders([entry.source]));
    return {
      provider: provider!,
      select: withLine(where, () =>
        versionSelector(entry.versions, { latest: entry.latest, where: `${where}: versions` }),
      ),
      platforms: withLine(where, () => parsePlatforms(entry.platforms, `${where}: platforms`)),
    };
  });
  refuseRepeats(targets, shown);
  return { from: parsed.data.from, targets };
}

/** Aliases may stand for at most this many nodes in all (the yaml package's default, said here). */
const MAX_ALIAS_COUNT = 100;

/** The document as data; aliases that expand past MAX_ALIAS_COUNT are a UsageError naming the first alias's line. */
function toData(document: Document, shown: string, lineOf: (offset: number | undefined) => number): unknown {
  try {
    return document.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (error) {
    if (!(error instanceof ReferenceError)) throw error;
    let first: number | undefined;
    visit(document, {
      Alias(_key, node) {
        first = node.range?.[0];
        return visit.BREAK;
      },
    });
    const excessive = /^Excessive alias count/.test(error.message);
    throw new UsageError(
      excessive
        ? `${shown}:${lineOf(first)}: its aliases stand for more than ${MAX_ALIAS_COUNT} nodes (an alias bomb?)`
        : `${shown}:${lineOf(first)}: ${error.message.split('\n')[0] ?? ''}`,
      {
        hint: 'Write each provider out, or use an anchor (&name) and its aliases (*name) a few times only.',
      },
    );
  }
}

/** Runs `read`, giving a UsageError it throws the manifest's place when it does not name it already. */
function withLine<T>(where: string, read: () => T): T {
  try {
    return read();
  } catch (error) {
    if (error instanceof UsageError && !error.message.startsWith(where)) {
      throw new UsageError(
        `${where}: ${error.message}`,
        error.hint === undefined ? {} : { hint: error.hint },
      );
    }
    throw error;
  }
}

/** A provider listed twice would be mirrored with two selections: refused, naming it. */
function refuseRepeats(targets: MirrorTarget[], shown: string): void {
  const seen = new Set<string>();
  for (const { provider } of targets) {
    const key = `${provider.namespace}/${provider.type}`;
    if (seen.has(key)) {
      throw new UsageError(`${shown}: ${key} is listed twice`, {
        hint: 'List each provider once; put every version it needs in one constraint (e.g. ">= 4.0, < 6.0").',
      });
    }
    seen.add(key);
  }
}
