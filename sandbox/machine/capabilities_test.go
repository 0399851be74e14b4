package machine

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/simjecture/simjecture/sandbox"
)

// testCapability writes a runtime folder with an executable tool and
// returns the capability as the coordinator ships it.
func testCapability(t *testing.T, dir, name string) Capability {
	t.Helper()
	runtime := filepath.Join(dir, "runtime-"+name)
	writeTestFile(t, filepath.Join(runtime, "bin", "tool"), "#!/bin/sh\necho \"$TOOL_HOME $1\" > out.txt\n", 0o755)
	writeTestFile(t, filepath.Join(runtime, "share", "note.txt"), "data\n", 0o644)
	manifest, _ := json.Marshal(map[string]any{"runtime": runtime, "executable": "bin/tool",
		"environment": map[string]string{"TOOL_HOME": sandbox.CapabilityRoot + "/" + name}})
	dh, err := sandbox.DirectoryHash(runtime)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := sandbox.CapabilityHash(manifest, dh)
	if err != nil {
		t.Fatal(err)
	}
	return Capability{Name: name, Hash: sum, Manifest: manifest, Runtime: runtime}
}

func writeTestFile(t *testing.T, path, body string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), mode); err != nil {
		t.Fatal(err)
	}
}

// testCapability2 is c with its hash made again from its runtime folder.
func testCapability2(t *testing.T, c Capability) Capability {
	t.Helper()
	dh, err := sandbox.DirectoryHash(c.Runtime)
	if err != nil {
		t.Fatal(err)
	}
	if c.Hash, err = sandbox.CapabilityHash(c.Manifest, dh); err != nil {
		t.Fatal(err)
	}
	return c
}

// capSpec is a job running capability c's tool with one argument.
func capSpec(w *testWorker, c Capability) sandbox.Spec {
	root := sandbox.CapabilityRoot + "/" + c.Name
	return sandbox.Spec{Command: []string{root + "/bin/tool", "x"}, Env: map[string]string{"TOOL_HOME": root},
		Outputs: []string{"out.txt"}, Timeout: 30e9, CPUs: 1, ArtifactDir: filepath.Join(w.dir, "artifacts-"+c.Name),
		ReadOnly:   []sandbox.Mount{{Host: c.Runtime, Virtual: root}},
		Capability: &sandbox.CapabilityRef{Name: c.Name, Hash: c.Hash}}
}

// TestCapabilityShippedReportedAndRun: a shipped capability is copied once
// (a second ship copies nothing), reported in hello with its hash, and a
// job runs it from the worker's own copy (the coordinator's runtime is gone
// by then) at its virtual path, with the manifest's environment.
func TestCapabilityShippedReportedAndRun(t *testing.T) {
	t.Parallel()
	w := newTestWorker(t, 60e9)
	c := testCapability(t, w.dir, "tool")
	ctx := context.Background()
	first, err := shipOne(ctx, w.m.sess, c)
	if err != nil || !first.Copied || first.Sent != 2 || first.Files != 2 || first.Bytes == 0 {
		t.Fatalf("first ship = %+v, %v; want 2 files copied", first, err)
	}
	again, err := shipOne(ctx, w.m.sess, c)
	if err != nil || again.Copied || again.Sent != 0 || !strings.Contains(again.String(), "nothing copied") {
		t.Fatalf("second ship = %+v, %v; want nothing copied", again, err)
	}
	_ = w.m.Close()
	w.connect(t)
	if got, ok := w.m.CapabilityHashes(); !ok || len(got) != 1 || got["tool"] != c.Hash {
		t.Fatalf("hello reported %v, want tool → %s", got, c.Hash)
	}
	if err := os.RemoveAll(c.Runtime); err != nil {
		t.Fatal(err)
	}
	spec := capSpec(w, c)
	res, _, err := w.m.Run(ctx, "job_cap", spec)
	if err != nil || res.ReturnCode == nil || *res.ReturnCode != 0 {
		t.Fatalf("capability job = %+v, %v", res, err)
	}
	out, _ := os.ReadFile(filepath.Join(spec.ArtifactDir, "out.txt"))
	if string(out) != sandbox.CapabilityRoot+"/tool x\n" {
		t.Errorf("out.txt = %q", out)
	}
}

