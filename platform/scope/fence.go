package scope

import "slices"

// Fence is the simulations (D10) whose rows a caller may read: the
// simulations whose audience holds its key. A row without a simulation is
// outside every fence; a simulation row is served only inside its own. A
// fence is a predicate, never an error: fenced rows are simply absent.
type Fence []string

// Admits reports whether a row of simulation (or "" for none) may be
// served to the fence's caller.
func (f Fence) Admits(simulation string) bool {
	return simulation == "" || slices.Contains(f, simulation)
}

// IDs is the fence as a query parameter: never nil, so `= ANY($n)` reads
// an empty array, not NULL.
func (f Fence) IDs() []string {
	if f == nil {
		return []string{}
	}
	return f
}

// ProvenanceSimulation marks a simulation's rows in every answer that shows
// one (D10).
const ProvenanceSimulation = "simulation"

// Provenance is a row's provenance as answers show it: "simulation" for a
// row of a simulation, "" (omitted) otherwise.
func Provenance(simulation string) string {
	if simulation == "" {
		return ""
	}
	return ProvenanceSimulation
}
