package machine

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sync"
)

var shaPattern = regexp.MustCompile(`^[0-9a-f]{64}$`)

func (d *daemon) blobPath(sum string) string { return filepath.Join(d.root, "blobs", sum) }

// blobHave is how many bytes of blob sum the worker holds (complete or partial).
func (d *daemon) blobHave(sum string) int64 {
	for _, p := range []string{d.blobPath(sum), d.blobPath(sum) + ".part"} {
		if info, err := os.Stat(p); err == nil {
			return info.Size()
		}
	}
	return 0
}

func (d *daemon) blobComplete(sum string) bool {
	_, err := os.Stat(d.blobPath(sum))
	return err == nil
}

// upload is one blob arriving in chunks, hashed as it is written.
type upload struct {
	sum  string
	f    *os.File
	h    hash.Hash
	size int64
	err  error
}

func (u *upload) abort() {
	if u.f != nil {
		_ = u.f.Close()
	}
}

// put takes one frame of an upload; the final frame is answered.
func (d *daemon) put(w *frameWriter, up map[string]*upload, f frame) {
	key := fmt.Sprint(f.Seq)
	u, ok := up[key]
	if !ok {
		u = d.beginUpload(f.Body)
		up[key] = u
	}
	if u.err == nil {
		if _, err := u.f.Write(f.Data); err != nil {
			u.err = fmt.Errorf("put %s: %w", u.sum, err)
		}
		u.h.Write(f.Data)
		u.size += int64(len(f.Data))
	}
	if !f.Final {
		return
	}
	delete(up, key)
	reply := frame{Seq: f.Seq, Op: opReply, Final: true}
	if err := d.endUpload(u); err != nil {
		reply.Error = err.Error()
	} else {
		reply.Body = body(blobReply{SHA256: u.sum, Bytes: u.size})
	}
	if err := w.write(reply, true); err != nil {
		d.log.Warn("reply lost", "op", opPut, "err", err)
	}
}

func (d *daemon) beginUpload(raw json.RawMessage) *upload {
	var a putArgs
	u := &upload{h: sha256.New()}
	if err := json.Unmarshal(raw, &a); err != nil || !shaPattern.MatchString(a.SHA256) || a.Offset < 0 {
		u.err = fmt.Errorf("put: malformed arguments")
		return u
	}
	u.sum = a.SHA256
	part := d.blobPath(a.SHA256) + ".part"
	f, err := os.OpenFile(part, os.O_CREATE|os.O_RDWR, 0o600)
	if err == nil {
		err = f.Truncate(a.Offset)
	}
	if err == nil && a.Offset > 0 {
		_, err = io.CopyN(u.h, f, a.Offset) // the part already here counts toward the hash
	}
	if err == nil {
		_, err = f.Seek(a.Offset, io.SeekStart)
	}
	if err != nil {
		u.err = fmt.Errorf("put %s: %w", a.SHA256, err)
		if f != nil {
			_ = f.Close()
		}
		return u
	}
	u.f, u.size = f, a.Offset
	return u
}

// endUpload checks the hash of a finished upload and makes it a blob.
func (d *daemon) endUpload(u *upload) error {
	if u.err != nil {
		u.abort()
		return u.err
	}
	err := u.f.Close()
	got := hex.EncodeToString(u.h.Sum(nil))
	part := d.blobPath(u.sum) + ".part"
	switch {
	case err != nil:
		return fmt.Errorf("put %s: %w", u.sum, err)
	case got != u.sum:
		_ = os.Remove(part)
		return fmt.Errorf("put: data hashed to %s, not %s (discarded)", got, u.sum)
	}
	if err := os.Rename(part, d.blobPath(u.sum)); err != nil {
		return fmt.Errorf("put %s: %w", u.sum, err)
	}
	return nil
}

// fetch streams one file of a finished job's artifact folder.
func (d *daemon) fetch(w *frameWriter, f frame) error {
	var a fetchArgs
	if err := json.Unmarshal(f.Body, &a); err != nil {
		return fmt.Errorf("fetch: %w", err)
	}
	j, err := d.find(f.Body)
	if err != nil || j == nil {
		return errors.Join(err, fmt.Errorf("fetch: no job %q", a.ID))
	}
	st := j.snapshot()
	want, ok := st.Files[a.Name]
	if st.Status != jobFinished || !ok {
		return fmt.Errorf("fetch: job %s has no finished file %q", a.ID, a.Name)
	}
	file, err := os.Open(filepath.Join(j.dir, "artifacts", filepath.FromSlash(a.Name)))
	if err != nil {
		return fmt.Errorf("fetch: %w", err)
	}
	defer file.Close()
	return streamFile(w, f.Seq, file, want.SHA256)
}

// streamFile sends file as data frames of seq, the last one carrying its
// hash; a file that no longer hashes to want is refused at the end.
func streamFile(w *frameWriter, seq uint64, file io.Reader, want string) error {
	h := sha256.New()
	buf := make([]byte, chunkSize)
	var n int64
	for {
		k, err := io.ReadFull(file, buf)
		if k > 0 {
			h.Write(buf[:k])
			n += int64(k)
			if werr := w.write(frame{Seq: seq, Op: opReply, Data: buf[:k]}, false); werr != nil {
				return werr
			}
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("fetch: %w", err)
		}
	}
	last := frame{Seq: seq, Op: opReply, Final: true, Body: body(fetchReply{SHA256: hex.EncodeToString(h.Sum(nil)), Bytes: n})}
	if got := hex.EncodeToString(h.Sum(nil)); want != "" && got != want {
		last.Body, last.Error = nil, fmt.Sprintf("fetch: file hashed to %s, recorded %s", got, want)
	}
	return w.write(last, true)
}

var selfSum struct {
	once sync.Once
	sum  string
	err  error
}

// selfSHA256 is the sha256 of this binary.
func selfSHA256() (string, error) {
	selfSum.once.Do(func() {
		exe, err := os.Executable()
		if err != nil {
			selfSum.err = err
			return
		}
		f, err := os.Open(exe)
		if err != nil {
			selfSum.err = err
			return
		}
		defer f.Close()
		h := sha256.New()
		if _, err := io.Copy(h, f); err != nil {
			selfSum.err = err
			return
		}
		selfSum.sum = hex.EncodeToString(h.Sum(nil))
	})
	return selfSum.sum, selfSum.err
}
