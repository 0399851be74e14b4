package sandbox

import (
	"strings"
	"testing"
)

// checkRow lists what is missing or inconsistent in one row of the table.
func checkRow(info BackendInfo) []string {
	var bad []string
	for _, f := range []struct{ name, v string }{
		{"name", string(info.Name)}, {"label", info.Label}, {"short label", info.Short},
		{"title", info.Title}, {"column", info.Column}, {"explanation", info.Explains},
	} {
		if f.v == "" {
			bad = append(bad, "no "+f.name)
		}
	}
	if info.probe == nil {
		bad = append(bad, "no probe")
	}
	if info.launch == nil {
		bad = append(bad, "no launcher")
	}
	if b, err := ParseBackend(string(info.Name)); err != nil || b != info.Name {
		bad = append(bad, "ParseBackend rejects it")
	}
	if IsCooperative(info.Name) != info.Cooperative {
		bad = append(bad, "IsCooperative disagrees with the row")
	}
	if d, ok := Describe(info.Name); !ok || d.Label != info.Label {
		bad = append(bad, "Describe does not find it")
	}
	if info.Cooperative {
		for _, w := range []struct{ what, text, want string }{
			{"warning", info.Warning, "not a security sandbox"},
			{"label", info.Label, "not a security sandbox"},
			{"short label", info.Short, "⚠"},
		} {
			if !strings.Contains(w.text, w.want) {
				bad = append(bad, "cooperative "+w.what+" lacks "+w.want)
			}
		}
		if info.KernelIsolation || info.NetworkIsolation {
			bad = append(bad, "cooperative but claims isolation")
		}
	}
	return bad
}

// TestBackendTableWired proves every row is fully wired.
func TestBackendTableWired(t *testing.T) {
	rows := Backends()
	if len(rows) == 0 {
		t.Fatal("no backends")
	}
	seen := map[Backend]bool{}
	for _, info := range rows {
		t.Run(string(info.Name), func(t *testing.T) {
			if seen[info.Name] {
				t.Errorf("%s appears twice", info.Name)
			}
			seen[info.Name] = true
			for _, b := range checkRow(info) {
				t.Error(b)
			}
		})
	}
	if _, ok := Describe(Auto); ok {
		t.Error("auto is a request, not a row")
	}
}

// TestCheckRowCatchesGaps proves the wiring check fails for a row that
// lacks any part.
func TestCheckRowCatchesGaps(t *testing.T) {
	cuts := []struct {
		name string
		cut  func(*BackendInfo)
	}{
		{"label", func(i *BackendInfo) { i.Label = "" }},
		{"short", func(i *BackendInfo) { i.Short = "" }},
		{"title", func(i *BackendInfo) { i.Title = "" }},
		{"column", func(i *BackendInfo) { i.Column = "" }},
		{"explains", func(i *BackendInfo) { i.Explains = "" }},
		{"probe", func(i *BackendInfo) { i.probe = nil }},
		{"launch", func(i *BackendInfo) { i.launch = nil }},
		{"cooperative flag", func(i *BackendInfo) { i.Cooperative = !i.Cooperative }},
		{"name", func(i *BackendInfo) { i.Name = "docker" }},
	}
	for _, info := range Backends() {
		for _, c := range cuts {
			row := info
			c.cut(&row)
			if len(checkRow(row)) == 0 {
				t.Errorf("%s without its %s passes the wiring check", info.Name, c.name)
			}
		}
		if info.Cooperative {
			row := info
			row.Warning = "careful"
			if len(checkRow(row)) == 0 {
				t.Errorf("%s with a warning lacking the words passes", info.Name)
			}
		}
	}
}

// TestAutoOrder pins auto's candidates: Bubblewrap first, then PRoot; never
// process-cooperative.
func TestAutoOrder(t *testing.T) {
	var got []Backend
	for _, info := range autoCandidates() {
		got = append(got, info.Name)
	}
	want := []Backend{Bubblewrap, ProotCooperative}
	if strings.Join(names(got), ",") != strings.Join(names(want), ",") {
		t.Errorf("auto candidates %v, want %v", got, want)
	}
	if c := autoCandidates(); len(c) == 0 || c[0].Cooperative {
		t.Error("auto must try an isolating backend first")
	}
}

func names(bs []Backend) []string {
	out := make([]string, len(bs))
	for i, b := range bs {
		out[i] = string(b)
	}
	return out
}

// TestBackendsIsACopy proves callers cannot change the table.
func TestBackendsIsACopy(t *testing.T) {
	rows := Backends()
	rows[0].Label = "changed"
	if d, _ := Describe(rows[0].Name); d.Label == "changed" {
		t.Error("Backends exposes the table itself")
	}
}
