package main

import (
	"strings"

	"github.com/simjecture/simjecture/sandbox"
)

// The command line's view of the sandbox's execution-backend table.

// executionBackendNames is auto followed by every backend, in table order.
func executionBackendNames() []string {
	names := []string{string(sandbox.Auto)}
	for _, b := range sandbox.Backends() {
		names = append(names, string(b.Name))
	}
	return names
}

// executionBackendHelp is the --execution-backend help: every name, the
// cooperative ones marked.
func executionBackendHelp() string {
	parts := []string{string(sandbox.Auto)}
	for _, b := range sandbox.Backends() {
		p := string(b.Name)
		if b.Cooperative {
			p += " (not a security sandbox)"
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, ", ")
}

// preselectable is the default backend the terminal UI may preselect:
// auto for an empty, unknown or never-automatic one.
func preselectable(def string) string {
	if b, ok := sandbox.Describe(sandbox.Backend(def)); ok && b.AutoCandidate {
		return def
	}
	return string(sandbox.Auto)
}
