// The private redis-server lives with the examples (examples/fleet.ts starts
// one too, and examples may not import from tests/); tests use the same one.
export * from "../examples/_redis_server.ts";
