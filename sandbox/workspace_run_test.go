package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"
	"testing"
)

// wsCase is one experiment against the workspace limit and what it must
// end with: the limit recorded ("" for none), the outputs collected and
// the reasons of the rejected ones.
type wsCase struct {
	name     string
	files    map[string]string
	command  []string
	outputs  []string
	maxFile  int64
	space    int64
	limit    string
	want     []string          // collected outputs
	content  map[string]string // collected output → its bytes, where they are known
	rejected map[string]string // output → reason
	missing  []string
}

func (c wsCase) check(t *testing.T, bc backendCase) Result {
	t.Helper()
	e := experiment{backend: bc.backend, asNobody: bc.asNobody, files: c.files, command: c.command,
		outputs: c.outputs, maxFile: c.maxFile, space: c.space}
	res, spec, err := e.run(t)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for rel := range res.Artifacts {
		got = append(got, rel)
	}
	slices.Sort(got)
	rejected := map[string]string{}
	for _, r := range res.RejectedOutputs {
		rejected[r.Path] = r.Reason
	}
	if res.LimitExceeded != c.limit || !slices.Equal(got, c.want) || len(rejected) != len(c.rejected) || !slices.Equal(res.MissingOutputs, c.missing) {
		t.Fatalf("limit %q collected %v rejected %v missing %v, want %q %v %v %v; stderr=%s",
			res.LimitExceeded, got, rejected, res.MissingOutputs, c.limit, c.want, c.rejected, c.missing, res.StderrTail)
	}
	for p, r := range c.rejected {
		if rejected[p] != r {
			t.Errorf("%s: reason %q, want %q", p, rejected[p], r)
		}
	}
	for p, body := range c.content {
		if got := readArtifact(t, spec, p); got != body {
			t.Errorf("%s holds %q, want %q", p, got, body)
		}
	}
	return res
}

// TestSealedInputsAreTheHarnesss: the sealed copies of the inputs count
// neither as a big file nor toward the workspace, under every backend, for
// the watchdog (the run over the workspace lasts a few slow samples) and for
// the last measure. An input larger than max_file_mb, or of most of the
// workspace beside files of the experiment's own that fit only without it,
// is read and its run succeeds (inputs over the whole workspace are refused
// before sealing: TestSealAllRefusesOverTheWorkspace); a hard link to it adds nothing; a copy of it is the
// experiment's and counts, so two copies (12 MiB) of a 6 MiB input breach
// the 10 MiB workspace, and a big file the experiment writes itself is
// file_size still.
func TestSealedInputsAreTheHarnesss(t *testing.T) {
	requireRoot(t)
	big := strings.Repeat("x", 6<<20)  // 6 MiB: over max_file (1 MiB), and over half the workspace (10 MiB)
	huge := strings.Repeat("y", 9<<20) // with 4.5 MB of its own: over the workspace if the input counted
	sum := sha256.Sum256([]byte(big))
	hash := "sha256sum big.bin | cut -d' ' -f1 > sum.txt"
	hashed := map[string]string{"sum.txt": hex.EncodeToString(sum[:]) + "\n"}
	cases := []wsCase{
		{name: "input over max_file_mb", files: map[string]string{"big.bin": big},
			command: []string{"sh", "-c", hash}, outputs: []string{"sum.txt"}, want: []string{"sum.txt"}, content: hashed},
		{name: "input of most of the workspace, and files of its own", files: map[string]string{"big.bin": huge},
			command: []string{"sh", "-c", "for i in 1 2 3 4 5; do head -c 900000 /dev/zero > f$i; done; wc -c < big.bin > sum.txt; sleep 1.5"},
			outputs: []string{"sum.txt"}, want: []string{"sum.txt"}, content: map[string]string{"sum.txt": "9437184\n"}},
		{name: "hard links to the input", files: map[string]string{"big.bin": big},
			command: []string{"sh", "-c", "ln big.bin l1 && ln big.bin l2 && " + hash}, outputs: []string{"sum.txt"}, want: []string{"sum.txt"}, content: hashed},
		{name: "copies of the input", files: map[string]string{"big.bin": big}, maxFile: 8 << 20,
			command: []string{"sh", "-c", "cp big.bin c1 && cp big.bin c2 && " + hash}, outputs: []string{"sum.txt"}, limit: LimitWorkspace,
			rejected: map[string]string{"sum.txt": ReasonWorkspace}},
		{name: "a big file of its own", files: map[string]string{"big.bin": big},
			command: []string{"sh", "-c", "head -c 2000000 /dev/zero > own; " + hash}, outputs: []string{"sum.txt"}, limit: LimitFileSize,
			want: []string{"sum.txt"}, content: hashed},
	}
	for _, c := range cases {
		c.maxFile = max(c.maxFile, 1<<20)
		c.space = 10 << 20
		for _, bc := range backendCases {
			t.Run(c.name+"/"+bc.name, func(t *testing.T) {
				res := c.check(t, bc)
				if len(res.InputMutations) != 0 {
					t.Fatalf("input mutations %v", res.InputMutations)
				}
			})
		}
	}
}

