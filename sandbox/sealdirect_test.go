package sandbox

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// TestSealDirectCopiesAroundThePageCache seals large files of aligned and
// unaligned sizes: the copy has the input's bytes and the hash of them, and
// (where the file system takes O_DIRECT) almost none of its pages are in
// the page cache afterwards — at most the unaligned tail's, where a
// buffered copy would have all of them.
func TestSealDirectCopiesAroundThePageCache(t *testing.T) {
	cases := []struct {
		name string
		size int64
	}{
		{"one-chunk-multiple", directMin},
		{"unaligned-tail", directMin + 1},
		{"chunks-and-tail", directMin + 3*directChunk + 777},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			src := filepath.Join(dir, "src")
			writeTestFile(t, src, c.size, false)
			data, err := os.ReadFile(src)
			must(t, err)
			in, err := os.Open(src)
			must(t, err)
			defer in.Close()
			out, err := os.Create(filepath.Join(dir, "dst"))
			must(t, err)
			defer out.Close()
			sum, n, ok, err := copyDirect(in, out, c.size)
			if !ok {
				t.Skipf("the file system of %s refuses O_DIRECT or keeps files in memory; the buffered paths are tested elsewhere", dir)
			}
			want := sha256.Sum256(data)
			if err != nil || n != c.size || sum != hex.EncodeToString(want[:]) {
				t.Fatalf("sealed %s %d %v, want %x %d", sum, n, err, want, c.size)
			}
			if resident := residentPages(t, out, c.size); resident > 1 {
				t.Fatalf("%d pages of the copy are in the page cache, want at most the tail's 1", resident)
			}
			got, err := os.ReadFile(out.Name())
			must(t, err)
			if !bytes.Equal(got, data) {
				t.Fatal("the copy's bytes differ from the input's")
			}
			if flags, _ := unix.FcntlInt(out.Fd(), unix.F_GETFL, 0); flags&unix.O_DIRECT != 0 {
				t.Fatal("the copy is left open with O_DIRECT")
			}
		})
	}
}

// residentPages counts the pages of f's first size bytes in the page cache.
func residentPages(t *testing.T, f *os.File, size int64) int {
	t.Helper()
	m, err := unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
	must(t, err)
	defer unix.Munmap(m)
	vec := make([]byte, (size+int64(os.Getpagesize())-1)/int64(os.Getpagesize()))
	if _, _, e := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&m[0])), uintptr(len(m)), uintptr(unsafe.Pointer(&vec[0]))); e != 0 {
		t.Fatalf("mincore: %v", e)
	}
	n := 0
	for _, v := range vec {
		n += int(v & 1)
	}
	return n
}

// TestSealDirectStopsAtAWriteError seals 128 MiB into a copy that takes no
// write: the seal fails, and the input is not read to its end first (it was:
// the reads went on after the first failed write, as they would after
// ENOSPC part-way through a large input).
func TestSealDirectStopsAtAWriteError(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	const size = 128 << 20
	writeTestFile(t, src, size, false)
	in, err := os.Open(src)
	must(t, err)
	defer in.Close()
	dst := filepath.Join(dir, "dst")
	must(t, os.WriteFile(dst, nil, 0o600))
	out, err := os.Open(dst) // read-only: every write fails (EBADF)
	must(t, err)
	defer out.Close()
	before := readBytes(t)
	_, _, ok, err := copyDirect(in, out, size)
	read := readBytes(t) - before
	if !ok {
		t.Skipf("the file system of %s refuses O_DIRECT or keeps files in memory", dir)
	}
	if err == nil {
		t.Fatal("a seal into a copy that takes no write succeeded")
	}
	if read >= size/2 {
		t.Fatalf("read %d bytes of the %d-byte input after its first write failed", read, size)
	}
	t.Logf("read %d bytes before stopping: %v", read, err)
}

// readBytes is what this process has read so far (rchar of /proc/self/io).
func readBytes(t *testing.T) int64 {
	t.Helper()
	data, err := os.ReadFile("/proc/self/io")
	must(t, err)
	var rchar int64
	_, err = fmt.Sscanf(string(data), "rchar: %d", &rchar)
	must(t, err)
	return rchar
}

// TestSealWaysChooseTheFaster: the first segment goes direct, the second
// through the kernel's copy, then the way cheaper per byte, with every
// probeEvery-th segment the other way.
func TestSealWaysChooseTheFaster(t *testing.T) {
	cases := map[string]struct {
		direct, kernel time.Duration // per segment
		want           []sealWay
	}{
		"direct faster": {time.Millisecond, 3 * time.Millisecond,
			[]sealWay{wayDirect, wayKernel, wayDirect, wayDirect, wayDirect, wayKernel, wayDirect}},
		"kernel faster": {3 * time.Millisecond, time.Millisecond,
			[]sealWay{wayDirect, wayKernel, wayKernel, wayKernel, wayKernel, wayDirect, wayKernel}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			var s sealWays
			var got []sealWay
			for range c.want {
				way := s.next()
				got = append(got, way)
				s.record(way, map[sealWay]time.Duration{wayDirect: c.direct, wayKernel: c.kernel}[way], segmentBytes)
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("ways %v, want %v", got, c.want)
			}
		})
	}
}

// TestSealLargeBothWays seals an input of two segments and a tail in a
// process that has sealed nothing before: the first segment goes direct,
// the second through the kernel's copy, and the copy has the input's bytes
// and their hash.
func TestSealLargeBothWays(t *testing.T) {
	learned.mu.Lock()
	saved := learned.cost
	learned.cost, learned.n = [3]float64{}, 0
	learned.mu.Unlock()
	defer func() {
		learned.mu.Lock()
		learned.cost = saved
		learned.mu.Unlock()
	}()
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	size := int64(2*segmentBytes + 12345)
	writeTestFile(t, src, size, false)
	data, err := os.ReadFile(src)
	must(t, err)
	in, err := os.Open(src)
	must(t, err)
	defer in.Close()
	info, err := in.Stat()
	must(t, err)
	out, err := os.Create(filepath.Join(dir, "dst"))
	must(t, err)
	defer out.Close()
	sum, n, err := copyThenHash(in, info, out)
	want := sha256.Sum256(data)
	if err != nil || n != size || sum != hex.EncodeToString(want[:]) {
		t.Fatalf("sealed %s %d %v, want %x %d", sum, n, err, want, size)
	}
	learned.mu.Lock()
	cost := learned.cost
	learned.mu.Unlock()
	if cost[wayKernel] == 0 || (cost[wayDirect] == 0 && !inMemory(out)) {
		t.Errorf("cost per byte measured direct %.2f ns, kernel %.2f ns: want both", cost[wayDirect], cost[wayKernel])
	}
	got, err := os.ReadFile(out.Name())
	must(t, err)
	if !bytes.Equal(got, data) {
		t.Fatal("the copy's bytes differ from the input's")
	}
	if flags, _ := unix.FcntlInt(out.Fd(), unix.F_GETFL, 0); flags&unix.O_DIRECT != 0 {
		t.Fatal("the copy is left open with O_DIRECT")
	}
}
