// Package binfmt holds the pieces that combpred's binary model formats share: a little-endian
// Writer that ends with a CRC-32C trailer, and a bounds-checked Reader that trusts nothing.
//
// A format is: a 4-byte magic, a uint16 version, little-endian fields, then the CRC-32C
// (Castagnoli) of everything before it. Bytes come from pickles, which users may load from
// anywhere: Open checks the magic, the checksum and the version, and every Reader method checks
// that the bytes hold what it is asked to read. The Reader records its first error and then
// returns zero values, so a decoder reads all its fields and checks Err once.
package binfmt

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Checksum returns the CRC-32C of b.
func Checksum(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// Writer appends little-endian fields to a buffer.
type Writer struct{ b []byte }

// NewWriter starts a buffer with the format's magic and version.
func NewWriter(magic string, version uint16) *Writer {
	w := &Writer{b: append([]byte(nil), magic...)}
	w.U16(version)
	return w
}

// U8 appends one byte.
func (w *Writer) U8(v uint8) { w.b = append(w.b, v) }

// U16 appends a uint16.
func (w *Writer) U16(v uint16) { w.b = binary.LittleEndian.AppendUint16(w.b, v) }

// U32 appends a uint32.
func (w *Writer) U32(v uint32) { w.b = binary.LittleEndian.AppendUint32(w.b, v) }

// U64 appends a uint64.
func (w *Writer) U64(v uint64) { w.b = binary.LittleEndian.AppendUint64(w.b, v) }

// F64 appends a float64 by its bits (NaN payloads are kept).
func (w *Writer) F64(v float64) { w.U64(math.Float64bits(v)) }

// Bool appends 1 or 0.
func (w *Writer) Bool(v bool) {
	if v {
		w.U8(1)
	} else {
		w.U8(0)
	}
}

// String appends a string with its uint16 length.
func (w *Writer) String(s string) {
	w.U16(uint16(len(s)))
	w.b = append(w.b, s...)
}

// Int64s appends a uint32 count and the values.
func (w *Writer) Int64s(v []int64) {
	w.U32(uint32(len(v)))
	for _, x := range v {
		w.U64(uint64(x))
	}
}

// Matrix appends a rows × cols row-major matrix: the two dimensions (uint32) and the values.
func (w *Writer) Matrix(rows, cols int, data []float64) {
	w.U32(uint32(rows))
	w.U32(uint32(cols))
	for _, x := range data[:rows*cols] {
		w.F64(x)
	}
}

// Sign returns the bytes written, followed by their CRC-32C.
func (w *Writer) Sign() []byte {
	return binary.LittleEndian.AppendUint32(w.b, Checksum(w.b))
}

// Reader reads the fields of signed bytes. Every error wraps the format's sentinel error.
type Reader struct {
	b       []byte
	err     error
	corrupt error
}

// Open checks the magic, the trailing checksum and the version (in [1, maxVersion]) of data and
// returns a Reader positioned after the version. Errors wrap corrupt.
func Open(data []byte, magic string, maxVersion uint16, corrupt error) (*Reader, uint16, error) {
	head := len(magic) + 2
	if len(data) < head+4 || string(data[:len(magic)]) != magic {
		return nil, 0, fmt.Errorf("%w: bad magic (want %q)", corrupt, magic)
	}
	body, sum := data[:len(data)-4], binary.LittleEndian.Uint32(data[len(data)-4:])
	if Checksum(body) != sum {
		return nil, 0, fmt.Errorf("%w: checksum mismatch", corrupt)
	}
	version := binary.LittleEndian.Uint16(body[len(magic):])
	if version < 1 || version > maxVersion {
		return nil, 0, fmt.Errorf("%w: format version %d, this library reads versions 1 to %d", corrupt, version, maxVersion)
	}
	return &Reader{b: body[head:], corrupt: corrupt}, version, nil
}

// Fail records an error (the first one wins).
func (r *Reader) Fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: %s", r.corrupt, fmt.Sprintf(format, args...))
	}
}

