package slurm

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// ErrPartition is returned by Partition when the partition is missing or
// not up.
var ErrPartition = errors.New("slurm partition")

// Partition runs sinfo and returns the partition jobs go to (the
// configured one, else the cluster's default), refusing one that is
// missing or not up.
func (c *Cluster) Partition(ctx context.Context) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	out, err := c.cfg.Exec.Output(ctx, "sinfo", "-h", "-o", "%P|%a")
	if err != nil {
		return "", fmt.Errorf("sinfo: %w", err)
	}
	return pickPartition(out, c.cfg.Partition)
}

// pickPartition reads sinfo's "name|avail" rows (the default's name ends
// in '*') and returns want, or the default when want is "".
func pickPartition(out, want string) (string, error) {
	var names []string
	for line := range strings.SplitSeq(strings.TrimSpace(out), "\n") {
		name, avail, ok := strings.Cut(line, "|")
		if !ok {
			continue
		}
		isDefault := strings.HasSuffix(name, "*")
		name = strings.TrimSuffix(name, "*")
		names = append(names, name)
		if name != want && (want != "" || !isDefault) {
			continue
		}
		if avail != "up" {
			return "", fmt.Errorf("%w %s is %s, not up", ErrPartition, name, avail)
		}
		return name, nil
	}
	if want == "" {
		return "", fmt.Errorf("%w: the cluster has no default partition (partitions: %s); give --partition", ErrPartition, strings.Join(names, ", "))
	}
	return "", fmt.Errorf("%w %s does not exist (partitions: %s)", ErrPartition, want, strings.Join(names, ", "))
}

// Ship copies this binary to Root/bin/simjecture-<sha256> (kept when present) and
// returns its path there.
func (c *Cluster) Ship() (string, error) { return c.binary() }
