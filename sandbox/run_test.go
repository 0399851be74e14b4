package sandbox

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const secretVar = "SIMJECTURE_TEST_SECRET"

const inspectPy = `import json, os, socket
r = {"secret": os.environ.get("SIMJECTURE_TEST_SECRET"), "cwd": os.getcwd(),
     "home": os.environ.get("HOME"), "tmpdir": os.environ.get("TMPDIR"),
     "custom": os.environ.get("CUSTOM"), "backend": os.environ.get("SIMJECTURE_EXECUTION_BACKEND"),
     "shadow": os.path.exists("/etc/shadow"), "env": sorted(os.environ)}
try:
    open("/usr/simjecture-probe", "w")
    r["usr_write"] = "ok"
except OSError as e:
    r["usr_write"] = e.strerror
try:
    socket.create_connection(("1.1.1.1", 53), timeout=2)
    r["net"] = "connected"
except OSError as e:
    r["net"] = str(e)
r["ifaces"] = [n for _, n in socket.if_nameindex()]
with open(os.path.join(os.environ["TMPDIR"], "t"), "w") as f:
    f.write("x")
json.dump(r, open("out/result.json", "w"))
print("done")
`

// backendCases are the backends with the account each one must run as.
// backendCase is a backend and the account a test runs it as.
type backendCase struct {
	name     string
	backend  Backend
	asNobody bool
}

var backendCases = []backendCase{
	{"bubblewrap-root", Bubblewrap, false},
	{"bubblewrap-nobody", Bubblewrap, true},
	{"proot-nobody", ProotCooperative, true},
	{"process-nobody", ProcessCooperative, true},
}

func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to switch to uid 65534")
	}
}

func TestRunPythonExperiment(t *testing.T) {
	requireRoot(t)
	t.Setenv(secretVar, "hunter2")
	for _, c := range backendCases {
		t.Run(c.name, func(t *testing.T) {
			e := experiment{backend: c.backend, asNobody: c.asNobody,
				files:   map[string]string{"sim.py": inspectPy, "out/.keep": ""},
				command: []string{"python3", "sim.py"}, outputs: []string{"out/result.json"},
				env: map[string]string{"CUSTOM": "/work/data:/tmp/x:/usr/bin"}}
			res, spec, err := e.run(t)
			if err != nil {
				t.Fatal(err)
			}
			if res.ReturnCode == nil || *res.ReturnCode != 0 || res.LimitExceeded != "" {
				t.Fatalf("rc=%v limit=%q stderr=%s", res.ReturnCode, res.LimitExceeded, res.StderrTail)
			}
			checkInspection(t, c.backend, res, spec)
		})
	}
}

func checkInspection(t *testing.T, b Backend, res Result, spec Spec) {
	t.Helper()
	var r struct {
		Secret, Cwd, Home, Tmpdir, Custom, Backend, UsrWrite, Net string
		UsrWriteAlt                                               string `json:"usr_write"`
		Shadow                                                    bool
		Ifaces, Env                                               []string
	}
	must(t, json.Unmarshal([]byte(readArtifact(t, spec, "out/result.json")), &r))
	t.Logf("%s: cwd=%s usr_write=%s net=%s ifaces=%v shadow=%v env=%v", b, r.Cwd, r.UsrWriteAlt, r.Net, r.Ifaces, r.Shadow, r.Env)
	a, ok := res.Artifacts["out/result.json"]
	if sum, _, _ := HashFile(filepath.Join(spec.ArtifactDir, "out/result.json")); !ok || a.SHA256 != sum {
		t.Errorf("artifact hash %v does not match the collected file %s", a, sum)
	}
	if r.Secret != "" || r.UsrWriteAlt == "ok" || r.Backend != string(b) || res.StdoutTail != "done\n" {
		t.Errorf("secret=%q usr_write=%q backend=%q stdout=%q", r.Secret, r.UsrWriteAlt, r.Backend, res.StdoutTail)
	}
	wantCwd := "/work"
	if b == ProcessCooperative {
		wantCwd = filepath.Join(spec.RunDir, "work")
	}
	if r.Cwd != wantCwd || r.Home != wantCwd || !strings.HasPrefix(r.Custom, wantCwd+"/data:") || !strings.HasSuffix(r.Custom, ":/usr/bin") {
		t.Errorf("cwd=%q home=%q custom=%q, want %q", r.Cwd, r.Home, r.Custom, wantCwd)
	}
	if b == Bubblewrap && (r.Shadow || !slices.Equal(r.Ifaces, []string{"lo"}) || r.Net == "connected") {
		t.Errorf("bubblewrap: shadow=%v ifaces=%v net=%q", r.Shadow, r.Ifaces, r.Net)
	}
	// A run this short may end before any sample that counts (see
	// TestPeakRSSIsTheExperiments): no figure then, never a wrong one.
	if (res.PeakRSSBytes != nil && *res.PeakRSSBytes <= 0) || res.Containment == "" {
		t.Errorf("peak=%v containment=%q", res.PeakRSSBytes, res.Containment)
	}
}

