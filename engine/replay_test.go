package engine

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/simjecture/simjecture/provider/scripted"
)

var update = flag.Bool("update", false, "regenerate the bundled demo record by running the real demo")

// TestReplayRecord checks that the bundled record is a finished demo study
// of today's demo (same hypothesis and instructions) that verifies intact.
// With -update it first runs the real demo (a freshly built binary) and
// packs its campaign folder into replaydata/.
func TestReplayRecord(t *testing.T) {
	if *update {
		regenerateRecord(t)
	}
	ctx := context.Background()
	c := Campaign{Dir: filepath.Join(t.TempDir(), "record")}
	if err := WriteRecord(c); err != nil {
		t.Fatal(err)
	}
	if !IsRecord(c) {
		t.Fatal("a written record has no marker")
	}
	s, err := c.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if findings, err := Verify(ctx, c, s); err != nil || len(findings) > 0 {
		t.Fatalf("the bundled record does not verify (regenerate: go test ./engine -run TestReplayRecord -update): %v %q", err, findings)
	}
	k, err := LoadContract(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	if k.HypothesisSHA256 != sha(scripted.DemoHypothesis()) || k.InstructionsSHA256 != sha(scripted.DemoInstructions()) ||
		k.AgentBackend != "scripted" {
		t.Fatalf("the bundled record is not of today's demo (regenerate: go test ./engine -run TestReplayRecord -update): %+v", k)
	}
	sum, err := (&View{c: c, s: s}).Summary(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Status != StatusCompleted || sum.Experiments[ExpSucceeded] == 0 {
		t.Fatalf("status %s, experiments %v; want a completed study with results", sum.Status, sum.Experiments)
	}
}

func sha(text string) string {
	s := sha256.Sum256([]byte(text))
	return hex.EncodeToString(s[:])
}

// regenerateRecord runs the demo with a freshly built binary and packs it.
// Run again, it gives the same files with other times and durations.
func regenerateRecord(t *testing.T) {
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "simjecture")
	if out, err := exec.Command("go", "build", "-o", bin, "..").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	// A fixed folder, so the paths the record names do not change from one
	// regeneration to the next.
	c := Campaign{Dir: filepath.Join(os.TempDir(), "simjecture-demo-record")}
	if err := os.RemoveAll(c.Dir); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(c.Dir) })
	cmd := exec.Command(bin, "demo", c.Dir, "--batch")
	cmd.Env = append(os.Environ(), "SIMJECTURE_DEFAULT_EXECUTION_BACKEND=auto", "SIMJECTURE_WORKSPACE="+tmp)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("demo: %v\n%s", err, out)
	}
	var archive bytes.Buffer
	manifest, err := PackRecord(c, &archive)
	if err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string][]byte{"demo.tar.gz": archive.Bytes(), "demo.sha256": manifest} {
		if err := os.WriteFile(filepath.Join("replaydata", name), body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	demoRecord, demoManifest = archive.Bytes(), manifest
	t.Logf("record: %d files, %d bytes compressed", bytes.Count(manifest, []byte("\n")), archive.Len())
}

// TestRecordRoundTrip checks that packing an extracted record gives back
// the bundled tar and manifest: extraction loses nothing, and the packer
// depends only on the files.
func TestRecordRoundTrip(t *testing.T) {
	c := Campaign{Dir: t.TempDir()} // an empty folder is taken
	if err := WriteRecord(c); err != nil {
		t.Fatal(err)
	}
	var again bytes.Buffer
	manifest, err := PackRecord(c, &again)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(manifest, demoManifest) {
		t.Fatalf("manifest differs after a round trip:\n%s\nwant\n%s", manifest, demoManifest)
	}
	if !bytes.Equal(gunzip(t, again.Bytes()), gunzip(t, demoRecord)) {
		t.Fatal("the repacked tar differs from the bundled one")
	}
}

func gunzip(t *testing.T, b []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestExtractRecordRefuses checks that a record that does not match its
// manifest, or a target that is not a new or empty folder, is refused with
// nothing written beside the target.
func TestExtractRecordRefuses(t *testing.T) {
	lines := strings.SplitAfter(strings.TrimSuffix(string(demoManifest), "\n"), "\n")
	first := lines[0]
	flipped := string("0123456789abcdef"[(strings.IndexByte("0123456789abcdef", first[0])+1)%16]) + first[1:]
	cases := []struct {
		name     string
		manifest string
		prepare  func(dir string) error
		invalid  bool // refused as invalid input (exit 2)
	}{
		{"changed hash", flipped + strings.Join(lines[1:], ""), nil, false},
		{"file left out of the manifest", strings.Join(lines[1:], ""), nil, false},
		{"file only in the manifest", string(demoManifest) + strings.Repeat("0", 64) + "  extra.txt\n", nil, false},
		{"malformed manifest", "not a manifest\n", nil, false},
		{"non-empty folder", string(demoManifest), func(dir string) error {
			if err := os.Mkdir(dir, 0o755); err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o644)
		}, true},
		{"a file", string(demoManifest), func(dir string) error { return os.WriteFile(dir, []byte("mine"), 0o644) }, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			parent := t.TempDir()
			c := Campaign{Dir: filepath.Join(parent, "record")}
			if tc.prepare != nil {
				if err := tc.prepare(c.Dir); err != nil {
					t.Fatal(err)
				}
			}
			before := listTree(t, parent)
			err := extractRecord(c, demoRecord, []byte(tc.manifest))
			if err == nil || errors.Is(err, ErrInvalid) != tc.invalid {
				t.Fatalf("err = %v, want a refusal (invalid input: %v)", err, tc.invalid)
			}
			if after := listTree(t, parent); after != before {
				t.Fatalf("something was written:\n%s\nwas\n%s", after, before)
			}
		})
	}
}

// listTree lists every path under dir.
func listTree(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		b.WriteString(p + "\n")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestListStudiesMarksRecords checks that the home screen's listing tells
// a bundled record from a study created here.
func TestListStudiesMarksRecords(t *testing.T) {
	plain, _ := newTestStudy(t, nil)
	root := filepath.Dir(plain.Dir)
	if err := WriteRecord(Campaign{Dir: filepath.Join(root, "demo-replay")}); err != nil {
		t.Fatal(err)
	}
	got, err := ListStudies(context.Background(), root)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		record bool
		status Status
	}{"campaign": {false, StatusPaused}, "demo-replay (record)": {true, StatusCompleted}}
	if len(got) != len(want) {
		t.Fatalf("got %d studies, want %d: %+v", len(got), len(want), got)
	}
	for _, e := range got {
		if w, ok := want[e.Name]; !ok || e.Record != w.record || e.Status != w.status || e.Err != "" {
			t.Errorf("%q: record=%v status=%s err=%q, want %+v", e.Name, e.Record, e.Status, e.Err, w)
		}
	}
}
