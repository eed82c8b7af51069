/**
 * The registry side of `provider publish` in one module, which `runPublish` starts importing once the
 * release's files are being hashed: the HTTP client (got) and the rest load on the main thread while the
 * hashing runs, instead of before it. Only reads are sent before the verification has passed (the registry's
 * side of the release, read while the files are hashed); nothing is written until it has.
 */
// The registry client the run's session builds (src/commands/session.ts), loaded here with the rest.
import '../registry/http.js';
export { emptyOutcome, executePlan } from './execute.js';
export { checkStep, waitStep } from './finish.js';
export { judgeRemote, readKeyRegistered, readRemoteRelease } from './remote.js';
export { tagStep } from './tagging.js';
export { undoRun } from './undo.js';
