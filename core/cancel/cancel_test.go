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
