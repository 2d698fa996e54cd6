package check

import (
	"errors"
	"fmt"
)

// RowsError is an error about rows whose numbers count from row First of the caller's input:
// a query that works a chunk of rows at a time says where the chunk began.
type RowsError struct {
	First int
	Err   error
}

func (e *RowsError) Error() string { return fmt.Sprintf("in the rows from %d on: %v", e.First, e.Err) }

// Unwrap returns the error about the chunk's rows.
func (e *RowsError) Unwrap() error { return e.Err }

// RowError is an error about one row of an input, whose message names the row (message(Row)):
// AtRows moves the row instead of putting the chunk's start in front, so that the message names
// the row of the whole input ("in the rows from 150 on: X row 70" pointed at X's row 70, which was
// fine, probe EI).
type RowError struct {
	Row     int
	message func(row int) string
	err     error
}

// RowErrorf returns a RowError whose message is fmt.Sprintf(format, row, args...); a %w among
// args is what it wraps.
func RowErrorf(row int, format string, args ...any) *RowError {
	var wrapped error
	if w := errors.Unwrap(fmt.Errorf(format, append([]any{row}, args...)...)); w != nil {
		wrapped = w
	}
	return &RowError{Row: row, err: wrapped, message: func(r int) string {
		return fmt.Errorf(format, append([]any{r}, args...)...).Error()
	}}
}

func (e *RowError) Error() string { return e.message(e.Row) }

// Unwrap returns the error the message wraps, if any.
func (e *RowError) Unwrap() error { return e.err }

// AtRows returns err, about rows that count from row first (0: err itself). A RowError has its
// row moved; an error that is already a RowsError (of a chunk within the chunk) has its start
// moved rather than a second prefix: "in the rows from 2097 on: in the rows from 357 on: X row 46"
// read as two offsets.
func AtRows(first int, err error) error {
	if first == 0 || err == nil {
		return err
	}
	if row, ok := err.(*RowError); ok {
		moved := *row
		moved.Row += first
		return &moved
	}
	if inner, ok := err.(*RowsError); ok {
		return &RowsError{First: first + inner.First, Err: inner.Err}
	}
	return &RowsError{First: first, Err: err}
}
