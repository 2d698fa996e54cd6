package main

import (
	"fmt"
	"sync"

	"github.com/combpred/combpred/core/prob"
	"github.com/combpred/combpred/core/ridge"
	"github.com/combpred/combpred/core/space"
)

// Handles are small positive integers naming Go objects held here, so that no Go pointer ever
// crosses into C. A freed or never-issued handle is an error, not a crash.
var handles = struct {
	sync.Mutex
	next int64
	objs map[int64]any
}{next: 1, objs: map[int64]any{}}

func newHandle(obj any) int64 {
	handles.Lock()
	defer handles.Unlock()
	h := handles.next
	handles.next++
	handles.objs[h] = obj
	return h
}

func lookup(h int64) (any, bool) {
	handles.Lock()
	defer handles.Unlock()
	obj, ok := handles.objs[h]
	return obj, ok
}

func freeHandle(h int64, what string) error {
	handles.Lock()
	defer handles.Unlock()
	obj, ok := handles.objs[h]
	if !ok {
		return fmt.Errorf("%s handle %d is invalid or already freed", what, h)
	}
	if !isKind(obj, what) {
		return typeError{fmt.Errorf("handle %d is not a %s handle", h, what)}
	}
	delete(handles.objs, h)
	return nil
}

func isKind(obj any, what string) bool {
	switch obj.(type) {
	case *ridge.Model:
		return what == "model"
	case *prob.Model:
		return what == "prob model"
	case space.Space:
		return what == "space"
	case *ridge.Stats:
		return what == "stats"
	}
	return false
}

// objectOf returns the object of handle h, which must have type T; what names the kind in errors
// (as isKind does).
func objectOf[T any](h int64, what string) (T, error) {
	var zero T
	obj, ok := lookup(h)
	if !ok {
		return zero, fmt.Errorf("%s handle %d is invalid or already freed", what, h)
	}
	t, ok := obj.(T)
	if !ok {
		return zero, typeError{fmt.Errorf("handle %d is not a %s handle", h, what)}
	}
	return t, nil
}

func probModelOf(h int64) (*prob.Model, error) { return objectOf[*prob.Model](h, "prob model") }

func modelOf(h int64) (*ridge.Model, error) { return objectOf[*ridge.Model](h, "model") }

func spaceOf(h int64) (space.Space, error) { return objectOf[space.Space](h, "space") }
