package store

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func openTemp(t *testing.T) *Store {
	t.Helper()
	s, err := Open(context.Background(), filepath.Join(t.TempDir(), "simjecture.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestDocsRoundTrip(t *testing.T) {
	s := openTemp(t)
	ctx := context.Background()
	for _, k := range []Kind{Experiments, Claims, Reviews, Approvals, Assignments} {
		err := s.Tx(ctx, func(tx *Tx) error {
			isNew, err := tx.PutDoc(k, "a", "queued", []byte(`{"x":1}`))
			if err != nil || !isNew {
				t.Fatalf("%s: first put: new=%v err=%v", k, isNew, err)
			}
			if isNew, err = tx.PutDoc(k, "a", "done", []byte(`{"x":2}`)); err != nil || isNew {
				t.Fatalf("%s: second put: new=%v err=%v", k, isNew, err)
			}
			_, err = tx.PutDoc(k, "b", "queued", []byte(`{}`))
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		_ = s.Read(ctx, func(tx *Tx) error {
			d, err := tx.GetDoc(k, "a")
			if err != nil || d.Status != "done" || string(d.JSON) != `{"x":2}` || d.Seq != 1 {
				t.Errorf("%s: got %+v %v", k, d, err)
			}
			q, _ := tx.ListDocs(k, "queued")
			if len(q) != 1 || q[0].ID != "b" {
				t.Errorf("%s: queued list %+v", k, q)
			}
			if _, err := tx.GetDoc(k, "zz"); !errors.Is(err, ErrNotFound) {
				t.Errorf("%s: missing doc: %v", k, err)
			}
			return nil
		})
	}
}

func TestEventChainDetectsRewrite(t *testing.T) {
	s := openTemp(t)
	ctx := context.Background()
	for i := range 5 {
		if err := s.Tx(ctx, func(tx *Tx) error { _, err := tx.Append("tick", map[string]int{"i": i}); return err }); err != nil {
			t.Fatal(err)
		}
	}
	var findings []string
	_ = s.Read(ctx, func(tx *Tx) (err error) { findings, err = tx.VerifyChain(); return err })
	if len(findings) != 0 {
		t.Fatalf("intact chain reported %v", findings)
	}
	// The triggers refuse rewriting through SQL.
	if _, err := s.w.Exec("UPDATE events SET payload = '{\"i\":9}' WHERE seq = 3"); err == nil {
		t.Fatal("update of an event was allowed")
	}
	if _, err := s.w.Exec("DELETE FROM events WHERE seq = 3"); err == nil {
		t.Fatal("delete of an event was allowed")
	}
	// Someone who drops the trigger is still caught by the chain.
	if _, err := s.w.Exec("DROP TRIGGER events_no_update; UPDATE events SET payload = '{\"i\":9}' WHERE seq = 3"); err != nil {
		t.Fatal(err)
	}
	_ = s.Read(ctx, func(tx *Tx) (err error) { findings, err = tx.VerifyChain(); return err })
	if len(findings) != 1 || !strings.Contains(findings[0], "event 3") {
		t.Fatalf("rewrite not found: %v", findings)
	}
}

func TestConcurrentWritersFromTwoHandles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "simjecture.db")
	ctx := context.Background()
	a, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var wg sync.WaitGroup
	for _, s := range []*Store{a, b} {
		wg.Go(func() {
			for range 50 {
				if err := s.Tx(ctx, func(tx *Tx) error { _, err := tx.Append("w", nil); return err }); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	last, _ := a.LastSeq(ctx)
	if last != 100 {
		t.Fatalf("want 100 events, got %d", last)
	}
	var findings []string
	_ = a.Read(ctx, func(tx *Tx) (err error) { findings, err = tx.VerifyChain(); return err })
	if len(findings) != 0 {
		t.Fatal(findings)
	}
}

func TestControlAndUsage(t *testing.T) {
	s := openTemp(t)
	ctx := context.Background()
	err := s.Tx(ctx, func(tx *Tx) error {
		if c, _ := tx.GetControl(); c != "" {
			t.Errorf("fresh control %q", c)
		}
		if err := tx.SetControl("pause", "now"); err != nil {
			return err
		}
		if c, _ := tx.GetControl(); c != "pause" {
			t.Errorf("control %q", c)
		}
		if err := tx.SetControl("bogus", "now"); err == nil {
			t.Error("bogus control accepted")
		}
		in, out := int64(100), int64(7)
		_ = tx.PutUsage("T1", &in, &out)
		in = 250
		_ = tx.PutUsage("T1", &in, &out)
		si, _, _ := tx.SumUsage()
		if si == nil || *si != 250 {
			t.Errorf("usage sum %v, want 250", si)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestListDocsNewest(t *testing.T) {
	s := openTemp(t)
	ctx := context.Background()
	err := s.Tx(ctx, func(tx *Tx) error {
		for _, id := range []string{"a", "b", "c", "d"} {
			if _, err := tx.PutDoc(Experiments, id, "queued", []byte(`{}`)); err != nil {
				return err
			}
		}
		_, err := tx.PutDoc(Experiments, "a", "done", []byte(`{}`)) // an update keeps its place
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		limit int
		want  string
	}{{0, ""}, {2, "c,d"}, {3, "b,c,d"}, {9, "a,b,c,d"}} {
		_ = s.Read(ctx, func(tx *Tx) error {
			docs, err := tx.ListDocsNewest(Experiments, c.limit)
			var ids []string
			for _, d := range docs {
				ids = append(ids, d.ID)
			}
			if got := strings.Join(ids, ","); err != nil || got != c.want {
				t.Errorf("limit %d: got %q %v, want %q", c.limit, got, err, c.want)
			}
			return nil
		})
	}
}
