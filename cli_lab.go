package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"

	"github.com/spf13/pflag"

	"github.com/simjecture/simjecture/engine"
)

func cmdLab(ctx context.Context, args []string, io stdio) int {
	fs := newFlagSet("lab", io)
	campaign := fs.String("campaign", os.Getenv("SIMJECTURE_STUDY"), "campaign folder (default $SIMJECTURE_STUDY)")
	fs.SetInterspersed(true)
	fs.Usage = func() { labUsage(io) }
	err := fs.Parse(args)
	if errors.Is(err, pflag.ErrHelp) {
		return exitOK
	}
	if err != nil || fs.NArg() != 1 {
		return labFail(io, fmt.Errorf("usage: simjecture lab CALL (one of %s) with JSON on stdin", strings.Join(engine.CallNames(), ", ")))
	}
	call := fs.Arg(0)
	spec, ok := engine.FindCall(call)
	if !ok {
		return labFail(io, fmt.Errorf("unknown lab call %q (known: %s)", call, strings.Join(engine.CallNames(), ", ")))
	}
	raw, err := io2ReadAll(io.in, 4<<20)
	if err != nil {
		return labFail(io, err)
	}
	if *campaign == "" {
		return labFail(io, fmt.Errorf("no study: set SIMJECTURE_STUDY or --campaign"))
	}
	c, err := engine.NewCampaign(*campaign)
	if err != nil {
		return labFail(io, err)
	}
	s, err := c.Open(ctx)
	if err != nil {
		return labFail(io, err)
	}
	defer s.Close()
	lab := &engine.Lab{C: c, S: s, Cores: runtime.NumCPU(), MemMB: memoryMB()}
	result, err := lab.Call(ctx, call, raw)
	if err != nil {
		return labFail(io, err)
	}
	if spec.Wakes {
		engine.Wake(c)
	}
	_ = json.NewEncoder(io.out).Encode(map[string]any{"ok": true, "result": result})
	return exitOK
}

func labUsage(io stdio) {
	fmt.Fprintln(io.err, "Usage: simjecture lab CALL [--campaign DIR] < args.json\n\nOne JSON object on stdin; one JSON object on stdout: {\"ok\":true,\"result\":…} or {\"ok\":false,\"error\":…} (exit 1).\nThe study is $SIMJECTURE_STUDY or --campaign.\n\nCalls:")
	for _, c := range engine.Calls() {
		fmt.Fprintf(io.err, "  %-14s %s\n", c.Name, c.Description)
	}
}

func labFail(io stdio, err error) int {
	_ = json.NewEncoder(io.out).Encode(map[string]any{"ok": false, "error": oneLine(err)})
	return exitAttention
}

func io2ReadAll(r io.Reader, limit int64) ([]byte, error) {
	if r == nil {
		return nil, nil
	}
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read stdin: %w", err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("stdin is larger than %d bytes", limit)
	}
	return b, nil
}
