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
	if res.LimitExceeded != c.limit || !slices.Equal(got, c.want) || len(rejected) != len(c.rejected) {
		t.Fatalf("limit %q collected %v rejected %v missing %v, want %q %v %v; stderr=%s",
			res.LimitExceeded, got, rejected, res.MissingOutputs, c.limit, c.want, c.rejected, res.StderrTail)
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
// neither as a big file nor toward the workspace, under every backend. An
// input larger than max_file_mb, or than the whole workspace, is read and
// its run succeeds; a hard link to it adds nothing; a copy of it is the
// experiment's and counts, so two copies (12 MiB) of a 6 MiB input breach
// the 10 MiB workspace, and a big file the experiment writes itself is
// file_size still.
func TestSealedInputsAreTheHarnesss(t *testing.T) {
	requireRoot(t)
	big := strings.Repeat("x", 6<<20) // 6 MiB: over max_file (1 MiB), and over half the workspace (10 MiB)
	huge := strings.Repeat("y", 12<<20)
	sum := sha256.Sum256([]byte(big))
	hash := "sha256sum big.bin | cut -d' ' -f1 > sum.txt"
	hashed := map[string]string{"sum.txt": hex.EncodeToString(sum[:]) + "\n"}
	cases := []wsCase{
		{name: "input over max_file_mb", files: map[string]string{"big.bin": big},
			command: []string{"sh", "-c", hash}, outputs: []string{"sum.txt"}, want: []string{"sum.txt"}, content: hashed},
		{name: "input over the workspace", files: map[string]string{"big.bin": huge},
			command: []string{"sh", "-c", "wc -c < big.bin > sum.txt"}, outputs: []string{"sum.txt"}, want: []string{"sum.txt"},
			content: map[string]string{"sum.txt": "12582912\n"}},
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
