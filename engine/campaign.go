package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/simjecture/simjecture/sandbox"
	"github.com/simjecture/simjecture/store"
)

// Campaign is a study folder on disk (contract section 7).
type Campaign struct{ Dir string }

// NewCampaign resolves dir to an absolute path.
func NewCampaign(dir string) (Campaign, error) {
	if dir == "" {
		return Campaign{}, missingField(FieldCampaign)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return Campaign{}, fmt.Errorf("campaign %s: %w", dir, err)
	}
	return Campaign{Dir: abs}, nil
}

// DB is the store file.
func (c Campaign) DB() string { return filepath.Join(c.Dir, storeName) }

// Operator holds the hypothesis and instructions as given.
func (c Campaign) Operator() string { return filepath.Join(c.Dir, "operator") }

// Research is the agent's working folder.
func (c Campaign) Research() string { return filepath.Join(c.Dir, "research") }

// Experiments holds one folder of collected files per experiment.
func (c Campaign) Experiments() string { return filepath.Join(c.Dir, "experiments") }

// ArtifactDir is where one experiment's collected files go.
func (c Campaign) ArtifactDir(id string) string { return filepath.Join(c.Experiments(), id) }

// Place sets a receipt's artifact_dir from the campaign's current folder, so
// a campaign that was moved or copied still points at its own files.
func (c Campaign) Place(r Receipt) Receipt {
	r.ArtifactDir = c.ArtifactDir(r.ID)
	return r
}

// Sealed is the content-addressed copy of every source and input at submission.
func (c Campaign) Sealed() string { return filepath.Join(c.Dir, "sealed") }

// SealedBlob is one sealed file, named by its sha256.
func (c Campaign) SealedBlob(sha string) string { return filepath.Join(c.Sealed(), sha) }

// Supervisor holds the per-turn prompts and agent logs.
func (c Campaign) Supervisor() string { return filepath.Join(c.Dir, "supervisor") }

// SupervisorLog is the supervisor's own bounded log: harness errors and
// failed store calls.
func (c Campaign) SupervisorLog() string { return filepath.Join(c.Supervisor(), "supervisor.log") }

// AgentState is the folder an agent backend keeps across worker turns (a
// CLI's own configuration and sessions), writable by its enclosed agent.
func (c Campaign) AgentState() string { return filepath.Join(c.Supervisor(), "agent-state") }

// Scratch is where running experiments keep their private work folders.
func (c Campaign) Scratch() string { return filepath.Join(c.Dir, "supervisor", "run") }

// LockFile is the single-owner lock.
func (c Campaign) LockFile() string { return filepath.Join(c.Dir, ".simjecture.lock") }

// Exists reports whether the folder holds a study.
func (c Campaign) Exists() bool {
	st, err := os.Stat(c.DB())
	return err == nil && st.Mode().IsRegular()
}

// Open opens the campaign's store; the campaign must hold a study.
func (c Campaign) Open(ctx context.Context) (*store.Store, error) {
	if err := checkNotFile(c.Dir); err != nil {
		return nil, err
	}
	if err := c.checkReadable(); err != nil {
		return nil, err
	}
	if !c.Exists() {
		return nil, c.NoStudy(ctx)
	}
	// A store that recorded nothing (a 0-byte file is an interrupted
	// creation's leftover) is only reported: opening it would make it a
	// database, with -wal and -shm beside it.
	if blank, err := store.IsBlank(ctx, c.DB()); err == nil && blank {
		return nil, c.NoStudy(ctx)
	}
	s, err := store.OpenExisting(ctx, c.DB())
	if errors.Is(err, store.ErrNoStudy) {
		return nil, fmt.Errorf("%s holds no simjecture study: %w: %w", c.Dir, err, ErrInvalid)
	}
	if err != nil {
		return nil, c.openFailed(err)
	}
	// A store that recorded nothing is an interrupted creation; one that
	// cannot say (a malformed store) is left to its readers (verify).
	if blank, err := s.Blank(ctx); err == nil && blank {
		_ = s.Close()
		return nil, c.NoStudy(ctx)
	}
	return s, nil
}

// LoadContract reads the frozen contract.
func LoadContract(ctx context.Context, s *store.Store) (Contract, error) {
	var c Contract
	err := s.Read(ctx, func(tx *store.Tx) error {
		row, err := tx.GetStudy()
		if err != nil {
			return err
		}
		return json.Unmarshal(row.ContractJSON, &c)
	})
	if err != nil {
		return c, fmt.Errorf("read study contract: %w", err)
	}
	if c.ExecutionBackend == "" {
		c.ExecutionBackend = sandbox.Bubblewrap // a record with no backend means bubblewrap
	}
	return c, nil
}

// checkNewCampaignDir refuses a path that is a file, a folder that already
// holds a study, or a non-empty folder that holds anything but the
// leftovers of an interrupted creation (which the creation removes under
// the lock).
func checkNewCampaignDir(ctx context.Context, dir string) error {
	st, err := os.Stat(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return campaignPathError(dir, "cannot use it", fmt.Errorf("campaign %s: %w", dir, err))
	}
	if !st.IsDir() {
		return checkNotFile(dir)
	}
	if _, err := os.ReadDir(dir); err != nil {
		return campaignUnusable(dir, "cannot read it", fmt.Errorf("campaign %s: %w", dir, err))
	}
	// A lone lock file is another creation between opening the lock file
	// and taking the lock: the lock decides between the two, not this check.
	c := Campaign{Dir: dir}
	_, left, err := c.leftovers(ctx)
	switch {
	case err == nil && left:
		return nil
	case c.Exists():
		return fmt.Errorf("campaign %s already holds a study: open it, or choose another folder: %w", dir, ErrInvalid)
	case err != nil:
		return err
	}
	return fmt.Errorf("campaign %s is a non-empty folder that holds no study: %w", dir, ErrInvalid)
}
