package sandbox

import (
	"slices"
	"testing"
)

// TestPathsToPin: the folders between a writable host folder and each
// path are pinned (bound onto themselves), shallowest first, once each;
// nothing outside the writable folders, and not those folders themselves.
func TestPathsToPin(t *testing.T) {
	open := []string{"/root", "/tmp"}
	for _, tc := range []struct {
		name  string
		paths []string
		want  []string
	}{
		{"campaign deep in /tmp", []string{"/tmp/a/b/study"}, []string{"/tmp/a", "/tmp/a/b"}},
		{"campaign right in the home", []string{"/root/study"}, nil},
		{"campaign outside", []string{"/srv/studies/x"}, nil},
		{"program and campaign share a folder", []string{"/tmp/a/study", "/tmp/a/agent/run.py"}, []string{"/tmp/a", "/tmp/a/agent"}},
		{"a prefix is not a parent", []string{"/tmpx/a/b"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := pathsToPin(tc.paths, open); !slices.Equal(got, tc.want) {
				t.Errorf("pathsToPin(%v) = %v, want %v", tc.paths, got, tc.want)
			}
		})
	}
}
