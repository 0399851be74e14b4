package machine

import (
	"io/fs"
	"os"
	"syscall"
)

// ownedByUs reports whether info belongs to this process's effective uid.
func ownedByUs(info fs.FileInfo) bool {
	st, ok := info.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Geteuid()
}
