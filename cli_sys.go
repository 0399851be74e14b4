package main

import (
	"syscall"
)

type syscallSysinfo = syscall.Sysinfo_t

func sysinfo(si *syscallSysinfo) error { return syscall.Sysinfo(si) }
