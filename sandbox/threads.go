package sandbox

import (
	"runtime"
	"sync"
)

// threadReserve is how many OS threads a runner (and a host whose
// processes are capped) starts ahead of need.
const threadReserve = 16

// reserveThreads makes the Go runtime start n OS threads now and keep them
// idle. A fork bomb can fill the pids cgroup a study's processes share
// (MaxProcesses) before the watchdog kills it; the runtime cannot survive
// failing to start a thread ("failed to create new OS thread" is fatal), so
// the runner and the supervisor start the threads they will need while they
// can: the runtime keeps idle threads and reuses them.
func reserveThreads(n int) {
	var locked, done sync.WaitGroup
	release := make(chan struct{})
	for range n {
		locked.Add(1)
		done.Go(func() {
			runtime.LockOSThread() // each holds a thread of its own
			locked.Done()
			<-release
			runtime.UnlockOSThread() // and gives it back, idle, when it ends
		})
	}
	locked.Wait()
	close(release)
	done.Wait()
}
