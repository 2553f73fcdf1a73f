// simclock-driver: write a simclock conformance driver by implementing one clock interface.
// See README.md for the interface and the clauses each method carries.

export { serve } from "./serve.mjs";
export { Engine, CallbackError, FEATURES, MAX_FIRED, PROTOCOL, featuresOf } from "./engine.mjs";
export { Halt, RuntimeError, ValueError, errorKind } from "./errors.mjs";
export { U64_MAX, dec, wireUint } from "./wire.mjs";
export { periodicIndex, rateIndex, rateOffset } from "./grid.mjs";
export { RandomStreams, Pcg64, blake2b, normalisePath, seedSequenceState, spawnKey, streamOf } from "./bits.mjs";
