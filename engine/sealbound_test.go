package engine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/simjecture/simjecture/store"
)

// TestRunRefusesInputsOverTheWorkspace: a lab run whose source and inputs
// add up to more than the experiment's workspace limit (here one sparse
// file of the limit plus one byte, no block allocated) is refused at once
// with a one-line lab error naming the input and the sizes, and nothing is
// sealed, not even the source.
func TestRunRefusesInputsOverTheWorkspace(t *testing.T) {
	c, s := newTestStudy(t, nil)
	writeResearch(t, c, "sim.py", "print(1)\n", 0o644)
	big := filepath.Join(c.Research(), "data", "big.bin")
	must(t, os.MkdirAll(filepath.Dir(big), 0o755))
	f, err := os.Create(big)
	must(t, err)
	must(t, errors.Join(f.Truncate(ExperimentWorkspaceBytes+1), f.Close()))
	lab := &Lab{C: c, S: s, Cores: 2, MemMB: 8192}
	_, err = lab.Run(context.Background(), RunArgs{Source: "sim.py", Inputs: []string{"data/big.bin"}, Outputs: []string{"o"}})
	if !errors.Is(err, ErrLab) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("over the workspace: %v, want a one-line lab error", err)
	}
	t.Log(err)
	for _, want := range []string{"inputs:", "input data/big.bin 4.0 GiB (4294967297 bytes)", "holds at most 4.0 GiB (4294967296 bytes)"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error %q does not say %q", err, want)
		}
	}
	if names, _ := os.ReadDir(c.Sealed()); len(names) > 0 {
		t.Fatalf("refused, yet sealed/ holds %d entries", len(names))
	}
	var counts map[ExpStatus]int
	must(t, s.Read(context.Background(), func(tx *store.Tx) error {
		var err error
		counts, err = experimentCounts(tx)
		return err
	}))
	if counts[ExpQueued] > 0 {
		t.Fatalf("refused, yet %d experiments are queued", counts[ExpQueued])
	}
}

// TestCheckInputSizes: the bound is on the sum of the apparent sizes; at the
// limit a run is taken, one byte over it is refused naming the largest.
func TestCheckInputSizes(t *testing.T) {
	cases := []struct {
		name  string
		sizes []int64
		ok    bool
	}{
		{"none", nil, true}, {"at the limit", []int64{600, 400}, true},
		{"one byte over", []int64{600, 401}, false}, {"one alone over", []int64{1001}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var open []openInput
			for i, n := range c.sizes {
				open = append(open, openInput{what: "input", rel: string(rune('a' + i)), size: n})
			}
			err := checkInputSizes(open, 1000)
			if (err == nil) != c.ok {
				t.Fatalf("sizes %v: %v", c.sizes, err)
			}
			if err != nil && (!errors.Is(err, ErrLab) || !strings.Contains(err.Error(), "the largest input a ")) {
				t.Fatalf("sizes %v: %v", c.sizes, err)
			}
		})
	}
}

// TestRunSealsASparseInputWithItsHoles: a sparse input is sealed with its
// apparent size and hash, and its sealed copy allocates about what the
// original does (where the file system keeps holes).
func TestRunSealsASparseInputWithItsHoles(t *testing.T) {
	c, s := newTestStudy(t, nil)
	writeResearch(t, c, "sim.py", "print(1)\n", 0o644)
	p := filepath.Join(c.Research(), "sparse.bin")
	f, err := os.Create(p)
	must(t, err)
	const size = 256 << 20
	for _, off := range []int64{0, size / 3, size - 4096} {
		_, err := f.WriteAt([]byte(strings.Repeat("x", 4096)), off)
		must(t, err)
	}
	must(t, f.Close())
	orig := blocks(t, p)
	if orig >= size/2 {
		t.Skipf("the file system under %s does not keep holes (%d of %d bytes allocated)", c.Research(), orig, size)
	}
	want, n, err := hashFile(p)
	must(t, err)
	lab := &Lab{C: c, S: s, Cores: 2, MemMB: 8192}
	r, err := lab.Run(context.Background(), RunArgs{Source: "sim.py", Inputs: []string{"sparse.bin"}, Outputs: []string{"o"}})
	must(t, err)
	if r.Inputs["sparse.bin"] != want || n != size {
		t.Fatalf("sealed %s, want %s (%d bytes)", r.Inputs["sparse.bin"], want, n)
	}
	sealed := blocks(t, c.SealedBlob(want))
	t.Logf("apparent %d bytes; allocated: original %d, sealed %d", size, orig, sealed)
	if sealed > 2*orig+1<<20 {
		t.Fatalf("the sealed copy allocates %d bytes for %d allocated in the original: its holes were filled", sealed, orig)
	}
}

// blocks is the bytes allocated to path.
func blocks(t *testing.T, path string) int64 {
	t.Helper()
	var st syscall.Stat_t
	must(t, syscall.Stat(path, &st))
	return st.Blocks * 512
}
