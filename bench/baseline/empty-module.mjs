// The floor of any ES module program's start-up (bench/figures/startup.mjs): an ES module that does nothing.
export {};
