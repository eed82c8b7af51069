/**
 * The schema of goreleaser's artifacts.json (src/release/artifacts.ts), in a module of its own: zod is a large
 * module to load, and a release folder without artifacts.json (or a verification that fails before reading it)
 * never needs it, so `readArtifacts` imports this only when the file is there.
 */
import * as z from 'zod';

/** One artifact, as much of it as is read; other fields (`goamd64`, `internal_type`, …) are kept but unused. */
export const artifactSchema = z
  .object({
    name: z.string(),
    path: z.string(),
    type: z.string(),
    goos: z.string().optional(),
    goarch: z.string().optional(),
    extra: z.record(z.string(), z.unknown()).nullish(),
  })
  .loose();

/** The whole file: a list of artifacts. */
export const artifactsSchema = z.array(artifactSchema);
