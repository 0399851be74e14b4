package machine

import "runtime"

func lockThread() { runtime.LockOSThread() }
