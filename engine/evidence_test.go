package engine

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/simjecture/simjecture/sandbox"
	"github.com/simjecture/simjecture/store"
)

func TestScalarFields(t *testing.T) {
	long := strings.Repeat("x", 100)
	cases := []struct {
		name, body string
		n          int
		want       []Measured
		err        bool
	}{
		{"in file order, scalars only", `{"method":"euler","orbits":[1,2],"max_err":0.58,"ok":false,"meta":{"a":1},"none":null}`, 8,
			[]Measured{{Field: "method", Value: "euler"}, {Field: "max_err", Value: "0.58"}, {Field: "ok", Value: "false"}}, false},
		{"at most n", `{"a":1,"b":2,"c":3}`, 2, []Measured{{Field: "a", Value: "1"}, {Field: "b", Value: "2"}}, false},
		{"long strings cut", `{"s":"` + long + `"}`, 8, []Measured{{Field: "s", Value: strings.Repeat("x", 59) + "…"}}, false},
		{"not an object", `[1,2]`, 8, nil, true},
		{"broken after a field", `{"a":1,"b":`, 8, []Measured{{Field: "a", Value: "1"}}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "result.json")
			if err := os.WriteFile(p, []byte(c.body), 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := scalarFields(p, c.n)
			if (err != nil) != c.err || !reflect.DeepEqual(got, c.want) {
				t.Errorf("scalarFields = %v, %v; want %v (error %v)", got, err, c.want, c.err)
			}
		})
	}
}

// TestReviewEvidence: a review's experiments come back with the values of
// their JSON artifacts, result.json first, and a cited id the record
// lacks says so.
func TestReviewEvidence(t *testing.T) {
	ctx := context.Background()
	c, s := newTestStudy(t, nil)
	rec := c.Place(Receipt{ID: "exp_1", Status: ExpSucceeded, Purpose: "measure the drift",
		Artifacts: map[string]sandbox.Artifact{"a.json": {}, "out/result.json": {}, "log.txt": {}}})
	for rel, body := range map[string]string{"a.json": `{"z":1}`, "out/result.json": `{"max_err":0.58,"steps":1000}`} {
		p := filepath.Join(rec.ArtifactDir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	err := s.Tx(ctx, func(tx *store.Tx) error {
		if _, err := putReceipt(tx, rec); err != nil {
			return err
		}
		return putReview(tx, Review{ID: "rev_1", Claim: RootClaim, Disposition: "falsified", Status: "queued",
			Experiments: []string{"exp_1", "exp_gone"}})
	})
	if err != nil {
		t.Fatal(err)
	}
	v, err := OpenView(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	got, err := v.ReviewEvidence(ctx, "rev_1")
	if err != nil {
		t.Fatal(err)
	}
	want := []Evidence{
		{Experiment: "exp_1", Status: ExpSucceeded, Purpose: "measure the drift", Values: []Measured{
			{"out/result.json", "max_err", "0.58"}, {"out/result.json", "steps", "1000"}, {"a.json", "z", "1"}}},
		{Experiment: "exp_gone", Note: "no such experiment in the record"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ReviewEvidence =\n%+v\nwant\n%+v", got, want)
	}
	if _, err := v.ReviewEvidence(ctx, "rev_none"); err == nil {
		t.Error("an unknown review must be an error")
	}
}
