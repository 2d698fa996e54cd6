package cancel

import (
	"errors"
	"testing"
)

func TestFlag(t *testing.T) {
	var none *Flag
	none.Stop()
	if none.Stopped() || none.Err() != nil {
		t.Fatal("a nil flag stopped")
	}
	f := new(Flag)
	if f.Stopped() {
		t.Fatal("a new flag is set")
	}
	f.Stop()
	if !f.Stopped() || !errors.Is(f.Err(), ErrCancelled) {
		t.Fatal("Stop did not set the flag")
	}
}

func TestYield(t *testing.T) {
	var none *Flag
	if none.Yield() {
		t.Fatal("a nil flag yielded stopped")
	}
	f := new(Flag)
	if f.Yield() {
		t.Fatal("a new flag yielded stopped")
	}
	f.Stop()
	if !f.Yield() {
		t.Fatal("Yield missed the stop")
	}
}
