package main

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/simjecture/simjecture/engine"
)

// cmdWatch prints a study's events until it stops: every event is printed
// and no supervisor owns the study.
func cmdWatch(ctx context.Context, args []string, io stdio) int {
	fs := newFlagSet("watch", io)
	campaign := campaignFlag(fs)
	jsonl := fs.Bool("jsonl", false, "one JSON event per line")
	if code, done := parse(fs, args, 0, io); done {
		return code
	}
	c, err := engine.NewCampaign(*campaign)
	if err != nil {
		return fail(io, err)
	}
	v, err := engine.OpenView(ctx, c)
	if err != nil {
		return fail(io, err)
	}
	defer v.Close()
	var printed atomic.Int64
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	var wg sync.WaitGroup
	wg.Go(func() { stopWhenIdle(wctx, c, v, &printed, stop) })
	err = v.Follow(wctx, 0, func(ev engine.Event) error {
		if err := printEvent(io, ev, *jsonl); err != nil {
			return fmt.Errorf("write the events: %w", err) // nobody reads them any more
		}
		printed.Store(ev.Seq)
		return nil
	})
	stop()
	wg.Wait()
	if err != nil {
		return fail(io, err)
	}
	return exitOK
}

// stopWhenIdle ends watch once every event is printed and no supervisor
// owns the study (it stopped, or it was never running).
func stopWhenIdle(ctx context.Context, c engine.Campaign, v *engine.View, printed *atomic.Int64, stop func()) {
	t := time.NewTicker(300 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		last, err := v.LastSeq(ctx)
		if err == nil && printed.Load() >= last && !engine.Owned(c) {
			stop()
			return
		}
	}
}

// printEvent prints one event on stdout: a JSON line, or time, type and
// payload. A write that fails (stdout closed: SIGPIPE is caught) ends the
// watch.
func printEvent(io stdio, ev engine.Event, jsonl bool) error {
	if jsonl {
		b, _ := json.Marshal(ev)
		_, err := fmt.Fprintf(engine.TerminalSafeJSON(io.out), "%s\n", b)
		return err
	}
	_, err := fmt.Fprintln(io.out, engine.PrintableLine(fmt.Sprintf("%s %-28s %s", ev.Time, ev.Type, ev.Payload)))
	return err
}
