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

// maxLabInput bounds the JSON arguments of one lab call on stdin.
const maxLabInput = 4 << 20

// cmdLab runs one lab call for the agent (contract section 5): its JSON
// arguments on stdin, one JSON object on stdout. Every failure, bad usage
// included, is {"ok":false,"error":…} with exit 1, so an agent reads one
// shape.
func cmdLab(ctx context.Context, args []string, io stdio) int {
	fs := newFlagSet("lab", io)
	campaign := fs.String("campaign", os.Getenv("SIMJECTURE_STUDY"), "campaign folder (default $SIMJECTURE_STUDY)")
	fs.Usage = func() { labUsage(io) }
	err := parseArgs(fs, args, 1)
	if errors.Is(err, pflag.ErrHelp) {
		return exitOK
	}
	if err != nil || fs.NArg() != 1 {
		return labFail(io, fmt.Errorf("usage: simjecture lab CALL (one of %s) with JSON on stdin", strings.Join(engine.CallNames(), ", ")))
	}
	spec, ok := engine.FindCall(fs.Arg(0))
	if !ok {
		return labFail(io, fmt.Errorf("unknown lab call %q (known: %s)", fs.Arg(0), strings.Join(engine.CallNames(), ", ")))
	}
	raw, err := readLabInput(io.in)
	if err != nil {
		return labFail(io, err)
	}
	result, err := labCall(ctx, *campaign, spec, raw)
	if err != nil {
		return labFail(io, err)
	}
	_ = json.NewEncoder(io.out).Encode(map[string]any{"ok": true, "result": result})
	return exitOK
}

// labCall runs one call against the study in dir and wakes its supervisor
// when the call hands it work.
func labCall(ctx context.Context, dir string, spec engine.CallSpec, raw []byte) (any, error) {
	if dir == "" {
		return nil, errors.New("no study: set SIMJECTURE_STUDY or --campaign")
	}
	c, err := engine.NewCampaign(dir)
	if err != nil {
		return nil, err
	}
	lab, err := engine.OpenLab(ctx, c, runtime.NumCPU(), memoryMB())
	if err != nil {
		return nil, err
	}
	defer lab.Close()
	result, err := lab.Call(ctx, spec.Name, raw)
	if err != nil {
		return nil, err
	}
	if spec.Wakes {
		engine.Wake(c)
	}
	return result, nil
}

// readLabInput reads a call's arguments, refusing more than maxLabInput bytes.
func readLabInput(r io.Reader) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxLabInput+1))
	if err != nil {
		return nil, fmt.Errorf("read stdin: %w", err)
	}
	if len(b) > maxLabInput {
		return nil, fmt.Errorf("stdin is larger than %d bytes", maxLabInput)
	}
	return b, nil
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
