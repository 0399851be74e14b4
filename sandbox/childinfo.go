package sandbox

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// exitedChild returns the pid of a child that has ended, without reaping it
// (waitid with WNOWAIT), or 0 when none has: until it is reaped, its limits
// (the run tag) can still be read.
func exitedChild() (int, error) {
	var info unix.Siginfo
	if err := unix.Waitid(unix.P_ALL, 0, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil); err != nil {
		return 0, err
	}
	return int(siginfoPid(&info)), nil
}

// siginfoPid reads si_pid: after three ints, at the union's alignment (a
// pointer's), where x/sys/unix keeps no field for it. WNOHANG with nothing
// ended leaves it zero.
func siginfoPid(info *unix.Siginfo) int32 {
	const off = (3*4 + unsafe.Sizeof(uintptr(0)) - 1) &^ (unsafe.Sizeof(uintptr(0)) - 1)
	return *(*int32)(unsafe.Add(unsafe.Pointer(info), off))
}
