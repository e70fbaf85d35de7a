package main

import (
	"runtime/debug"
)

// defaultGCPercent replaces Go's GOGC=100 unless GOGC is set. The live heap
// of a replica is small (a few MiB), so at 100 the collector runs every few
// hundred requests; most garbage is short-lived request buffers (the MCP
// SDK's JSON decoder allocates 32 KiB per message). Measured on the MCP
// path: ~126 µs → ~65 µs of CPU per request (docs/BENCHMARKS.md). The heap
// stays far below the RSS budget; GOMEMLIMIT still caps it when set.
const defaultGCPercent = 400

func tuneGC(getenv func(string) string) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(defaultGCPercent)
	}
}
