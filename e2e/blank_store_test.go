package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// TestReadersLeaveABlankStoreAlone: a campaign whose simjecture.db is a
// 0-byte file (an interrupted creation's leftover) is reported by every
// command that reads a study — exit 2 and one line for the CLI's, the lab
// protocol's refusal for lab — and nothing in the folder changes, byte for
// byte: no database is made of the empty file, no -wal or -shm beside it.
func TestReadersLeaveABlankStoreAlone(t *testing.T) {
	t.Parallel()
	tests := [][]string{
		{"status"}, {"status", "--json"}, {"verify"}, {"watch"}, {"pause"}, {"cancel"},
		{"steer", "--message", "look at the energy"}, {"resume", "--batch"}, {"mcp"},
	}
	for _, args := range tests {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), "e")
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(dir, "simjecture.db"), "")
			before := bytesOf(t, dir)
			r := sj(t, "", append([]string{args[0], "--campaign", dir}, args[1:]...)...)
			checkInvalid(t, r, dir)
			if after := bytesOf(t, dir); after != before {
				t.Errorf("%v changed the campaign folder:\nbefore:\n%s\nafter:\n%s", args, before, after)
			}
		})
	}
	t.Run("lab status", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		writeFile(t, filepath.Join(dir, "simjecture.db"), "")
		before := bytesOf(t, dir)
		if r := sj(t, "{}", "lab", "status", "--campaign", dir); r.code != 1 || !strings.Contains(r.stdout, `"ok":false`) {
			t.Errorf("lab status of a blank store: want the lab protocol's refusal, got %s", r)
		}
		if after := bytesOf(t, dir); after != before {
			t.Errorf("lab status changed the campaign folder:\nbefore:\n%s\nafter:\n%s", before, after)
		}
	})
}

// bytesOf lists every file under dir with its size and sha256, the store
// included (fingerprint describes the store by its content instead).
func bytesOf(t *testing.T, dir string) string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		rel, _ := filepath.Rel(dir, p)
		out = append(out, fmt.Sprintf("%s %d %s", rel, len(data), hex.EncodeToString(sum[:8])))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}
