/**
 * The emulator's state: organizations and tokens, providers, versions, platforms, GPG keys and the objects
 * (uploaded files). Metadata is one JSON file written atomically after every change; objects are files.
 * Every change goes through `change()`: it lands on disk and in memory, or (when the state cannot be saved,
 * e.g. the data folder is full) in neither, so that a client's 500 never hides a change a restart would lose.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, readdirSync, renameSync, existsSync, rmSync } from 'node:fs';
import { writeFileAtomically } from '../atomicWrite.js';
import { join } from 'node:path';

/** An uploaded (or awaited) file: the flag flips at `flagAt` (upload time plus the configured delay). */
export interface StoredObject {
  key: string;
  uploadedAt: number | null;
  flagAt: number | null;
  bytes: number | null;
  /**
   * The expiry stamps of the upload links that delivered bytes: an upload link is single-use (absent in state
   * written before this was kept).
   */
  spentLinks?: number[];
}

export interface StoredProvider {
  id: string;
  organization: string;
  registryName: 'private' | 'public';
  namespace: string;
  name: string;
  createdAt: number;
  updatedAt: number;
}

export interface StoredVersion {
  id: string;
  providerId: string;
  version: string;
  keyId: string;
  protocols: string[];
  createdAt: number;
  updatedAt: number;
  shasums: StoredObject;
  shasumsSig: StoredObject;
  /** The version's tags (HCP Terraform, 2026), in the order last set; absent in state written before them. */
  tags?: StoredTagBinding[];
}

/** One tag binding of a version: kept with its id and creation time while a PATCH keeps its key and value. */
export interface StoredTagBinding {
  id: string;
  key: string;
  value: string;
  createdAt: number;
}

export interface StoredPlatform {
  id: string;
  versionId: string;
  os: string;
  arch: string;
  filename: string;
  shasum: string;
  createdAt: number;
  binary: StoredObject;
  /**
   * The lock hashes of the stored zip (`h1:` and `zh:`, sorted as a lock file lists them), computed from its
   * bytes when its upload completed with package hashes on; absent when they were not (the option was off,
   * the zip's `h1:` cannot be computed, or state written before they were kept).
   */
  lockHashes?: string[];
}

export interface StoredGpgKey {
  id: string;
  namespace: string;
  keyId: string;
  asciiArmor: string;
  createdAt: number;
  updatedAt: number;
}

/** A team's token: owners may write, members may only read. */
export interface StoredToken {
  token: string;
  organization: string;
  role: 'owner' | 'member';
}

export interface StateData {
  schema: 1;
  organization: string;
  tokens: StoredToken[];
  /** Key that signs the archivist links; a restart keeps links valid. */
  linkKey: string;
  nextGpgKeyId: number;
  providers: StoredProvider[];
  versions: StoredVersion[];
  platforms: StoredPlatform[];
  gpgKeys: StoredGpgKey[];
}

/** Generates an id like the documented ones: a prefix and 16 alphanumeric characters. */
export function newId(prefix: string): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  const bytes = randomBytes(16);
  let out = '';
  for (const b of bytes) out += alphabet[b % alphabet.length];
  return `${prefix}-${out}`;
}

/** A fresh token, shaped like the platform's (`<14 chars>.atlasv1.<67 chars>`), distinct per role. */
function newToken(): string {
  return `${randomBytes(7).toString('hex')}.atlasv1.${randomBytes(34).toString('hex').slice(0, 67)}`;
}

/** A new, empty object record for a file that has not been uploaded. */
export function newObject(): StoredObject {
  return { key: newId('obj'), uploadedAt: null, flagAt: null, bytes: null };
}

/** The state file could not be written: the change it carried was not made. */
export class StoreWriteError extends Error {
  constructor(
    readonly path: string,
    readonly code: string,
  ) {
    super(`cannot save the emulator's state to ${path} (${code}); the change was not made`);
  }
}

/** The metadata and object files of one emulator, under one data folder. */
export class Store {
  readonly data: StateData;
  readonly objectsDir: string;
  private readonly statePath: string;
  /** Object files the change under way removes, once it is saved. */
  private removals: string[] | undefined;

  private constructor(
    readonly dataDir: string,
    data: StateData,
  ) {
    this.data = data;
    this.statePath = join(dataDir, 'state.json');
    this.objectsDir = join(dataDir, 'objects');
  }

