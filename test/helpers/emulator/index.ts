/**
 * Driving the emulator over real HTTP, one module per resource: http (requests, clients, answer checks),
 * providers, versions, platforms, gpgKeys (with the fixture keys), uploads (archivist links), release (the
 * fixture release), seed (publishing it through the API), lifecycle (per-test emulators, a manual clock) and
 * requests (watching what an in-process emulator receives). Importers take what they need from here.
 */
export * from './gpgKeys.js';
export * from './http.js';
export * from './lifecycle.js';
export * from './platforms.js';
export * from './providers.js';
export * from './release.js';
export * from './requests.js';
export * from './seed.js';
export * from './uploads.js';
export * from './versions.js';
