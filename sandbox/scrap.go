package sandbox

import (
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
)

// scrapPrefix names a finished run's folder while it waits to be removed.
const scrapPrefix = ".scrap-"

// scrapQueue bounds the folders waiting for removal; when it is full, Run
// removes its folder itself.
const scrapQueue = 64

// scrapper removes finished runs' folders on a background goroutine, so
// that a run's result is not held up by the removal (0.3–0.5 ms for even a
// trivial run on ext4). Settle waits for it.
type scrapper struct {
	mu  sync.Mutex
	cur *scrapWorker
	seq atomic.Uint64
}

// scrapWorker is one removal goroutine and its queue; done closes when
// the queue is closed and drained.
type scrapWorker struct {
	queue chan string
	done  chan struct{}
}

var scrap scrapper

// discard takes dir out of the way at once (a rename next to it, so that
// the same path can be used again) and removes it in the background.
func (s *scrapper) discard(dir string) {
	name := scrapPrefix + strconv.Itoa(os.Getpid()) + "-" + strconv.FormatUint(s.seq.Add(1), 10)
	moved := filepath.Join(filepath.Dir(dir), name)
	if os.Rename(dir, moved) != nil {
		removeTree(dir)
		return
	}
	s.mu.Lock()
	if s.cur == nil {
		w := &scrapWorker{queue: make(chan string, scrapQueue), done: make(chan struct{})}
		s.cur = w
		go func() {
			defer close(w.done)
			for d := range w.queue {
				removeTree(d)
			}
		}()
	}
	select {
	case s.cur.queue <- moved:
		s.mu.Unlock()
	default:
		s.mu.Unlock()
		removeTree(moved)
	}
}

// settle waits until every folder discarded so far is gone.
func (s *scrapper) settle() {
	s.mu.Lock()
	w := s.cur
	s.cur = nil
	s.mu.Unlock()
	if w != nil {
		close(w.queue)
		<-w.done
	}
}

// Settle waits until the folders of every finished run have been removed.
// A host calls it before it exits; what a killed host left behind is
// removed by ClearScratch.
func Settle() { scrap.settle() }

// ClearScratch removes everything in parent, the folder that holds the run
// folders of one host (as Spec.RunDir's parent): the folders of runs whose
// host was killed, and those it left waiting for removal. Only the owner of
// that folder calls it, before it starts any run.
func ClearScratch(parent string) {
	names, err := readDirNames(parent)
	if err != nil {
		return
	}
	for _, n := range names {
		removeTree(filepath.Join(parent, n))
	}
}
