package sandbox

import (
	"os"
	"path/filepath"
	"testing"
)

func TestParseProcStat(t *testing.T) {
	tail := " 1 1 0 -1 4194304 0 0 0 0 120 30 0 0 20 0 3 0 50000 1000 250\n"
	cases := []struct {
		name, raw string
		ok        bool
		want      ProcStat
	}{
		{"plain", "42 (python3) S 7" + tail, true,
			ProcStat{Comm: "python3", State: 'S', PPID: 7, CPUTicks: 150, Start: 50000, RSSPages: 250}},
		{"odd name", "42 (a) b (c) R 9" + tail, true,
			ProcStat{Comm: "a) b (c", State: 'R', PPID: 9, CPUTicks: 150, Start: 50000, RSSPages: 250}},
		{"short", "42 (sh) S 7 1 1\n", false, ProcStat{}},
		{"no name", "42 sh S 7" + tail, false, ProcStat{}},
		{"empty", "", false, ProcStat{}},
	}
	for _, c := range cases {
		got, err := ParseProcStat([]byte(c.raw))
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("%s: got %+v, %v", c.name, got, err)
		}
	}
}

func TestParseProcStatSelf(t *testing.T) {
	raw, err := os.ReadFile("/proc/self/stat")
	must(t, err)
	st, err := ParseProcStat(raw)
	comm := filepath.Base(os.Args[0])
	comm = comm[:min(len(comm), 15)] // the kernel keeps 15 bytes of it
	if err != nil || st.PPID != os.Getppid() || st.Comm != comm || st.Start == 0 || st.RSSPages <= 0 {
		t.Errorf("/proc/self/stat: %+v, %v", st, err)
	}
}
