/**
 * What `runtask send` serves when no files are given: a small but complete `terraform show -json` plan (one
 * `terraform_data` resource to create, so it needs no provider) and a configuration version `.tar.gz` holding
 * the `main.tf` it came from. The archive is a ustar archive (a PAX header for a name too long for ustar),
 * gzip-compressed, as `tar -czf` writes it.
 */
import { Header, Pack, ReadEntry } from 'tar';

const MAIN_TF = 'resource "terraform_data" "example" {\n  input = "hello"\n}\n';

/** The default plan JSON document (format 1.2, as `terraform show -json` of Terraform 1.9 prints). */
export function defaultPlanJson(now: Date): Buffer {
  const resource = {
    address: 'terraform_data.example',
    mode: 'managed',
    type: 'terraform_data',
    name: 'example',
    provider_name: 'terraform.io/builtin/terraform',
  };
  const plan = {
    format_version: '1.2',
    terraform_version: '1.9.8',
    planned_values: {
      root_module: {
        resources: [
          {
            ...resource,
            schema_version: 0,
            values: { input: 'hello', triggers_replace: null },
            sensitive_values: {},
          },
        ],
      },
    },
    resource_changes: [
      {
        ...resource,
        change: {
          actions: ['create'],
          before: null,
          after: { input: 'hello', triggers_replace: null },
          after_unknown: { id: true, output: true },
          before_sensitive: false,
          after_sensitive: {},
        },
      },
    ],
    configuration: {
      provider_config: { terraform: { name: 'terraform', full_name: 'terraform.io/builtin/terraform' } },
      root_module: {
        resources: [
          {
            address: 'terraform_data.example',
            mode: 'managed',
            type: 'terraform_data',
            name: 'example',
            provider_config_key: 'terraform',
            expressions: { input: { constant_value: 'hello' } },
            schema_version: 0,
          },
        ],
      },
    },
    timestamp: now.toISOString().replace(/\.\d{3}Z$/, 'Z'),
    applyable: true,
    complete: true,
    errored: false,
  };
  return Buffer.from(JSON.stringify(plan, null, 2) + '\n', 'utf8');
}

/** An entry of an archive built here: a file with its bytes, a folder (its path ending in `/`), or a link. */
export interface ArchiveEntry {
  path: string;
  type: 'File' | 'Directory' | 'SymbolicLink';
  /** Permission bits. */
  mode: number;
  mtime: Date;
  content?: Buffer;
  linkpath?: string;
}

/**
 * A gzip-compressed tar archive of the given entries, packed whole by node-tar as go-slug (HCP Terraform's
 * packer) writes them: each goes in as an entry read from memory, and the library writes its header, its padding
 * and the end of the archive.
 */
export async function packEntries(entries: ArchiveEntry[]): Promise<Buffer> {
  // Not `portable`: that would clear group and other write bits, which go-slug keeps. Owner 0, as it writes.
  const pack = new Pack({ gzip: true });
  for (const entry of entries) {
    const header = new Header({
      path: entry.path,
      mode: entry.mode,
      uid: 0,
      gid: 0,
      uname: '',
      gname: '',
      size: entry.content?.length ?? 0,
      mtime: entry.mtime,
      type: entry.type,
      ...(entry.linkpath === undefined ? {} : { linkpath: entry.linkpath }),
    });
    const read = new ReadEntry(header);
    read.end(entry.content ?? Buffer.alloc(0));
    pack.write(read);
  }
  pack.end();
  const chunks: Buffer[] = [];
  for await (const chunk of pack) chunks.push(Buffer.from(chunk as Uint8Array));
  return Buffer.concat(chunks);
}

/** A gzip-compressed tar archive of the given files (mode 0644), as `--config-version <folder>` packs them. */
export function tarGz(files: Array<{ name: string; content: Buffer }>, mtime: Date): Promise<Buffer> {
  return packEntries(
    files.map((file) => ({ path: file.name, type: 'File', mode: 0o644, mtime, content: file.content })),
  );
}

/** The default configuration version: `main.tf` of the default plan. */
export function defaultConfigurationVersion(now: Date): Promise<Buffer> {
  return tarGz([{ name: 'main.tf', content: Buffer.from(MAIN_TF, 'utf8') }], now);
}