func TestSealedInputMutation(t *testing.T) {
	requireRoot(t)
	script := "import os\nos.chmod('sim.py', 0o644)\nopen('sim.py', 'a').write('# changed\\n')\nos.chmod('data.txt', 0o644)\n"
	for _, c := range backendCases {
		t.Run(c.name, func(t *testing.T) {
			e := experiment{backend: c.backend, asNobody: c.asNobody,
				files:   map[string]string{"sim.py": script, "data.txt": "1,2,3\n", "keep.txt": "same"},
				command: []string{"python3", "sim.py"}}
			res, spec, err := e.run(t)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(res.InputMutations, []string{"data.txt", "sim.py"}) {
				t.Errorf("mutations = %v, want [data.txt sim.py]; stderr=%s", res.InputMutations, res.StderrTail)
			}
			for _, f := range spec.Sealed {
				if sum, _, _ := HashFile(f.HostPath); sum != f.SHA256 {
					t.Errorf("host copy %s changed", f.Rel)
				}
			}
		})
	}
}

func TestSealChangedBeforeRun(t *testing.T) {
	e := experiment{backend: Bubblewrap, files: map[string]string{"sim.py": "print(1)\n"}, command: []string{"python3", "sim.py"}}
	spec := e.spec(t)
	must(t, os.WriteFile(spec.Sealed[0].HostPath, []byte("print(2)\n"), 0o644))
	_, err := Run(t.Context(), spec)
	if err == nil || !strings.Contains(err.Error(), "changed before isolated execution") {
		t.Fatalf("err = %v", err)
	}
	if _, err := os.Stat(spec.RunDir); !os.IsNotExist(err) {
		t.Errorf("run dir left behind: %v", err)
	}
}

func TestSpecRejected(t *testing.T) {
	base := experiment{backend: Bubblewrap, command: []string{"true"}}
	cases := []struct {
		name   string
		mutate func(*Spec)
	}{
		{"nul in argv", func(s *Spec) { s.Command = []string{"echo", "a\x00b"} }},
		{"nul in env", func(s *Spec) { s.Env = map[string]string{"A": "x\x00"} }},
		{"bad env name", func(s *Spec) { s.Env = map[string]string{"A=B": "x"} }},
		{"no command", func(s *Spec) { s.Command = nil }},
		{"option as command", func(s *Spec) { s.Command = []string{"--bind"} }},
		{"zero timeout", func(s *Spec) { s.Timeout = 0 }},
		{"relative run dir", func(s *Spec) { s.RunDir = "run" }},
		{"auto backend", func(s *Spec) { s.Backend = Auto }},
		{"escaping seal", func(s *Spec) { s.Sealed = []SealedFile{{Rel: "../x", HostPath: "/etc/hostname"}} }},
		{"mount over work", func(s *Spec) { s.ReadOnly = []Mount{{Host: "/usr", Virtual: "/work/x"}} }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			spec := base.spec(t)
			c.mutate(&spec)
			if _, err := Run(t.Context(), spec); err == nil {
				t.Fatal("Run accepted the spec")
			}
		})
	}
}

