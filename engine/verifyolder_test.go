package engine

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// asOlderFormat rewrites c's report.json as an older simjecture might
// have written the same record: no report_format, compact instead of
// indented, without a key this binary added (edit may change it more),
// and a LEDGER.md rendered otherwise.
func asOlderFormat(t *testing.T, c Campaign, edit func(m map[string]any)) {
	t.Helper()
	path := filepath.Join(c.Dir, "report.json")
	body, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	delete(m, "report_format")
	delete(m, "record_protection") // a key a later version added
	if edit != nil {
		edit(m)
	}
	out, _ := json.Marshal(m)
	writeFileT(t, path, string(out)+"\n")
	writeFileT(t, filepath.Join(c.Dir, "LEDGER.md"), "# An older ledger\n\nrendered otherwise\n")
}

// TestVerifyReadsOlderReports: reports an older simjecture wrote for an
// intact record (another rendering, without report_format) verify intact;
// one of them with a verdict, a receipt's status or an artifact hash
// changed is still named, with the place; one written by a newer format is
// a finding, not a pass.
func TestVerifyReadsOlderReports(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		edit func(m map[string]any)
		raw  func(t *testing.T, c Campaign)
		want string
	}{
		{"as written", nil, nil, ""},
		{"verdict reversed", func(m map[string]any) {
			m["audit"].(map[string]any)["accepted"].(map[string]any)["root"] = "supported"
		}, nil, "report.json differs from the record (written in an older report format): audit.accepted.root reads"},
		{"receipt status changed", func(m map[string]any) {
			m["experiments"].([]any)[0].(map[string]any)["status"] = "failed"
		}, nil, "experiments[0].status reads"},
		{"a receipt removed", func(m map[string]any) {
			m["experiments"] = m["experiments"].([]any)[1:]
		}, nil, "experiments reads"},
		{"a key the record does not have", func(m map[string]any) { m["forged"] = true }, nil, "forged is not in the record"},
		{"a newer format", nil, func(t *testing.T, c Campaign) {
			editFile(t, c, "report.json", `"report_format": 2`, `"report_format": 99`)
		}, "written in report format 99 by a newer simjecture"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, s := intactFinishedStudy(t)
			if tt.raw != nil {
				tt.raw(t, c)
			} else {
				asOlderFormat(t, c, tt.edit)
			}
			f, err := Verify(context.Background(), c, s)
			wantFinding(t, f, err, tt.want)
		})
	}
}
