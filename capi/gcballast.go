package main

// gcBallast is a 32 MB object that is never read or written and lives as long as the process:
// the GC counts it in the live heap it paces collections against, so a small heap is collected
// after about 32 MB of allocation rather than after its 4 MB minimum. A yeast-sized linear fit
// allocates about 4 MB: it was collected at every fit, and during each collection the GC's idle
// mark worker ran on the core the fit had left idle (7 ms of its CPU per collection), which made
// the fit 0.5–0.7 ms slower with GOMAXPROCS 2 than with 1 in Go alone (BENCHMARKS.md, issue 18's
// run notes). Its pages are never touched, so they are never resident: RSS does not grow. Large
// heaps are paced as before, their goal raised by 32 MB at most.
var gcBallast = make([]byte, 32<<20)
