package engine

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// olderRecord is the bundled demo record, which an earlier release wrote
// (no report format, in its reports or its events), opened in a folder of
// the test's own.
func olderRecord(t *testing.T) (Campaign, func() []string) {
	t.Helper()
	c := Campaign{Dir: filepath.Join(t.TempDir(), "record")}
	if err := WriteRecord(c); err != nil {
		t.Fatal(err)
	}
	if f := ReportFormatOf(c); f != 0 {
		t.Fatalf("the bundled record is of report format %d, not an earlier release's: keep a record of an older format for these tests", f)
	}
	return c, func() []string {
		s, err := c.Open(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		f, err := Verify(context.Background(), c, s)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
}

// editReport rewrites c's report.json through edit, compact instead of
// indented (another rendering), with LEDGER.md rendered otherwise too.
func editReport(t *testing.T, c Campaign, edit func(m map[string]any)) {
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
	if edit != nil {
		edit(m)
	}
	out, _ := json.Marshal(m)
	writeFileT(t, path, string(out)+"\n")
	writeFileT(t, filepath.Join(c.Dir, "LEDGER.md"), "# An older ledger\n\nrendered otherwise\n")
}

func first(m map[string]any, list string) map[string]any { return m[list].([]any)[0].(map[string]any) }

// TestVerifyReadsOlderReports: the reports of a record an earlier release
// wrote (another rendering, no report format) verify intact, rendered
// otherwise too; a verdict, a receipt's status, a claim's status or a
// receipt changed or removed in them is still named with its place, and so
// is a key given twice, or a report format that no release writes.
func TestVerifyReadsOlderReports(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		edit func(m map[string]any)
		raw  func(t *testing.T, c Campaign)
		want string
	}{
		{"as written", nil, nil, ""},
		{"rendered otherwise", func(map[string]any) {}, nil, ""},
		{"verdict changed", func(m map[string]any) {
			m["audit"].(map[string]any)["accepted"].(map[string]any)["root"] = "forged"
		}, nil, "report.json differs from the record (written in an older report format): audit.accepted.root reads"},
		{"the audit removed", func(m map[string]any) { delete(m, "audit") }, nil, "audit.scientific_status reads nothing"},
		{"receipt status changed", func(m map[string]any) { first(m, "experiments")["status"] = "forged" }, nil, "experiments[0].status reads"},
		{"receipt status removed", func(m map[string]any) { delete(first(m, "experiments"), "status") }, nil, "experiments[0].status reads nothing"},
		{"receipt artifacts removed", func(m map[string]any) { delete(first(m, "experiments"), "artifacts") }, nil, "experiments[0].artifacts reads nothing"},
		{"claim status removed", func(m map[string]any) { delete(first(m, "claims"), "status") }, nil, "claims[0].status reads nothing"},
		{"a receipt removed", func(m map[string]any) { m["experiments"] = m["experiments"].([]any)[1:] }, nil, "experiments reads"},
		{"a key the record does not have", func(m map[string]any) { m["forged"] = true }, nil, "forged is not in the record"},
		{"a key given twice", nil, func(t *testing.T, c Campaign) {
			editFile(t, c, "report.json", `"status": "completed",`, `"status": "forged", "status": "completed",`)
		}, "report.json: the key status is given twice"},
		{"a newer format", nil, func(t *testing.T, c Campaign) {
			editFile(t, c, "report.json", `"event_head"`, `"report_format": 99, "event_head"`)
		}, "written in report format 99 by a newer simjecture"},
		{"a format as a string", nil, func(t *testing.T, c Campaign) {
			editFile(t, c, "report.json", `"event_head"`, `"report_format": "2", "event_head"`)
		}, `report_format "\"2\"" is not a whole number`},
		{"a format no release writes", nil, func(t *testing.T, c Campaign) {
			editFile(t, c, "report.json", `"event_head"`, `"report_format": 1, "event_head"`)
		}, "report_format 1 is not one any simjecture writes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, verify := olderRecord(t)
			if tt.raw != nil {
				tt.raw(t, c)
			} else if tt.edit != nil {
				editReport(t, c, tt.edit)
			}
			wantFinding(t, verify(), nil, tt.want)
		})
	}
}

// TestVerifyKnowsThisReleasesFormat: the reports of a study this release
// wrote name its format, and the record says so too, so a report.json
// passed off as an earlier release's (its report_format removed, so as not
// to be compared byte for byte) is a finding.
func TestVerifyKnowsThisReleasesFormat(t *testing.T) {
	t.Parallel()
	c, s := intactFinishedStudy(t)
	if f := ReportFormatOf(c); f != ReportFormat {
		t.Fatalf("report.json names format %d, want this release's %d", f, ReportFormat)
	}
	editReport(t, c, func(m map[string]any) {
		delete(m, "report_format")
		m["audit"].(map[string]any)["accepted"].(map[string]any)["root"] = "supported"
	})
	f, err := Verify(context.Background(), c, s)
	wantFinding(t, f, err, "report.json names no report format, but the record says its reports were written in format 2")
	if strings.Contains(strings.Join(f, "\n"), "intact") {
		t.Errorf("findings: %q", f)
	}
}

// TestVerifyOlderReportsKeepTheirText: removing what a claim or review
// says, or a receipt's inputs or logs, from an older report is named too.
func TestVerifyOlderReportsKeepTheirText(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ list, key string }{
		{"claims", "statement"}, {"reviews", "conclusion"}, {"reviews", "claim"}, {"experiments", "inputs"},
		{"experiments", "returncode"}, {"experiments", "logs"},
	} {
		t.Run(tc.list+"."+tc.key, func(t *testing.T) {
			t.Parallel()
			c, verify := olderRecord(t)
			editReport(t, c, func(m map[string]any) { delete(first(m, tc.list), tc.key) })
			wantFinding(t, verify(), nil, tc.list+"[0]."+tc.key+" reads nothing")
		})
	}
}