  /** Opens the store in `dataDir`, creating it (with new tokens) when it holds no state yet. */
  static open(dataDir: string, organization: string): Store {
    mkdirSync(join(dataDir, 'objects'), { recursive: true });
    // A write of the state cut short by a kill leaves its temp file (src/atomicWrite.ts names them): never read.
    for (const name of readdirSync(dataDir))
      if (/^\.state\.json\.[0-9a-f]{12}\.tmp$/.test(name)) rmSync(join(dataDir, name), { force: true });
    const statePath = join(dataDir, 'state.json');
    if (existsSync(statePath)) {
      const data = JSON.parse(readFileSync(statePath, 'utf8')) as StateData;
      if (data.schema !== 1) throw new Error(`${statePath}: unknown state schema ${String(data.schema)}`);
      return new Store(dataDir, data);
    }
    const data: StateData = {
      schema: 1,
      organization,
      tokens: [
        { token: newToken(), organization, role: 'owner' },
        { token: newToken(), organization, role: 'member' },
        // A valid token of another organization: it must see nothing of this one.
        { token: newToken(), organization: `${organization}-outsider`, role: 'owner' },
      ],
      linkKey: randomBytes(32).toString('hex'),
      nextGpgKeyId: 1,
      providers: [],
      versions: [],
      platforms: [],
      gpgKeys: [],
    };
    const store = new Store(dataDir, data);
    store.save();
    return store;
  }

  /**
   * Applies a change to the state and saves it. When the save fails, the state in memory is put back as it
   * was and `StoreWriteError` is thrown: the change is on disk and in memory, or in neither. Object files the
   * change removes (deletes) go only once it is saved. `apply` must not await: nothing else runs meanwhile.
   */
  change<T>(apply: (data: StateData) => T): T {
    const before = JSON.stringify(this.data);
    const removals: string[] = [];
    this.removals = removals;
    try {
      const result = apply(this.data);
      this.save();
      for (const path of removals) rmSync(path, { force: true });
      return result;
    } catch (error) {
      // Back to the saved state, in place: the routes read `store.data`, tests hold it.
      Object.assign(this.data, JSON.parse(before) as StateData);
      throw error;
    } finally {
      this.removals = undefined;
    }
  }

  /** Writes the metadata atomically (src/atomicWrite.ts: a temporary file renamed over the old one). */
  private save(): void {
    try {
      writeFileAtomically(this.statePath, JSON.stringify(this.data));
    } catch (error) {
      throw new StoreWriteError(this.statePath, (error as NodeJS.ErrnoException).code ?? String(error));
    }
  }

  /**
   * Puts `part` (a finished upload) in place as the bytes of object `key` and makes the change `apply` makes
   * (flags, sizes), as one: when the change is refused or cannot be saved, the part is removed and the bytes
   * the object held before are back in place.
   */
  receiveObject(key: string, part: string, apply: (data: StateData) => void): void {
    const target = this.objectPath(key);
    const previous = existsSync(target) ? `${target}.${randomBytes(6).toString('hex')}.old` : undefined;
    if (previous) renameSync(target, previous);
    try {
      renameSync(part, target);
      this.change(apply);
    } catch (error) {
      rmSync(part, { force: true });
      rmSync(target, { force: true });
      if (previous) renameSync(previous, target);
      throw error;
    }
    if (previous) rmSync(previous, { force: true });
  }

  /** Path of an object's bytes. */
  objectPath(key: string): string {
    return join(this.objectsDir, key);
  }

  /** Removes an object's bytes, if any: at once, or when the change under way is saved. */
  removeObject(object: StoredObject): void {
    const path = this.objectPath(object.key);
    if (this.removals) this.removals.push(path);
    else rmSync(path, { force: true });
  }

  /** Every object with its owner, for the archivist routes. */
  findObject(key: string): { object: StoredObject; kind: ObjectKind; ownerId: string } | undefined {
    for (const v of this.data.versions) {
      if (v.shasums.key === key) return { object: v.shasums, kind: 'shasums', ownerId: v.id };
      if (v.shasumsSig.key === key) return { object: v.shasumsSig, kind: 'shasums-sig', ownerId: v.id };
    }
    for (const p of this.data.platforms) {
      if (p.binary.key === key) return { object: p.binary, kind: 'provider-binary', ownerId: p.id };
    }
    return undefined;
  }

  /** Deletes a version, its platforms and all their files. */
  deleteVersion(version: StoredVersion): void {
    for (const p of this.data.platforms.filter((x) => x.versionId === version.id)) this.deletePlatform(p);
    this.removeObject(version.shasums);
    this.removeObject(version.shasumsSig);
    this.data.versions = this.data.versions.filter((x) => x.id !== version.id);
  }

  /** Deletes one platform and its binary. */
  deletePlatform(platform: StoredPlatform): void {
    this.removeObject(platform.binary);
    this.data.platforms = this.data.platforms.filter((x) => x.id !== platform.id);
  }

  /** Deletes a provider with all its versions. */
  deleteProvider(provider: StoredProvider): void {
    for (const v of this.data.versions.filter((x) => x.providerId === provider.id)) this.deleteVersion(v);
    this.data.providers = this.data.providers.filter((x) => x.id !== provider.id);
  }
}

/** Which file of a version or platform an object holds. */
export type ObjectKind = 'shasums' | 'shasums-sig' | 'provider-binary';
