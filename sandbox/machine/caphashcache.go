package machine

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"path/filepath"
	"sync"
	"syscall"

	"github.com/simjecture/simjecture/sandbox"
)

// Re-hashing a shipped runtime on every hello and every job start cost
// about 0.5 s per 400 MiB, with the daemon's capability lock held. The
// daemon keeps each runtime folder's hash with a signature of its files'
// metadata — path, inode, size, mode, mtime and ctime, read with one
// lstat each — and hashes the contents again only when the signature
// changed. Any write to a file, a chmod, a rename or a replacement changes
// its ctime or inode, which no unprivileged process can set back; so a
// runtime changed on the worker is hashed again, and caught, at the next
// hello or job start. (A kernel without multigrain timestamps keeps ctime
// at clock-tick precision: a same-size rewrite within the tick of the
// last hash — milliseconds — would wait for the file's next change.)

var runtimeHashes = struct {
	mu sync.Mutex
	m  map[string]cachedHash // runtime folder → its hash and signature
}{m: map[string]cachedHash{}}

type cachedHash struct {
	sig, hash string
}

// directoryHash is sandbox.DirectoryHash of dir, from the cache when the
// folder's metadata signature is the one it was hashed with.
func directoryHash(dir string) (string, error) {
	sig, err := metaSignature(dir)
	if err != nil {
		return sandbox.DirectoryHash(dir) // says what is wrong with it
	}
	runtimeHashes.mu.Lock()
	c, ok := runtimeHashes.m[dir]
	runtimeHashes.mu.Unlock()
	if ok && c.sig == sig {
		return c.hash, nil
	}
	hash, err := sandbox.DirectoryHash(dir)
	if err != nil {
		return "", err
	}
	runtimeHashes.mu.Lock()
	runtimeHashes.m[dir] = cachedHash{sig: sig, hash: hash}
	runtimeHashes.mu.Unlock()
	return hash, nil
}

// metaSignature is the sha256 of every entry's path and lstat metadata
// under dir, in walk (lexical) order.
func metaSignature(dir string) (string, error) {
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		var st syscall.Stat_t
		if err := syscall.Lstat(p, &st); err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		fmt.Fprintf(h, "%s\x00%d:%d:%d:%o:%d.%d:%d.%d\n", rel, st.Dev, st.Ino, st.Size, st.Mode,
			st.Mtim.Sec, st.Mtim.Nsec, st.Ctim.Sec, st.Ctim.Nsec)
		return nil
	})
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%x", h.Sum(nil)), nil
}