// TestCapabilityTamperedNotReported: a runtime changed on the worker after
// it was shipped is left out of hello (the log says why), and a job asking
// for it fails without running.
func TestCapabilityTamperedNotReported(t *testing.T) {
	t.Parallel()
	w := newTestWorker(t, 60e9)
	logs := &tailBuffer{} // the daemon writes it while the test reads it
	w.d.log = slog.New(slog.NewTextHandler(logs, nil))
	c := testCapability(t, w.dir, "tool")
	if _, err := shipOne(context.Background(), w.m.sess, c); err != nil {
		t.Fatal(err)
	}
	tool := filepath.Join(w.d.capRuntime("tool", c.Hash), "bin", "tool")
	if err := os.WriteFile(tool, []byte("#!/bin/sh\necho tampered > out.txt\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	_ = w.m.Close()
	w.connect(t)
	if got, _ := w.m.CapabilityHashes(); len(got) != 0 {
		t.Errorf("hello reported %v for a tampered runtime", got)
	}
	if !strings.Contains(logs.String(), "capability not reported") || !strings.Contains(logs.String(), "changed on the worker") {
		t.Errorf("daemon log lacks the reason:\n%s", logs)
	}
	_, _, err := w.m.Run(context.Background(), "job_tampered", capSpec(w, c))
	if err == nil || !strings.Contains(err.Error(), "changed on the worker") {
		t.Errorf("a job of the tampered capability = %v, want the refusal", err)
	}
}

// TestCapabilityInstallRefusals: malformed requests, and files that do not
// make the declared hash, install nothing.
func TestCapabilityInstallRefusals(t *testing.T) {
	t.Parallel()
	w := newTestWorker(t, 60e9)
	good := testCapability(t, w.dir, "tool")
	files, paths, err := runtimeFiles(good.Runtime)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		edit func(*capabilityArgs)
		want string
	}{
		{"bad name", func(a *capabilityArgs) { a.Name = "../x" }, "malformed"},
		{"bad hash", func(a *capabilityArgs) { a.Hash = "zz" }, "malformed"},
		{"escaping file", func(a *capabilityArgs) { a.Files[0].Rel = "../evil" }, "malformed"},
		{"absolute file", func(a *capabilityArgs) { a.Files[0].Rel = "/etc/passwd" }, "malformed"},
		{"another hash", func(a *capabilityArgs) { a.Hash = strings.Repeat("ab", 32) }, "discarded"},
		{"another manifest", func(a *capabilityArgs) { a.Manifest = json.RawMessage(`{"runtime":"/x"}`) }, "discarded"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := capabilityArgs{Name: good.Name, Hash: good.Hash, Manifest: good.Manifest, Files: append([]capFile(nil), files...)}
			tc.edit(&a)
			var reply capabilityReply
			err := w.m.sess.call(context.Background(), opCapability, a, &reply)
			if reply.Status == capMissing { // the blobs first, then the install must refuse
				for _, b := range reply.Missing {
					if err := putBlob(context.Background(), w.m.sess, paths[b.SHA256], b); err != nil {
						t.Fatal(err)
					}
				}
				err = w.m.sess.call(context.Background(), opCapability, a, &reply)
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("install = %+v, %v; want %q", reply, err, tc.want)
			}
			if got := w.d.capabilities(); len(got) != 0 {
				t.Errorf("installed %v after a refusal", got)
			}
		})
	}
}

// TestJobRequestCapability: a spec whose only read-only mount is its
// capability's runtime carries the capability; any other mount is refused.
func TestJobRequestCapability(t *testing.T) {
	t.Parallel()
	root := sandbox.CapabilityRoot + "/tool"
	ref := &sandbox.CapabilityRef{Name: "tool", Hash: strings.Repeat("cd", 32)}
	cases := []struct {
		name    string
		mounts  []sandbox.Mount
		ref     *sandbox.CapabilityRef
		refused bool
	}{
		{"capability runtime only", []sandbox.Mount{{Host: "/srv/tool", Virtual: root}}, ref, false},
		{"an extra host folder", []sandbox.Mount{{Host: "/srv/tool", Virtual: root}, {Host: "/data", Virtual: "/data"}}, ref, true},
		{"a mount without a capability", []sandbox.Mount{{Host: "/srv/tool", Virtual: root}}, nil, true},
	}
	for _, tc := range cases {
		req, err := jobRequest("job_x", sandbox.Bubblewrap, sandbox.Spec{ReadOnly: tc.mounts, Capability: tc.ref})
		if tc.refused != (err != nil) || !tc.refused && (req.Capability == nil || *req.Capability != *ref) {
			t.Errorf("%s: request %+v, %v", tc.name, req.Capability, err)
		}
	}
}
