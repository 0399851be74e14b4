package benchtask

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
)

// DefaultMinimumTrials is the number of trials below which a row is provisional.
const DefaultMinimumTrials = 5

// z95 is the two-sided 95 % normal quantile of the Wilson interval.
const z95 = 1.959963984540054

// Interval is a confidence interval of a proportion.
type Interval struct {
	Low  float64 `json:"low"`
	High float64 `json:"high"`
}

// Wilson is the 95 % Wilson score interval of passes out of trials.
func Wilson(passes, trials int) Interval {
	if trials <= 0 {
		return Interval{0, 1}
	}
	n, p := float64(trials), float64(passes)/float64(trials)
	z2 := z95 * z95
	centre := (p + z2/(2*n)) / (1 + z2/n)
	half := z95 * math.Sqrt(p*(1-p)/n+z2/(4*n*n)) / (1 + z2/n)
	return Interval{Low: math.Max(0, centre-half), High: math.Min(1, centre+half)}
}

// Row is one model and agent on one task.
type Row struct {
	Task                string   `json:"task"`
	PackVersion         string   `json:"pack_version"`
	Model               string   `json:"model"`
	Agent               string   `json:"agent"`
	Trials              int      `json:"trials"`
	Passes              int      `json:"passes"`
	PassRate            float64  `json:"pass_rate"`
	PassRate95          Interval `json:"pass_rate_95"`
	MedianSecondsToPass *float64 `json:"median_seconds_to_pass"` // over passing trials with a known first-pass time
	SecondsPerSuccess   *float64 `json:"seconds_per_success"`    // every trial's wall time over the passes
	CostPerSuccessUSD   *float64 `json:"cost_per_success_usd"`   // every trial's cost over the passes
	Provisional         bool     `json:"provisional"`
}

// Board is the leaderboard of a set of grade reports.
type Board struct {
	Pack          string `json:"pack"`
	MinimumTrials int    `json:"minimum_trials"`
	Reports       int    `json:"reports"`    // reports read
	Duplicates    int    `json:"duplicates"` // the same trial graded again, counted once
	Rows          []Row  `json:"rows"`
}

// Source is one grade report and where it was read from.
type Source struct {
	From   string
	Report Report
}

// Leaderboard aggregates reports. A forged or malformed report, or a trial
// graded twice with different outcomes, is refused (ErrSetup) naming its file.
func Leaderboard(reports []Source, minimumTrials int) (Board, error) {
	if minimumTrials < 1 {
		return Board{}, fmt.Errorf("--minimum-trials must be at least 1, got %d: %w", minimumTrials, ErrSetup)
	}
	b := Board{Pack: PackName, MinimumTrials: minimumTrials, Reports: len(reports), Rows: []Row{}}
	seen := map[string]Source{}
	groups := map[string][]Report{}
	var order []string
	for _, s := range reports {
		if err := validReport(s.Report); err != nil {
			return Board{}, fmt.Errorf("%s: %w: %w", s.From, err, ErrSetup)
		}
		r := s.Report
		key := r.Pack + "\x00" + r.Task + "\x00" + r.Trial.TrialID
		if prev, dup := seen[key]; dup {
			if prev.Report.Passed != r.Passed {
				return Board{}, fmt.Errorf("%s and %s grade trial %s differently: %w", prev.From, s.From, r.Trial.TrialID, ErrSetup)
			}
			b.Duplicates++
			continue
		}
		seen[key] = s
		g := strings.Join([]string{r.Task, r.PackVersion, r.Trial.Model, r.Trial.Agent}, "\x00")
		if _, ok := groups[g]; !ok {
			order = append(order, g)
		}
		groups[g] = append(groups[g], r)
	}
	for _, g := range order {
		b.Rows = append(b.Rows, row(groups[g], minimumTrials))
	}
	slices.SortStableFunc(b.Rows, func(x, y Row) int {
		return cmp.Or(cmp.Compare(x.Task, y.Task), cmp.Compare(y.PassRate, x.PassRate), cmp.Compare(x.Model, y.Model), cmp.Compare(x.Agent, y.Agent))
	})
	return b, nil
}

// validReport refuses what is not a grade report of this pack, a
// passed:true (or false) its checks, inputs and findings disagree with,
// unusable labels, and negative figures.
func validReport(r Report) error {
	switch {
	case r.Pack != PackName || r.Task == "" || len(r.Checks) == 0:
		return fmt.Errorf("not a grade report of the %s pack", PackName)
	case !r.consistent():
		return fmt.Errorf("inconsistent grade: passed is %v but its checks, inputs and findings say otherwise", r.Passed)
	case r.Trial.TrialID == "":
		return fmt.Errorf("the report names no trial")
	case !label(r.Trial.Model) || !label(r.Trial.Agent):
		return fmt.Errorf("model and agent must be at most 160 printable characters")
	}
	for _, v := range []*float64{r.Trial.WallSeconds, r.Trial.FirstPassSeconds, r.Trial.CostUSD} {
		if v != nil && (*v < 0 || math.IsInf(*v, 0) || math.IsNaN(*v)) {
			return fmt.Errorf("trial figures must be finite and not negative")
		}
	}
	return nil
}

func label(s string) bool {
	return len(s) <= 160 && !strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f })
}

func row(rs []Report, minimumTrials int) Row {
	first := rs[0]
	out := Row{Task: first.Task, PackVersion: first.PackVersion, Model: first.Trial.Model, Agent: first.Trial.Agent,
		Trials: len(rs), Provisional: len(rs) < minimumTrials}
	var toPass []float64
	var wall, cost []*float64
	for _, r := range rs {
		if r.Passed {
			out.Passes++
			if r.Trial.FirstPassSeconds != nil {
				toPass = append(toPass, *r.Trial.FirstPassSeconds)
			}
		}
		wall, cost = append(wall, r.Trial.WallSeconds), append(cost, r.Trial.CostUSD)
	}
	out.PassRate = float64(out.Passes) / float64(out.Trials)
	out.PassRate95 = Wilson(out.Passes, out.Trials)
	out.MedianSecondsToPass = median(toPass)
	out.SecondsPerSuccess = perSuccess(wall, out.Passes)
	out.CostPerSuccessUSD = perSuccess(cost, out.Passes)
	return out
}

// median of xs; nil for none.
func median(xs []float64) *float64 {
	if len(xs) == 0 {
		return nil
	}
	s := slices.Sorted(slices.Values(xs))
	m := s[len(s)/2]
	if len(s)%2 == 0 {
		m = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return &m
}

// perSuccess is the sum over every trial, failed ones included, divided by
// the passes; nil without a pass or with any figure unknown.
func perSuccess(xs []*float64, passes int) *float64 {
	if passes == 0 {
		return nil
	}
	sum := 0.0
	for _, x := range xs {
		if x == nil {
			return nil
		}
		sum += *x
	}
	v := sum / float64(passes)
	return &v
}
