package sandbox

import (
	"bytes"
	"regexp"
	"strconv"
)

var prootSignalRE = regexp.MustCompile(`proot info: pid \d+: terminated with signal (\d+)`)

// prootSignal reads the signal PRoot reported for a tracee from the end of
// the stderr log (PRoot exits 255 and prints it), or returns 0.
func prootSignal(stderrPath string) int {
	b, err := headTail(stderrPath, tailHalf)
	if err != nil {
		return 0
	}
	m := prootSignalRE.FindAllSubmatch(b, -1)
	if len(m) == 0 {
		return 0
	}
	n, _ := strconv.Atoi(string(bytes.TrimSpace(m[len(m)-1][1])))
	return n
}
