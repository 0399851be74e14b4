package main

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"

	"github.com/mattn/go-isatty"
)

func workspaceRoot() string {
	if w := os.Getenv("SIMJECTURE_WORKSPACE"); w != "" {
		return w
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "simjecture-studies"
	}
	return filepath.Join(home, "simjecture", "studies")
}

func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	return ok && isatty.IsTerminal(f.Fd())
}

func memoryMB() int64 {
	var si syscallSysinfo
	if err := sysinfo(&si); err != nil {
		return 0
	}
	return int64(si.Totalram) * int64(si.Unit) >> 20
}

func printJSON(w io.Writer, v any) int {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return exitAttention
	}
	return exitOK
}
