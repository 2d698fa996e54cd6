package parallel

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// SpinWait is how long a helper goroutine polls for its next task after finishing one, and how
// long Go polls for its helpers to finish before it blocks. A thread that blocks lets its virtual
// CPU halt, and on a virtual machine that has been idle for a while, running on that CPU again
// is slow: an rbf fit on yeast (81 loops on two threads, the serial stretches between them
// 52 µs at the median, 0.3 ms at the 90th percentile and up to 1.4 ms) took 65–66 ms after half
// a second of sleep against 40–42 ms back to back; with helpers that poll for 2 ms it took 48 ms
// after the sleep (for 0.1 ms: no gain). A helper polls only while the Go runtime has CPUs to
// spare (pollers), so polling never takes a CPU from one of its threads with work, and gives way
// to other processes' threads (backOff); after a computation's last loop it costs at most
// SpinWait of one CPU.
const SpinWait = 2 * time.Millisecond

// Helper states.
const (
	polling int32 = iota // waiting for a task in a loop of atomic loads
	parked               // waiting for a task on its channel
	taken                // a task was handed to it, or it is running one
)

// helper is a goroutine kept between calls of Go to run the bodies handed to it, so that a loop
// need not start a goroutine, and wake a thread, for each of its chunks.
type helper struct {
	index int // the helper's rank in helpers.all: the first pollers() poll
	state atomic.Int32
	task  atomic.Pointer[func()] // handed over while polling
	wake  chan func()            // handed over while parked
}

// handOff is handOver; tests replace it.
var handOff = handOver

var helpers struct {
	sync.Mutex
	all []*helper
}

// pollers is how many helpers may poll: one fewer than the CPUs the Go runtime runs goroutines
// on, leaving one for the goroutine that hands tasks over.
func pollers() int { return runtime.GOMAXPROCS(0) - 1 }

// handOver has an idle helper run task, starting a new helper when fewer than Threads() − 1
// exist, and reports false when every helper is busy (in a nested loop, say); the caller then
// runs task on a goroutine of its own.
func handOver(task func()) bool {
	helpers.Lock()
	defer helpers.Unlock()
	for _, h := range helpers.all {
		if h.state.CompareAndSwap(polling, taken) {
			h.task.Store(&task)
			return true
		}
		if h.state.CompareAndSwap(parked, taken) {
			h.wake <- task
			return true
		}
	}
	if len(helpers.all) >= Threads()-1 {
		return false
	}
	h := &helper{index: len(helpers.all), wake: make(chan func(), 1)}
	h.state.Store(taken)
	helpers.all = append(helpers.all, h)
	go h.run(task)
	return true
}

// run runs task, then every task handed to it after.
func (h *helper) run(task func()) {
	for {
		task()
		h.task.Store(nil)
		h.state.Store(polling)
		task = h.next()
	}
}

// next waits for the next task: polling for SpinWait when h is one of the pollers, then parked.
func (h *helper) next() func() {
	if h.index < pollers() && pollUntil(func() bool { return h.state.Load() == taken }) {
		return h.handed()
	}
	if !h.state.CompareAndSwap(polling, parked) {
		return h.handed() // taken between the last poll and the park
	}
	return <-h.wake
}

// handed returns the task stored for a helper taken while polling, waiting for the store that
// follows the change of its state.
func (h *helper) handed() func() {
	for {
		if t := h.task.Load(); t != nil {
			return *t
		}
		runtime.Gosched()
	}
}

// awaitZero returns once left is zero: polling for SpinWait when the w goroutines of a loop,
// the caller's among them, have a CPU each, then waiting for done, which the task that brings
// left to zero sends on.
func awaitZero(w int, left *atomic.Int64, done chan struct{}) {
	if w <= pollers()+1 && pollUntil(func() bool { return left.Load() == 0 }) {
		return
	}
	<-done
}

// Polling gives way when the CPUs are wanted elsewhere. Another process's threads may keep every
// CPU busy (OpenBLAS's spin for a while after each call); a polling thread then competes with
// them for the CPUs, the computation's own threads included: a yeast rbf fit right after a NumPy
// product on all cores took 97–115 ms with polling helpers against 62–75 ms with sleeping ones,
// and 59–63 ms with polling that gives way as follows (36–39 ms back to back). So nobody polls
// for backOff after two checks in a row (at most one every loadCheck) have found more threads
// ready to run than there are CPUs (and one more), or after a poll found itself descheduled for
// longer than preempted.
const (
	preempted = 2 * time.Millisecond
	loadCheck = time.Millisecond
	backOff   = 50 * time.Millisecond
)

// epoch is the origin of the times below, in monotonic time.
var epoch = time.Now()

// noPollBefore is the time since epoch until which nobody polls; loadCheckedAt, when runnable
// was last called.
var noPollBefore, loadCheckedAt atomic.Int64

// readyOverride, when set, replaces runnable (tests).
var readyOverride atomic.Pointer[func() int]

// crowded counts the checks in a row that found more threads ready than CPUs.
var crowded atomic.Int32

// mayPoll reports whether a poll may start now (time since epoch).
func mayPoll(now time.Duration) bool {
	if int64(now) < noPollBefore.Load() {
		return false
	}
	last := loadCheckedAt.Load()
	if int64(now)-last < int64(loadCheck) || !loadCheckedAt.CompareAndSwap(last, int64(now)) {
		return true
	}
	ready := runnable
	if f := readyOverride.Load(); f != nil {
		ready = *f
	}
	if ready() <= runtime.NumCPU()+1 { // one more is common: a kernel thread, the runtime's monitor
		crowded.Store(0)
		return true
	}
	if crowded.Add(1) < 2 { // a moment's crowd (a collection of our own, say) passes
		return true
	}
	noPollBefore.Store(int64(now + backOff))
	return false
}

// pollUntil calls ready until it reports true (then pollUntil does too), or until SpinWait has
// passed or polling is no longer allowed (mayPoll, preempted), yielding to other goroutines every
// 1,024 calls (a few microseconds).
func pollUntil(ready func() bool) bool {
	if ready() {
		return true
	}
	start := time.Since(epoch)
	if !mayPoll(start) {
		return false
	}
	deadline, last := start+SpinWait, start
	for spins := 1; ; spins++ {
		if ready() {
			return true
		}
		if spins%1024 == 0 {
			now := time.Since(epoch)
			if now-last > preempted {
				noPollBefore.Store(int64(now + backOff))
				return false
			}
			if now > deadline || !mayPoll(now) {
				return false
			}
			runtime.Gosched()
			last = time.Since(epoch) // other goroutines' turns are not a preemption
		}
	}
}