// holdScript writes MiB megabytes to an unlinked temporary file (in the
// folder given as its first argument, or the default temporary folder),
// holds it open for HOLD seconds — many slow samples of the watchdog — and
// writes out.txt.
const holdScript = `import os, sys, tempfile, time
mib, hold = int(sys.argv[2]), float(sys.argv[3])
f = tempfile.TemporaryFile(dir=sys.argv[1] or None)
for _ in range(mib):
    f.write(b"\1" * (1 << 20))
f.flush()
time.sleep(hold)
open("out.txt", "w").write("ok")
`

// TestUnlinkedOpenFilesCount: files an experiment holds open after
// unlinking them count toward the workspace while it runs, in the work
// folder and in the temporary folder, under every backend: 12 MiB held in
// a 10 MiB workspace end limit_exceeded workspace long before the
// experiment would have ended (and wrote out.txt); 2 MiB held do not.
func TestUnlinkedOpenFilesCount(t *testing.T) {
	requireRoot(t)
	const hold = "20" // seconds: far more than a slow sample (≈0.5 s)
	cases := []struct {
		name, dir, mib string
		limit          string
	}{
		{"in work, over the limit", ".", "12", LimitWorkspace},
		{"in tmp, over the limit", "", "12", LimitWorkspace},
		{"in tmp, under the limit", "", "2", ""},
	}
	for _, c := range cases {
		for _, bc := range backendCases {
			t.Run(c.name+"/"+bc.name, func(t *testing.T) {
				hold := hold
				if c.limit == "" {
					hold = "1"
				}
				wc := wsCase{files: map[string]string{"hold.py": holdScript}, maxFile: 16 << 20, space: 10 << 20,
					command: []string{"python3", "hold.py", c.dir, c.mib, hold}, outputs: []string{"out.txt"},
					limit: c.limit, want: []string{"out.txt"}, content: map[string]string{"out.txt": "ok"}}
				if c.limit != "" {
					wc.want, wc.content, wc.missing = nil, nil, []string{"out.txt"} // stopped before writing it
				}
				res := wc.check(t, bc)
				if c.limit != "" && res.WallSeconds >= 20 {
					t.Fatalf("ran %.1f s: the watchdog did not stop it", res.WallSeconds)
				}
			})
		}
	}
}

// deepScript makes a tree 2,100 folders deep (deeper than PATH_MAX can
// name: 4,200 bytes of "d/"), a small file at its bottom, and out.txt.
const deepScript = `import os
fd = os.open(".", os.O_RDONLY)
for _ in range(2100):
    os.mkdir("d", dir_fd=fd)
    n = os.open("d", os.O_RDONLY, dir_fd=fd)
    os.close(fd)
    fd = n
os.close(os.open("f", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd))
open("out.txt", "w").write("ok")
`

// TestOutputReasons: the workspace measure goes through directory handles,
// so a tree deeper than PATH_MAX is measured (no breach) and out.txt beside
// it is collected, while the output at its bottom is rejected for its path
// length; an output that cannot be read is rejected as such, not as
// "not a regular file" or missing (as nobody; root reads it), and a folder
// that cannot be listed still counts as over the limit.
func TestOutputReasons(t *testing.T) {
	requireRoot(t)
	deep := strings.Repeat("d/", 2100) + "f"
	ok := map[string]string{"out.txt": "ok"}
	cases := []struct {
		name         string
		script       string
		outputs      []string
		root, nobody wsCase
		not          Backend // a backend the experiment cannot run under
	}{
		{name: "tree deeper than PATH_MAX", script: "python3 -c '" + deepScript + "'", outputs: []string{"out.txt", deep},
			root:   wsCase{want: []string{"out.txt"}, content: ok, rejected: map[string]string{deep: ReasonTooLong}},
			nobody: wsCase{want: []string{"out.txt"}, content: ok, rejected: map[string]string{deep: ReasonTooLong}},
			// PRoot translates each path through the whole chain of
			// folders: building 900 levels takes it 11 s, 2,100 minutes.
			// The measure is the same code under every backend.
			not: ProotCooperative},
		{name: "mode 000 file", script: "echo ok > out.txt; chmod 000 out.txt", outputs: []string{"out.txt"},
			root:   wsCase{want: []string{"out.txt"}, content: map[string]string{"out.txt": "ok\n"}},
			nobody: wsCase{rejected: map[string]string{"out.txt": ReasonDenied}}},
		{name: "file in a mode 000 folder", script: "mkdir d; echo ok > d/out.txt; chmod 000 d", outputs: []string{"d/out.txt"},
			root:   wsCase{want: []string{"d/out.txt"}, content: map[string]string{"d/out.txt": "ok\n"}},
			nobody: wsCase{limit: LimitWorkspace, rejected: map[string]string{"d/out.txt": ReasonDenied}}},
	}
	for _, c := range cases {
		for _, bc := range backendCases {
			if bc.backend == c.not {
				t.Logf("%s: not under %s (PRoot cannot build the tree in time)", c.name, bc.name)
				continue
			}
			t.Run(c.name+"/"+bc.name, func(t *testing.T) {
				wc := c.root
				if bc.asNobody {
					wc = c.nobody
				}
				wc.command, wc.outputs, wc.space = []string{"sh", "-c", c.script}, c.outputs, 64<<20
				wc.check(t, bc)
			})
		}
	}
}
