// Command slurmcluster runs the slurmfix test cluster for tests outside
// e2e that may not import it (the sandbox/slurm package's tests build and
// start this program): it prints one JSON line describing the running
// cluster, then stops it when its standard input closes or on SIGTERM.
// It exits 3, saying why, when no cluster can be started here.
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/simjecture/simjecture/e2e/slurmfix"
)

// exitUnavailable tells the caller to skip: Slurm is not installed or we
// are not root.
const exitUnavailable = 3

func main() {
	if why := slurmfix.Missing(); why != "" {
		fmt.Fprintln(os.Stderr, why)
		os.Exit(exitUnavailable)
	}
	var o slurmfix.Options // SLURMFIX_OPTIONS may hold them as JSON
	if opts := os.Getenv("SLURMFIX_OPTIONS"); opts != "" {
		if err := json.Unmarshal([]byte(opts), &o); err != nil {
			fmt.Fprintln(os.Stderr, "slurmcluster: SLURMFIX_OPTIONS:", err)
			os.Exit(2)
		}
	}
	c, err := slurmfix.Launch(o)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	info := map[string]string{"conf": c.Conf, "shared": c.Shared(), "node": c.Node, "partition": c.Partition, "dir": c.Dir}
	if err := json.NewEncoder(os.Stdout).Encode(info); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	done := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		close(done)
	}()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	select {
	case <-done:
	case <-sigs:
	}
	if err := c.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
