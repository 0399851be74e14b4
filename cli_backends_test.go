package main

import (
	"strings"
	"testing"

	"github.com/simjecture/simjecture/sandbox"
)

func TestPreselectable(t *testing.T) {
	for def, want := range map[string]string{
		"": "auto", "auto": "auto", "docker": "auto",
		string(sandbox.Bubblewrap): string(sandbox.Bubblewrap), string(sandbox.ProotCooperative): string(sandbox.ProotCooperative),
		string(sandbox.ProcessCooperative): "auto", // never preselected
	} {
		if got := preselectable(def); got != want {
			t.Errorf("preselectable(%q) = %q, want %q", def, got, want)
		}
	}
}

// TestBackendFlagText proves the flag help and the allowed environment
// values name every backend of the table, and only those.
func TestBackendFlagText(t *testing.T) {
	help, names := executionBackendHelp(), executionBackendNames()
	if len(names) != len(sandbox.Backends())+1 {
		t.Fatalf("names %v", names)
	}
	for _, n := range names {
		if _, err := sandbox.ParseBackend(n); err != nil {
			t.Errorf("%s: %v", n, err)
		}
	}
	for _, b := range sandbox.Backends() {
		want := string(b.Name)
		if b.Cooperative {
			want += " (not a security sandbox)"
		}
		if !strings.Contains(help, want) {
			t.Errorf("help %q lacks %q", help, want)
		}
	}
}
