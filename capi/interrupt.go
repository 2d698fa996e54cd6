package main

/*
#include <stdint.h>
#include "cp_helpers.h"
*/
import "C"

import (
	"math"
	"sync/atomic"

	"github.com/combpred/combpred/core/cancel"
	"github.com/combpred/combpred/core/model"
	"github.com/combpred/combpred/core/space"
)

// The interrupt poll makes every long query cancellable by Ctrl-C without a callback argument in
// each entry point. Python registers one function (cp_set_interrupt_poll); a long query runs its
// work on a goroutine of its own while the calling goroutine, locked to the caller's thread, calls
// the poll every relayEvery. Python runs signal handlers only when its main thread runs Python
// code, and the poll is that code: its SIGINT handler marks the call interrupted, the poll then
// returns nonzero, and the work sees its cancel.Flag set.

// interruptPoll holds the registered poll (a C.cp_progress_fn, nil when none).
var interruptPoll atomic.Value

// cp_set_interrupt_poll registers poll, called on the caller's thread during long queries with
// (0, 0, 0, NULL); a nonzero return cancels the query, which then returns status 3. NULL
// unregisters it.
//
//export cp_set_interrupt_poll
func cp_set_interrupt_poll(poll C.cp_progress_fn) (rc C.int) {
	defer guard(&rc)
	interruptPoll.Store(poll)
	return cpOK
}

// smallQuery is the number of rows below which predict and decision run inline: a worker
// goroutine costs microseconds, which single-row predictions would feel, while decoding a few
// hundred rows of the largest approximate space takes tens of milliseconds.
const smallQuery = 256

// inlineWork bounds the decoding work (space.DecodeWork, about a nanosecond a unit) that a query
// runs inline, where Ctrl-C cannot reach it: about 10 ms.
const inlineWork = 1e7

// inlineRows is the number of rows of work each up to which a query runs inline: smallQuery,
// fewer where a row is expensive, none where one row exceeds inlineWork. 256 rows of exact
// Permutations(22) ran 31 s inline, deaf to Ctrl-C.
func inlineRows(work float64) int64 {
	return int64(min(smallQuery, math.Floor(inlineWork/max(work, 1))))
}

// predictInlineRows is inlineRows of a prediction by md: scoring an input, then decoding it.
func predictInlineRows(md model.Model) int64 {
	return inlineRows(md.ScoreWork() + space.DecodeWork(md.Output()))
}

// cancellable runs work with a cancel.Flag that the registered poll can set. Unless inline, work
// runs on a goroutine of its own (onWorker, with no progress to relay) while the calling goroutine
// asks the poll every relayEvery.
func cancellable(inline bool, work func(stop *cancel.Flag) error) error {
	if inline || !pollRegistered() {
		return work(nil)
	}
	stop := new(cancel.Flag)
	var noProgress func(int, float64, float64) bool
	return onWorker(&noProgress, stop, func() error { return work(stop) })
}

// pollRegistered reports whether Python registered its interrupt poll.
func pollRegistered() bool {
	poll, _ := interruptPoll.Load().(C.cp_progress_fn)
	return poll != nil
}

// interrupted calls the registered poll, on the calling goroutine (the caller's thread), and
// reports whether it asks to stop; false without a poll.
func interrupted() bool {
	poll, _ := interruptPoll.Load().(C.cp_progress_fn)
	return poll != nil && C.cp_call_progress(poll, 0, 0, 0, nil) != 0
}
