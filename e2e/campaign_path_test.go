package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCampaignPathIsAFile gives every command that opens a campaign a path
// that is a file: each exits 2 with the same one line, "…: is a file, not a
// campaign folder" (verify too, on stderr), and the file is left as it was.
func TestCampaignPathIsAFile(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	file := filepath.Join(tmp, "somefile")
	writeFile(t, file, "not a study\n")
	hyp, ins := filepath.Join(tmp, "h.txt"), filepath.Join(tmp, "i.txt")
	writeFile(t, hyp, "Energy within 1 %\n")
	writeFile(t, ins, "Check it.\n")
	tests := [][]string{
		{"status", "--campaign", file},
		{"status", "--campaign", file, "--json"},
		{"pause", "--campaign", file},
		{"cancel", "--campaign", file},
		{"watch", "--campaign", file},
		{"steer", "--campaign", file, "--message", "look at the energy"},
		{"verify", "--campaign", file},
		{"resume", "--campaign", file, "--batch"},
		{"mcp", "--campaign", file},
		{"study", "--campaign", file, "--hypothesis-file", hyp, "--instructions-file", ins, "--backend", "scripted", "--batch"},
	}
	for _, args := range tests {
		t.Run(strings.Join(args[:1], " "), func(t *testing.T) {
			t.Parallel()
			before := fingerprint(t, tmp)
			r := sjWith(t, scratchEnv(t.TempDir()), "", args...)
			checkInvalid(t, r, "--campaign: "+file+": is a file, not a campaign folder")
			if after := fingerprint(t, tmp); after != before {
				t.Errorf("%s changed:\nbefore:\n%s\nafter:\n%s", tmp, before, after)
			}
		})
	}
	t.Run("a file in the path", func(t *testing.T) {
		t.Parallel()
		r := sj(t, "", "status", "--campaign", filepath.Join(file, "x"))
		checkInvalid(t, r, "a file is in its path, not a campaign folder")
	})
	t.Run("lab status", func(t *testing.T) {
		t.Parallel()
		r := sj(t, "{}", "lab", "status", "--campaign", file)
		if r.code != 1 || !strings.Contains(r.stdout, `"ok":false`) || !strings.Contains(r.stdout, "is a file, not a campaign folder") {
			t.Errorf("lab status on a file: want the lab protocol's refusal naming it, got %s", r)
		}
	})
	if _, err := os.Stat(file); err != nil {
		t.Fatal(err)
	}
}

// TestCampaignCannotBeCreated: a new study in a folder the file system
// cannot make (/proc makes none; a name too long) is the operator's input:
// exit 2, one line naming --campaign and the reason.
func TestCampaignCannotBeCreated(t *testing.T) {
	t.Parallel()
	c, tmp := scratchCampaign(t)
	long := filepath.Join(tmp, strings.Repeat("n", 300))
	for _, dir := range []string{"/proc/simjecture-e2e-" + randomHex(t), long} {
		t.Run(filepath.Base(dir)[:8], func(t *testing.T) {
			c := c
			c.dir = dir
			r := sjWith(t, scratchEnv(tmp), "", c.args(60, 30)...)
			checkInvalid(t, r, "--campaign: "+dir+": cannot ")
			if _, err := os.Stat(dir); err == nil {
				t.Errorf("%s was made", dir)
			}
		})
	}
}
