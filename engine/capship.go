package engine

import (
	"fmt"
	"sort"

	"github.com/simjecture/simjecture/sandbox/machine"
)

// ShippableCapabilities reads the capabilities folder dir for `worker
// prepare --capabilities`: each capability a worker can be given (sorted by
// name), and one line for each one left out because its manifest names
// extra read-only mounts, host folders that are not shipped.
func ShippableCapabilities(dir string) ([]machine.Capability, []string, error) {
	caps, hashes, err := LoadCapabilities(dir)
	if err != nil {
		return nil, nil, err
	}
	names := make([]string, 0, len(caps))
	for n := range caps {
		names = append(names, n)
	}
	sort.Strings(names)
	var ship []machine.Capability
	var skipped []string
	for _, n := range names {
		c := caps[n]
		if len(c.ReadOnlyMounts) > 0 {
			skipped = append(skipped, fmt.Sprintf("capability %s not shipped: its manifest has read-only mounts of host folders (%s first), which stay on this host",
				n, c.ReadOnlyMounts[0].Host))
			continue
		}
		ship = append(ship, machine.Capability{Name: n, Hash: hashes[n], Manifest: canonicalJSON(c), Runtime: c.Runtime})
	}
	return ship, skipped, nil
}
