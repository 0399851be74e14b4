package engine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"
)

// TestSealRaceSymlinkSwap runs lab run 1,000 times while another goroutine
// swaps research/in.txt with a symlink to a secret outside research/
// (renameat2 RENAME_EXCHANGE, as an agent could): every run must seal the
// real file or be refused with a one-line error, and no sealed blob may
// ever hold the secret.
func TestSealRaceSymlinkSwap(t *testing.T) {
	c, s := newTestStudy(t, nil)
	writeResearch(t, c, "sim.py", "print(1)\n", 0o644)
	writeResearch(t, c, "in.txt", "the real input\n", 0o644)
	secret := filepath.Join(filepath.Dir(c.Dir), "secret.txt")
	must(t, os.WriteFile(secret, []byte("TOP SECRET\n"), 0o644))
	in, swap := filepath.Join(c.Research(), "in.txt"), filepath.Join(c.Research(), "swap")
	must(t, os.Symlink(secret, swap))
	realSum, _, err := hashFile(in)
	must(t, err)
	secretSum, _, err := hashFile(secret)
	must(t, err)

	stop := make(chan struct{})
	var swaps atomic.Int64
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			if unix.Renameat2(unix.AT_FDCWD, in, unix.AT_FDCWD, swap, unix.RENAME_EXCHANGE) == nil {
				swaps.Add(1)
			}
		}
	})
	lab := &Lab{C: c, S: s, Cores: 2, MemMB: 8192}
	const runs = 1000
	var sealedReal, refused, sealedOutside int
	for range runs {
		got, err := lab.Run(context.Background(), RunArgs{Source: "sim.py", Inputs: []string{"in.txt"}, Outputs: []string{"o"}})
		if err != nil {
			if !errors.Is(err, ErrLab) || strings.Contains(err.Error(), "\n") {
				t.Errorf("refusal is not a one-line lab error: %v", err)
			}
			refused++
			continue
		}
		switch got.Inputs["in.txt"] {
		case realSum:
			sealedReal++
		case secretSum:
			sealedOutside++
		default:
			t.Errorf("sealed an unknown content: %v", got.Inputs)
		}
	}
	close(stop)
	wg.Wait()
	_, err = os.Stat(c.SealedBlob(secretSum))
	blob := err == nil
	t.Logf("%d runs, %d swaps: %d sealed the real file, %d refused, %d sealed the outside file (blob of the secret: %v)",
		runs, swaps.Load(), sealedReal, refused, sealedOutside, blob)
	if sealedOutside > 0 || blob {
		t.Fatalf("the secret from outside research/ was sealed (%d receipts, blob %v)", sealedOutside, blob)
	}
	if sealedReal == 0 || refused == 0 {
		t.Fatalf("the race was not exercised: %d sealed, %d refused", sealedReal, refused)
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
