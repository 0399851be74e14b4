package sandbox

import (
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The agent guard stands between the supervisor and every agent process
// it starts. A supervisor killed with SIGKILL runs no clean-up, and an
// agent's parent-death signal reaches the agent alone: its descendants (a
// tool it ran, the native binary under the Codex CLI's node wrapper, the
// MCP server that one starts) were left under the host's init. The guard
// is a child subreaper with a parent-death signal of its own: what is
// orphaned below it comes to it, and when the supervisor dies it kills
// every process below itself until none is left, then exits.
//
// For an enclosed agent it stands above bwrap. bwrap arms the parent-death signal of its sandbox's init only after
// that init has forked the agent (do_init); a supervisor killed between
// bwrap's clone and that moment takes bwrap down (its own parent-death
// signal), and the init, re-parented to the host's init, then arms its
// signal against a parent that never dies: it stays, with the agent, until
// the agent ends by itself. (Killing the parent of such a launcher at random
// moments in its first 12 ms left 46 processes of 200 launches.) Such an
// init comes to the guard like any orphan.
//
// The guard outlives a SIGTERM sent to the turn's process group, so the
// agent, which gets it too, has its grace. Launching bwrap (GuardEnclosed),
// the guard ignores SIGTERM and bwrap inherits that, instead of dying at
// once and taking the agent with it; our binary, exec'd last inside,
// restores the default (EnclosedMain). Launching the agent itself
// (GuardDirect), the guard handles SIGTERM, and the exec gives the agent
// the default. SIGKILL to the group takes the guard, bwrap and its init
// (all members of the group) down.

// GuardArg is the hidden mode, dispatched by main before anything else,
// that runs GuardMain.
const GuardArg = "__agent-guard"

// How the guard starts its program (GuardMain's second argument).
const (
	GuardEnclosed = "bwrap"  // the program is bwrap: it inherits SIGTERM ignored
	GuardDirect   = "direct" // the program is the agent: SIGTERM at its default
)

// The parent-death signal belongs to a thread: the one our parent's fork
// gave (SIGKILL, kept across exec) is the main thread's, and a prctl on any
// other thread would leave it armed. So the guard runs on the main thread:
// a package init locked to it keeps main there (runtime.main runs the inits
// locked to the main thread).
func init() {
	if len(os.Args) > 1 && os.Args[1] == GuardArg {
		runtime.LockOSThread()
	}
}

// guardParentGone is the signal the guard asks for when its parent dies.
const guardParentGone = syscall.SIGUSR1

// GuardMain is the GuardArg mode: args are the supervisor's pid, how to
// start the program (GuardEnclosed or GuardDirect) and the program's argv.
// It returns the program's exit status.
func GuardMain(args []string) int {
	parent, err := strconv.Atoi(firstArg(args))
	if err != nil || parent <= 0 || len(args) < 3 || (args[1] != GuardEnclosed && args[1] != GuardDirect) {
		fmt.Fprintln(os.Stderr, "simjecture: "+GuardArg+" needs the parent's pid, "+GuardEnclosed+" or "+GuardDirect+", and a program")
		return exitUsage
	}
	mode, argv := args[1], args[2:]
	if mode == GuardEnclosed {
		signal.Ignore(syscall.SIGTERM)
	} else {
		signal.Notify(make(chan os.Signal, 1), syscall.SIGTERM) // survived; the exec resets it for the agent
	}
	gone := make(chan os.Signal, 1)
	signal.Notify(gone, guardParentGone)
	_ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
	_ = unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(guardParentGone), 0, 0, 0)
	if os.Getppid() != parent {
		return exitParentGone
	}
	attr := &syscall.ProcAttr{Env: os.Environ(), Files: []uintptr{0, 1, 2},
		Sys: &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}}
	pid, err := syscall.ForkExec(argv[0], argv, attr)
	if err != nil {
		fmt.Fprintf(os.Stderr, "simjecture: start %s: %v\n", argv[0], err)
		return exitNoExec
	}
	exited := make(chan syscall.WaitStatus, 1)
	go func() { exited <- reapUntil(pid) }()
	select {
	case ws := <-exited:
		killBelow(time.Second) // strays of the launcher, if any
		return exitLike(ws)
	case <-gone:
		killBelow(5 * time.Second)
		return exitParentGone
	}
}

func firstArg(args []string) string {
	if len(args) == 0 {
		return ""
	}
	return args[0]
}

// reapUntil reaps every child (orphans that came to the subreaper
// included) until pid has exited, and returns pid's status.
func reapUntil(pid int) syscall.WaitStatus {
	for {
		var ws syscall.WaitStatus
		got, err := syscall.Wait4(-1, &ws, 0, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil || got == pid {
			return ws
		}
	}
}

// killBelow SIGKILLs every process below the guard, reaping them, until
// none is left or limit has passed.
func killBelow(limit time.Duration) {
	deadline := time.Now().Add(limit)
	self := os.Getpid()
	for {
		for {
			got, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil)
			if got <= 0 || err != nil {
				break
			}
		}
		left := descendants(self)
		if len(left) == 0 || time.Now().After(deadline) {
			return
		}
		for _, pid := range left {
			if st, err := readStat(pid); err == nil {
				signalIfSame(pid, st.start, syscall.SIGKILL)
			}
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// exitLike ends the guard as its launcher ended: with its exit code; a
// launcher killed by signal n gives 128 + n, as a shell reports it (the
// provider reads both forms alike). The guard does not re-raise the
// signal on itself: the Go runtime handles SIGSEGV, SIGABRT, SIGQUIT and
// the like itself and would print a crash dump of the guard into the
// agent's stderr. Only SIGKILL, which nothing handles, is passed on as it
// is.
func exitLike(ws syscall.WaitStatus) int {
	if !ws.Signaled() {
		return ws.ExitStatus()
	}
	if ws.Signal() == syscall.SIGKILL {
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	}
	return 128 + int(ws.Signal())
}
