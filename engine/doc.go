// Package engine owns a study: its frozen contract, the supervisor loop, the
// experiment executor, the reviewer flow, the retry policy and the `lab`
// calls through which an agent talks to the harness.
//
// # Ownership
//
// A [Supervisor] runs one study. Every goroutine it starts (the executor, one
// per running experiment, the agent turn) has an owner that waits for it
// before the supervisor returns. State lives in package store; every change
// is one transaction that also appends a hash-chained event.
//
// # Events
//
// The engine publishes plain Go structs ([Event]); it never imports a UI
// toolkit. Subscribers get a coalescing wake-up and read the events they have
// not seen from the store, so a slow reader never loses one and never slows
// the engine.
package engine
