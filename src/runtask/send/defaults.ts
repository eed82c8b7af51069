/**
 * What `runtask send` serves when no files are given: a small but complete `terraform show -json` plan (one
 * `terraform_data` resource to create, so it needs no provider) and a configuration version `.tar.gz` holding
 * the `main.tf` it came from. The archive is a plain ustar archive, gzip-compressed, as `tar -czf` writes it.
 */
import { gzipSync } from 'node:zlib';
import { Header } from 'tar';

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

/** One ustar header block (512 bytes) for a regular file, encoded by node-tar (as `--config-version <folder>` is packed). */
function tarHeader(name: string, size: number, mtime: Date): Buffer {
  const header = new Header({ path: name, mode: 0o644, uid: 0, gid: 0, size, mtime, type: 'File' });
  header.encode();
  if (header.block === undefined) throw new Error(`node-tar encoded no header for ${name}`);
  return header.block;
}

/** A gzip-compressed tar archive of the given files. */
export function tarGz(files: Array<{ name: string; content: Buffer }>, mtime: Date): Buffer {
  const blocks: Buffer[] = [];
  for (const file of files) {
    blocks.push(tarHeader(file.name, file.content.length, mtime), file.content);
    const padding = (512 - (file.content.length % 512)) % 512;
    blocks.push(Buffer.alloc(padding));
  }
  blocks.push(Buffer.alloc(1024));
  return gzipSync(Buffer.concat(blocks));
}

/** The default configuration version: `main.tf` of the default plan. */
export function defaultConfigurationVersion(now: Date): Buffer {
  return tarGz([{ name: 'main.tf', content: Buffer.from(MAIN_TF, 'utf8') }], now);
}
