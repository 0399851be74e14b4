package benchtask

import (
	"strings"
	"testing"
)

// TestTaskTableWired: every row of the pack is complete — an id Find
// finds, a title, suggested seconds, a contract naming every metric, given
// cases with an expected value per metric, and a holdout generator making
// distinct, fully expected cases.
func TestTaskTableWired(t *testing.T) {
	t.Parallel()
	if len(Tasks()) == 0 {
		t.Fatal("the pack has no task")
	}
	for _, task := range Tasks() {
		t.Run(task.ID, func(t *testing.T) {
			t.Parallel()
			if got, err := Find(task.ID); err != nil || got.ID != task.ID {
				t.Fatalf("Find(%q) = %v, %v", task.ID, got.ID, err)
			}
			if task.Title == "" || task.SuggestedSeconds <= 0 || len(task.Metrics) == 0 || task.Given == nil || task.Holdouts == nil {
				t.Fatalf("incomplete row: %+v", task)
			}
			for _, m := range task.Metrics {
				if !strings.Contains(task.Contract, m) {
					t.Errorf("TASK.md does not name the metric %s", m)
				}
			}
			given, err := task.Given()
			if err != nil || len(given) == 0 {
				t.Fatalf("given cases: %v (%d)", err, len(given))
			}
			holdouts, err := task.Holdouts(42, HoldoutCount)
			if err != nil || len(holdouts) != HoldoutCount {
				t.Fatalf("holdouts: %v (%d)", err, len(holdouts))
			}
			names := map[string]bool{}
			for _, c := range append(given, holdouts...) {
				if names[c.Name] || len(c.Files) == 0 {
					t.Errorf("case %q repeated or without files", c.Name)
				}
				names[c.Name] = true
				for _, m := range task.Metrics {
					if _, ok := c.Expected[m]; !ok {
						t.Errorf("case %s has no expected %s", c.Name, m)
					}
				}
			}
		})
	}
	if _, err := Find("no-such-task"); err == nil {
		t.Error("Find accepted an unknown task")
	}
}

// TestGivenCasesAreDeterministic: the given inputs are the same bytes on
// every run (and, the integrator rounding every product, on every
// platform): their hashes are the ones recorded here, which grading's
// intact_inputs check relies on.
func TestGivenCasesAreDeterministic(t *testing.T) {
	t.Parallel()
	want := map[string]string{
		"raw/mild/orbit.csv":      "14fc3d6c7f316ce821480164ac97b05d01c28121351d7d08b556a29938b18985",
		"raw/eccentric/orbit.csv": "342aa535275e387c7e5014952d7e152971d6c0bb294fb5533a1f92f330af889d",
		"raw/sharp/orbit.csv":     "0ad7bce77a1824d020afa1fc78823147dc100555be3f831a5967882a9e551334",
	}
	given, err := keplerGiven()
	if err != nil {
		t.Fatal(err)
	}
	got := inputHashes(given)
	for rel, sum := range want {
		if got[rel] != sum {
			t.Errorf("%s: sha256 %s, want %s", rel, got[rel], sum)
		}
	}
	if len(got) != len(want) {
		t.Errorf("given files %v, want %v", sortedKeys(got), sortedKeys(want))
	}
}
