package machine

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/simjecture/simjecture/sandbox"
)

// Capability is one capability to ship to a worker (`worker prepare
// --capabilities`): one whose manifest names no extra read-only mounts.
type Capability struct {
	Name     string
	Hash     string          // its manifest hash, as a study freezes it
	Manifest json.RawMessage // the manifest's canonical JSON, as hashed
	Runtime  string          // its runtime folder on this host
}

// ShipReport is what shipping one capability did.
type ShipReport struct {
	Name   string
	Files  int   // files of its runtime
	Sent   int   // files whose blob was streamed
	Bytes  int64 // bytes streamed
	Modes  int   // files whose executable bit the worker had otherwise
	Copied bool  // false: the worker had it with that hash and modes, nothing was copied
}

// shipSSH ships each capability over one session to the worker's daemon:
// the runtime's files as content-addressed blobs (hash-checked as they
// arrive), then the install, which the daemon hash-checks as a whole.
// With no capabilities it only says that this kind ships them.
func shipSSH(ctx context.Context, p Profile, o Options, caps []Capability, log func(string)) error {
	if len(caps) == 0 {
		return nil
	}
	sum, err := fileSHA256(o.SelfExe)
	if err != nil {
		return err
	}
	s, err := dial(ctx, sshTarget{p: p}, sum)
	if err != nil {
		return err
	}
	defer s.close()
	for _, c := range caps {
		rep, err := shipOne(ctx, s, c)
		if err != nil {
			return fmt.Errorf("ship capability %s to worker %s: %w", c.Name, p.ID, err)
		}
		log(rep.String())
	}
	return nil
}

// String is the one line `worker prepare` prints for the capability.
func (r ShipReport) String() string {
	if !r.Copied {
		return fmt.Sprintf("capability %s already on the worker: nothing copied", r.Name)
	}
	line := fmt.Sprintf("shipped capability %s: %d of %d files, %d bytes (sha256 checked on the worker)", r.Name, r.Sent, r.Files, r.Bytes)
	if r.Modes > 0 {
		line += fmt.Sprintf("; executable bit of %d files set as on this host", r.Modes)
	}
	return line
}

// shipOne asks the daemon for the capability, puts the blobs it lacks and
// asks again.
func shipOne(ctx context.Context, s *session, c Capability) (ShipReport, error) {
	files, paths, err := runtimeFiles(c.Runtime)
	if err != nil {
		return ShipReport{}, err
	}
	rep := ShipReport{Name: c.Name, Files: len(files)}
	args := capabilityArgs{Name: c.Name, Hash: c.Hash, Manifest: c.Manifest, Files: files}
	var reply capabilityReply
	if err := s.call(ctx, opCapability, args, &reply); err != nil || reply.Status == capPresent {
		return rep, err
	}
	if reply.Status == capInstalled { // every blob was on the worker already
		rep.Modes, rep.Copied = reply.Modes, true
		return rep, nil
	}
	for _, b := range reply.Missing {
		if err := putBlob(ctx, s, paths[b.SHA256], b); err != nil {
			return rep, err
		}
		rep.Sent++
		rep.Bytes += sizeOf(files, b.SHA256) - b.Have
	}
	if err := s.call(ctx, opCapability, args, &reply); err != nil {
		return rep, err
	}
	if reply.Status != capInstalled {
		return rep, fmt.Errorf("the worker answered %q after the files were sent", reply.Status)
	}
	rep.Modes, rep.Copied = reply.Modes, true
	return rep, nil
}

// runtimeFiles lists the regular files of a runtime folder with their
// hashes and modes, and the host path of each hash.
func runtimeFiles(dir string) ([]capFile, map[string]string, error) {
	var files []capFile
	paths := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		info, err := e.Info()
		if err != nil {
			return err
		}
		if !info.Mode().IsRegular() {
			return fmt.Errorf("%s is not a regular file (symlinks are refused)", p)
		}
		sum, n, err := sandbox.HashFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		files = append(files, capFile{Rel: filepath.ToSlash(rel), SHA256: sum, Bytes: n, Mode: info.Mode().Perm()})
		paths[sum] = p
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("runtime %s: %w", dir, err)
	}
	return files, paths, nil
}

func sizeOf(files []capFile, sum string) int64 {
	for _, f := range files {
		if f.SHA256 == sum {
			return f.Bytes
		}
	}
	return 0
}

// ShipCapabilities ships caps to the worker of p (its kind's row). With
// no capabilities it ships nothing and only refuses a kind that cannot
// take them.
func ShipCapabilities(ctx context.Context, p Profile, o Options, caps []Capability, log func(string)) error {
	info, err := Describe(p.Kind)
	if err != nil {
		return err
	}
	return info.Ship(ctx, p, o, caps, log)
}

// shipLocal ships nothing: this host reads the study's capabilities folder.
func shipLocal(_ context.Context, _ Profile, _ Options, caps []Capability, log func(string)) error {
	if len(caps) > 0 {
		log("this host runs capabilities from the study's capabilities folder: nothing to ship")
	}
	return nil
}

// shipSlurm refuses: a Slurm job does not run shipped capabilities yet.
func shipSlurm(_ context.Context, p Profile, _ Options, _ []Capability, _ func(string)) error {
	return fmt.Errorf("worker %s is a Slurm worker: capabilities are not shipped to Slurm workers yet (--capabilities is for an SSH worker): %w", p.ID, ErrInvalid)
}
