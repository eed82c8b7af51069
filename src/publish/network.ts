/**
 * The registry side of `provider publish` in one module, which `runPublish` starts importing before it
 * verifies the release: the HTTP client (got) and the rest load on the main thread while the hashing
 * workers run, instead of before them. Nothing is sent until the verification has passed.
 */
// The registry client the run's session builds (src/commands/session.ts), loaded here with the rest.
import '../registry/http.js';
export { emptyOutcome, executePlan } from './execute.js';
export { checkStep, waitStep } from './finish.js';
export { readRemote } from './remote.js';
export { tagStep } from './tagging.js';