func TestCooperativeRefusesRoot(t *testing.T) {
	requireRoot(t)
	for _, b := range []Backend{ProotCooperative, ProcessCooperative} {
		e := experiment{backend: b, command: []string{"true"}}
		_, err := Run(t.Context(), e.spec(t))
		if err == nil || !strings.Contains(err.Error(), "requires an unprivileged account") {
			t.Errorf("%s: err = %v", b, err)
		}
	}
}

func TestOutputCollection(t *testing.T) {
	requireRoot(t)
	script := `set -e
mkdir -p d real
echo ok > d/good.txt
ln -s /etc/passwd link
echo h > orig; ln orig hard
mkfifo fifo
echo s > real/f; ln -s real dirlink
head -c 2000000 /dev/zero > big || true
`
	want := map[string]string{"link": ReasonSymlink, "hard": ReasonHardLink, "fifo": ReasonNotRegular,
		"dirlink/f": ReasonEscapes, "../escape": ReasonEscapes, "/etc/passwd": ReasonEscapes,
		"big": ReasonTooLarge, "stdout.log": ReasonReserved}
	for _, c := range backendCases {
		t.Run(c.name, func(t *testing.T) {
			outputs := []string{"d/good.txt", "absent.txt"}
			for p := range want {
				outputs = append(outputs, p)
			}
			e := experiment{backend: c.backend, asNobody: c.asNobody, files: map[string]string{"make.sh": script},
				command: []string{"sh", "make.sh"}, outputs: outputs, maxFile: 1 << 20}
			res, spec, err := e.run(t)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, r := range res.RejectedOutputs {
				got[r.Path] = r.Reason
			}
			if len(got) != len(want) || len(res.Artifacts) != 1 || !slices.Equal(res.MissingOutputs, []string{"absent.txt"}) {
				t.Fatalf("rejected=%v artifacts=%v missing=%v stderr=%s", got, res.Artifacts, res.MissingOutputs, res.StderrTail)
			}
			for p, r := range want {
				if got[p] != r {
					t.Errorf("%s: reason %q, want %q", p, got[p], r)
				}
			}
			if readArtifact(t, spec, "d/good.txt") != "ok\n" {
				t.Error("d/good.txt not collected")
			}
		})
	}
}

func TestLogsBounded(t *testing.T) {
	e := experiment{backend: Bubblewrap, files: map[string]string{"noisy.sh": "head -c 3000000 /dev/zero | tr '\\0' a; echo END"},
		command: []string{"sh", "noisy.sh"}}
	res, spec, err := e.run(t)
	if err != nil {
		t.Fatal(err)
	}
	kept := readArtifact(t, spec, StdoutLog)
	marker := "… 1951428 bytes truncated …"
	if len(kept) > 1<<20+100 || !strings.Contains(kept, marker) || !strings.HasSuffix(kept, "aEND\n") {
		t.Errorf("kept log: %d bytes, marker %v", len(kept), strings.Contains(kept, marker))
	}
	if len(res.StdoutTail) > 8<<10+100 || !strings.HasSuffix(res.StdoutTail, "END\n") || !strings.Contains(res.StdoutTail, "bytes truncated") {
		t.Errorf("stdout tail: %d bytes", len(res.StdoutTail))
	}
	if _, ok := res.Artifacts[StdoutLog]; ok {
		t.Error("stdout.log counted as an artifact")
	}
}

func TestBwrapArgvHasNoWholeEtc(t *testing.T) {
	e := experiment{backend: Bubblewrap, command: []string{"true"}}
	spec, _ := normalize(e.spec(t))
	argv := bwrapArgv("/usr/bin/bwrap", spec, newLayout(spec.RunDir), nil)
	joined := strings.Join(argv, " ")
	for _, bad := range []string{"--ro-bind /etc /etc", "--bind / /", "shadow"} {
		if strings.Contains(joined, bad) {
			t.Errorf("argv contains %q", bad)
		}
	}
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("no bwrap")
	}
}
