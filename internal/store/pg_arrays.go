package store

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/jackc/pgx/v5/pgtype"
)

// A batch's columns (unnest.go) go to PostgreSQL as one-dimensional arrays
// in the binary format. pgx encodes a slice of pointers element by element
// through reflection and an encoding plan per element (about 95 ns an
// element; 5% of the server's CPU in a PostgreSQL load, all of it on the
// committer's serial path), so a column is one of the types below, which
// the batch connection's type map (withArrayCodecs) writes in one pass.
// Each is also a pgtype.ArrayGetter, so a connection without those codecs
// (a statement sent through database/sql) encodes it the ordinary way.

type (
	textColumn []*string
	int8Column []*int64
	boolColumn []*bool
)

// binaryColumn is a column that writes itself as a PostgreSQL array of the
// element type elem (an OID), in the binary format.
type binaryColumn interface {
	appendArray(buf []byte, elem uint32) ([]byte, error)
}

func (c textColumn) appendArray(buf []byte, elem uint32) ([]byte, error) {
	if elem != pgtype.TextOID {
		return nil, fmt.Errorf("store: a text column sent as an array of type %d", elem)
	}
	size := 20 // the header
	for _, v := range c {
		size += 4
		if v != nil {
			size += len(*v)
		}
	}
	buf = slices.Grow(buf, size) // once: the values are the bulk of a batch's bytes
	return appendElements(buf, c, elem, func(buf []byte, v string) ([]byte, error) {
		if len(v) > math.MaxInt32 {
			return nil, fmt.Errorf("store: a text value of %d bytes", len(v))
		}
		buf = binary.BigEndian.AppendUint32(buf, uint32(len(v)))
		return append(buf, v...), nil
	})
}

func (c int8Column) appendArray(buf []byte, elem uint32) ([]byte, error) {
	switch elem {
	case pgtype.Int8OID:
		return appendElements(buf, c, elem, func(buf []byte, v int64) ([]byte, error) {
			buf = binary.BigEndian.AppendUint32(buf, 8)
			return binary.BigEndian.AppendUint64(buf, uint64(v)), nil
		})
	case pgtype.Int4OID:
		return appendElements(buf, c, elem, func(buf []byte, v int64) ([]byte, error) {
			if v < math.MinInt32 || v > math.MaxInt32 {
				return nil, fmt.Errorf("store: %d is out of range for integer", v)
			}
			buf = binary.BigEndian.AppendUint32(buf, 4)
			return binary.BigEndian.AppendUint32(buf, uint32(int32(v))), nil
		})
	}
	return nil, fmt.Errorf("store: an integer column sent as an array of type %d", elem)
}

func (c boolColumn) appendArray(buf []byte, elem uint32) ([]byte, error) {
	if elem != pgtype.BoolOID {
		return nil, fmt.Errorf("store: a boolean column sent as an array of type %d", elem)
	}
	return appendElements(buf, c, elem, func(buf []byte, v bool) ([]byte, error) {
		buf = binary.BigEndian.AppendUint32(buf, 1)
		if v {
			return append(buf, 1), nil
		}
		return append(buf, 0), nil
	})
}

// appendElements writes the binary array of vals (nil for NULL) with
// element type elem, each value written by put (its length, then it):
// the dimension count (1, also when empty, as pgx writes it), whether any
// element is NULL, the element type, the dimension's length and lower
// bound (1), then the elements (a NULL's length -1).
func appendElements[T any](buf []byte, vals []*T, elem uint32, put func([]byte, T) ([]byte, error)) ([]byte, error) {
	if len(vals) > math.MaxInt32 {
		return nil, fmt.Errorf("store: an array of %d elements", len(vals))
	}
	hasNull := uint32(0)
	for _, v := range vals {
		if v == nil {
			hasNull = 1
			break
		}
	}
	buf = binary.BigEndian.AppendUint32(buf, 1)
	buf = binary.BigEndian.AppendUint32(buf, hasNull)
	buf = binary.BigEndian.AppendUint32(buf, elem)
	buf = binary.BigEndian.AppendUint32(buf, uint32(len(vals)))
	buf = binary.BigEndian.AppendUint32(buf, 1)
	var err error
	for _, v := range vals {
		if v == nil {
			buf = binary.BigEndian.AppendUint32(buf, math.MaxUint32) // -1: NULL
			continue
		}
		if buf, err = put(buf, *v); err != nil {
			return nil, err
		}
	}
	return buf, nil
}

// The ArrayGetter side (pgx's own encoding), for connections without the
// codecs.

func (c textColumn) Dimensions() []pgtype.ArrayDimension { return dimensions(len(c)) }
func (c textColumn) Index(i int) any                     { return ptrOrNil(c[i]) }
func (c textColumn) IndexType() any                      { return new(string) }
func (c int8Column) Dimensions() []pgtype.ArrayDimension { return dimensions(len(c)) }
func (c int8Column) Index(i int) any                     { return ptrOrNil(c[i]) }
func (c int8Column) IndexType() any                      { return new(int64) }
func (c boolColumn) Dimensions() []pgtype.ArrayDimension { return dimensions(len(c)) }
func (c boolColumn) Index(i int) any                     { return ptrOrNil(c[i]) }
func (c boolColumn) IndexType() any                      { return new(bool) }

func dimensions(n int) []pgtype.ArrayDimension {
	return []pgtype.ArrayDimension{{Length: int32(n), LowerBound: 1}}
}

// ptrOrNil is p, or an untyped nil (pgx's NULL) when p is nil.
func ptrOrNil[T any](p *T) any {
	if p == nil {
		return nil
	}
	return p
}

// arrayCodec is a connection's codec of an array type, which writes a
// binaryColumn itself and leaves every other value, and all decoding, to
// the codec it wraps.
type arrayCodec struct {
	pgtype.Codec
	elem uint32
}

func (c arrayCodec) PlanEncode(m *pgtype.Map, oid uint32, format int16, value any) pgtype.EncodePlan {
	if _, ok := value.(binaryColumn); ok && format == pgtype.BinaryFormatCode {
		return columnPlan{elem: c.elem}
	}
	return c.Codec.PlanEncode(m, oid, format, value)
}

type columnPlan struct{ elem uint32 }

func (p columnPlan) Encode(value any, buf []byte) ([]byte, error) {
	return value.(binaryColumn).appendArray(buf, p.elem)
}

// columnArrayTypes is the array types a column can be sent as, by array
// OID: each one's element type.
var columnArrayTypes = map[uint32]uint32{
	pgtype.TextArrayOID: pgtype.TextOID,
	pgtype.Int8ArrayOID: pgtype.Int8OID,
	pgtype.Int4ArrayOID: pgtype.Int4OID,
	pgtype.BoolArrayOID: pgtype.BoolOID,
}

// withArrayCodecs gives m the array codecs once (a connection keeps its
// type map for its life).
func withArrayCodecs(m *pgtype.Map) {
	for arrayOID, elem := range columnArrayTypes {
		t, ok := m.TypeForOID(arrayOID)
		if !ok {
			continue
		}
		if _, done := t.Codec.(arrayCodec); done {
			continue
		}
		m.RegisterType(&pgtype.Type{Name: t.Name, OID: t.OID, Codec: arrayCodec{Codec: t.Codec, elem: elem}})
	}
}