// Err returns the first error recorded.
func (r *Reader) Err() error { return r.err }

// Finish returns the first error recorded, or an error when bytes are left over.
func (r *Reader) Finish() error {
	if r.err == nil && len(r.b) != 0 {
		r.Fail("%d trailing bytes", len(r.b))
	}
	return r.err
}

func (r *Reader) take(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || n > len(r.b) {
		r.Fail("truncated")
		return nil
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}

// U8 reads one byte.
func (r *Reader) U8() uint8 {
	if b := r.take(1); b != nil {
		return b[0]
	}
	return 0
}

// U16 reads a uint16.
func (r *Reader) U16() uint16 {
	if b := r.take(2); b != nil {
		return binary.LittleEndian.Uint16(b)
	}
	return 0
}

// U32 reads a uint32.
func (r *Reader) U32() uint32 {
	if b := r.take(4); b != nil {
		return binary.LittleEndian.Uint32(b)
	}
	return 0
}

// U64 reads a uint64.
func (r *Reader) U64() uint64 {
	if b := r.take(8); b != nil {
		return binary.LittleEndian.Uint64(b)
	}
	return 0
}

// F64 reads a float64, whatever its value.
func (r *Reader) F64() float64 { return math.Float64frombits(r.U64()) }

// Bool reads a flag byte, which must be 0 or 1.
func (r *Reader) Bool(name string) bool {
	v := r.U8()
	if v > 1 {
		r.Fail("bad %s flag %d", name, v)
	}
	return v == 1
}

// Enum reads a byte that must be at most maxValue.
func (r *Reader) Enum(name string, maxValue uint8) uint8 {
	v := r.U8()
	if v > maxValue {
		r.Fail("%s %d out of range [0, %d]", name, v, maxValue)
		return 0
	}
	return v
}

// Int reads a uint32 that must lie in [lo, hi] (with 0 ≤ lo ≤ hi ≤ MaxUint32).
func (r *Reader) Int(name string, lo, hi int) int {
	v := int(r.U32())
	if r.err == nil && (v < lo || v > hi) {
		r.Fail("%s %d out of range [%d, %d]", name, v, lo, hi)
		return 0
	}
	return v
}

// String reads a string with its uint16 length, at most maxLen bytes.
func (r *Reader) String(name string, maxLen int) string {
	n := int(r.U16())
	if r.err == nil && n > maxLen {
		r.Fail("%s of %d bytes (at most %d)", name, n, maxLen)
		return ""
	}
	return string(r.take(n))
}

// Int64s reads a uint32 count and that many int64 values.
func (r *Reader) Int64s(name string) []int64 {
	n := int(r.U32())
	if r.err != nil {
		return nil
	}
	if n > len(r.b)/8 {
		r.Fail("%d %s, more than the bytes hold", n, name)
		return nil
	}
	raw := r.take(8 * n)
	out := make([]int64, n)
	for i := range out {
		out[i] = int64(binary.LittleEndian.Uint64(raw[8*i:]))
	}
	return out
}

// Matrix reads a matrix written by Writer.Matrix: both dimensions in [1, maxDim], every value
// finite.
func (r *Reader) Matrix(name string, maxDim int) (rows, cols int, data []float64) {
	rows, cols = int(r.U32()), int(r.U32())
	if r.err != nil {
		return 0, 0, nil
	}
	if rows < 1 || cols < 1 || rows > maxDim || cols > maxDim || rows > len(r.b)/8/cols {
		r.Fail("%s claims %d×%d values, more than the bytes hold or allowed", name, rows, cols)
		return 0, 0, nil
	}
	raw := r.take(8 * rows * cols)
	data = make([]float64, rows*cols)
	for i := range data {
		data[i] = math.Float64frombits(binary.LittleEndian.Uint64(raw[8*i:]))
		if math.IsNaN(data[i]) || math.IsInf(data[i], 0) {
			r.Fail("%s[%d, %d] = %v is not finite", name, i/cols, i%cols, data[i])
			return 0, 0, nil
		}
	}
	return rows, cols, data
}
