package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// diskFullAgent queues, in its first turn, an experiment that writes more
// than the campaign's disk holds and, with FILL=yes, then fills that disk
// itself (research/filler); every later turn pauses the study.
const diskFullAgent = `#!/bin/sh
cat > /dev/null
if [ "$SIMJECTURE_TURN" = 1 ]; then
	printf 'sleep 1\nhead -c 12000000 /dev/zero > big.bin\n' > fill.sh
	echo '{"source":"fill.sh","outputs":["big.bin"],"resources":{"cpus":1,"memory_mb":256,"max_file_mb":64}}' |
		"$SIMJECTURE_BIN" lab run >&2
	[ "%s" = yes ] && head -c 16000000 /dev/zero > filler 2>/dev/null
	exit 0
fi
"$SIMJECTURE_BIN" pause --campaign "$SIMJECTURE_STUDY" >&2
`

// mountTmpfs mounts a tmpfs of size at dir for the test, or skips it.
func mountTmpfs(t *testing.T, dir, size string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("a tmpfs cannot be mounted here (root and CAP_SYS_ADMIN needed): %v %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", "-l", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v %s", dir, err, out)
		}
	})
}

// TestDiskFullEndsTheReceipt: with the campaign's disk full while an
// experiment runs, the study stops for the operator after harness errors
// (or the receipt ends failed naming the path and the free space) instead
// of waiting for a receipt that stays running; after resume with the space
// freed no receipt is running.
func TestDiskFullEndsTheReceipt(t *testing.T) {
	for _, tc := range []struct {
		name string
		fill bool // the agent fills the disk too, so the store cannot be written either
	}{{"experiment overflows", false}, {"agent fills the disk", true}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			diskFull(t, tc.fill)
		})
	}
}

func diskFull(t *testing.T, fill bool) {
	tmp := t.TempDir()
	fs := filepath.Join(tmp, "fs")
	mountTmpfs(t, fs, "8m")
	exe := filepath.Join(tmp, "disk_full_agent.sh")
	writeFile(t, exe, fmt.Sprintf(diskFullAgent, map[bool]string{true: "yes"}[fill]))
	if err := os.Chmod(exe, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(tmp, "h.txt"), "A full disk is survivable.\n")
	writeFile(t, filepath.Join(tmp, "i.txt"), "Disk-full test.\n")
	dir := filepath.Join(fs, "study")
	r := sj(t, "", "study", "--campaign", dir, "--hypothesis-file", filepath.Join(tmp, "h.txt"),
		"--instructions-file", filepath.Join(tmp, "i.txt"), "--backend", "command", "--executable", exe,
		"--execution-backend", "bubblewrap", "--wall-seconds", "60", "--turn-seconds", "30", "--batch")
	snap := mustAPIStatus(t, dir)
	t.Logf("study: %s\nstatus %s; receipts %s", r, snap.Status, receiptLines(snap.raw))
	failedForSpace := len(status(t, dir).withStatus("failed")) == 1 && strings.Contains(snap.raw, "no space left on the device of ") &&
		strings.Contains(snap.raw, "bytes free")
	// A store that cannot record even the pause: exit 1 with one line saying so (docs/campaign.md).
	unrecorded := r.code == 1 && strings.Contains(r.stderr, "consecutive harness errors")
	if snap.Status != "paused_external_error" && !unrecorded && !failedForSpace {
		t.Errorf("want paused_external_error after harness errors, or the receipt failed naming the free space:\n%s", snap.raw)
	}
	// The store's own full disk names its file and the free space too.
	if said := r.stderr + snap.raw; unrecorded && !(strings.Contains(said, "no space left on the device of "+filepath.Join(dir, "simjecture.db")) && strings.Contains(said, "bytes free")) {
		t.Errorf("the store's full disk does not name simjecture.db and the free space:\n%s", said)
	}
	if fill {
		if err := os.Remove(filepath.Join(dir, "research", "filler")); err != nil {
			t.Fatal(err)
		}
	}
	r = sj(t, "", "resume", "--campaign", dir, "--batch")
	after := status(t, dir)
	t.Logf("resume exited %d as %s", r.code, after.Status)
	if running := after.withStatus("running", "queued"); len(running) > 0 || after.Status != "paused" {
		t.Errorf("after resume: %s, %d receipts still running or queued: %+v\n%s", after.Status, len(running), running, r)
	}
}

// receiptLines is each receipt's status and error from a raw snapshot, for the log.
func receiptLines(raw string) string {
	var b strings.Builder
	for _, line := range strings.Split(raw, "\n") {
		if strings.Contains(line, `"error"`) || strings.Contains(line, `"last_error"`) {
			b.WriteString("\n  " + strings.TrimSpace(line))
		}
	}
	return b.String()
}
