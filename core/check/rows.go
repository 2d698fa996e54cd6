package check

import "fmt"

// RowsError is an error about rows whose numbers count from row First of the caller's input:
// a query that works a chunk of rows at a time says where the chunk began.
type RowsError struct {
	First int
	Err   error
}

func (e *RowsError) Error() string { return fmt.Sprintf("in the rows from %d on: %v", e.First, e.Err) }

// Unwrap returns the error about the chunk's rows.
func (e *RowsError) Unwrap() error { return e.Err }

// AtRows returns err, about rows that count from row first (0: err itself). An error that is
// already a RowsError (of a chunk within the chunk) has its start moved rather than a second
// prefix: "in the rows from 2097 on: in the rows from 357 on: X row 46" read as two offsets.
func AtRows(first int, err error) error {
	if first == 0 || err == nil {
		return err
	}
	if inner, ok := err.(*RowsError); ok {
		return &RowsError{First: first + inner.First, Err: inner.Err}
	}
	return &RowsError{First: first, Err: err}
}
