package tfrecord

import (
	"errors"
	"fmt"
	"math/bits"

	"google.golang.org/protobuf/encoding/protowire"
)

// This file walks the protobuf wire format of tf.train.Example and SequenceExample
// (tensorflow/core/example/example.proto and feature.proto):
//
//	Example          { Features features = 1; }
//	SequenceExample  { Features context = 1; FeatureLists feature_lists = 2; }
//	Features         { map<string, Feature> feature = 1; }
//	FeatureLists     { map<string, FeatureList> feature_list = 1; }
//	FeatureList      { repeated Feature feature = 1; }
//	Feature          { oneof kind { BytesList bytes_list = 1; FloatList float_list = 2;
//	                                Int64List int64_list = 3; } }
//	BytesList        { repeated bytes value = 1; }
//	FloatList        { repeated float value = 1 [packed = true]; }
//	Int64List        { repeated int64 value = 1 [packed = true]; }
//
// Repeated numbers are accepted packed and unpacked, as protobuf parsers must. Unknown fields
// are skipped, as protobuf parsers do.

// kind is the kind of a Feature: which of its lists it holds.
type kind uint8

const (
	kindNone kind = iota // a Feature with no list set
	kindBytes
	kindFloat
	kindInt64
)

func (k kind) String() string {
	return [...]string{"no list", "bytes_list", "float_list", "int64_list"}[k]
}

// errWire is the cause of every malformed-message error; the caller adds the place.
var errWire = errors.New("malformed protobuf")

func wireErr(msg string, err error) error {
	if err != nil {
		return fmt.Errorf("%w: %s: %v", errWire, msg, err)
	}
	return fmt.Errorf("%w: %s", errWire, msg)
}

// field is one field of a message: its number, wire type, and for the bytes wire type its
// payload, for varint and fixed types its value.
type field struct {
	num  protowire.Number
	typ  protowire.Type
	body []byte
	v    uint64
}

// next reads the field at the start of b and returns it and the bytes after it. msg names
// the message in errors.
func next(b []byte, msg string) (field, []byte, error) {
	// The common case inline: a one-byte tag of a length-delimited field of fewer than 2^14
	// bytes, as keys, lists and most records' features are.
	if len(b) >= 3 && b[0] < 0x80 && b[0]&7 == 2 && b[0] >= 8 {
		var l, h int
		if b[1] < 0x80 {
			l, h = int(b[1]), 2
		} else if b[2] < 0x80 {
			l, h = int(b[1]&0x7f)|int(b[2])<<7, 3
		}
		if h > 0 && h+l <= len(b) {
			n := h + l
			return field{num: protowire.Number(b[0] >> 3), typ: protowire.BytesType, body: b[h:n:n]}, b[n:], nil
		}
	} else if len(b) == 2 && b[0] < 0x80 && b[0]&7 == 2 && b[0] >= 8 && b[1] == 0 {
		return field{num: protowire.Number(b[0] >> 3), typ: protowire.BytesType, body: b[2:2:2]}, b[2:], nil
	}
	num, typ, n := protowire.ConsumeTag(b)
	if n < 0 {
		return field{}, nil, wireErr(msg+": tag", protowire.ParseError(n))
	}
	b = b[n:]
	f := field{num: num, typ: typ}
	switch typ {
	case protowire.BytesType:
		f.body, n = protowire.ConsumeBytes(b)
	case protowire.VarintType:
		f.v, n = protowire.ConsumeVarint(b)
	case protowire.Fixed32Type:
		var v uint32
		v, n = protowire.ConsumeFixed32(b)
		f.v = uint64(v)
	default:
		n = protowire.ConsumeFieldValue(num, typ, b)
	}
	if n < 0 {
		return field{}, nil, wireErr(fmt.Sprintf("%s: field %d", msg, num), protowire.ParseError(n))
	}
	return f, b[n:], nil
}

// walkRecord calls ctx for every context feature (Example's features, SequenceExample's
// context) and, when lists is not nil, list for every feature list of a SequenceExample, with
// the key and the Feature's or FeatureList's bytes. It reports whether the record had
// feature_lists (field 2), which an Example does not have.
func walkRecord(rec []byte, ctx func(key, feat []byte) error, list func(key, fl []byte) error) (hasLists bool, err error) {
	for len(rec) > 0 {
		var f field
		if f, rec, err = next(rec, "record"); err != nil {
			return hasLists, err
		}
		if f.typ != protowire.BytesType {
			continue
		}
		switch f.num {
		case 1:
			err = walkMap(f.body, "features", ctx)
		case 2:
			hasLists = true
			if list != nil {
				err = walkMap(f.body, "feature_lists", list)
			}
		}
		if err != nil {
			return hasLists, err
		}
	}
	return hasLists, nil
}

// walkMap calls fn with the key and value of every entry of a map<string, message> field 1
// of message b.
func walkMap(b []byte, msg string, fn func(key, val []byte) error) error {
	for len(b) > 0 {
		f, rest, err := next(b, msg)
		if err != nil {
			return err
		}
		b = rest
		if f.num != 1 {
			continue
		}
		if f.typ != protowire.BytesType {
			return wireErr(msg+": map entry is not a message", nil)
		}
		var key, val []byte
		for e := f.body; len(e) > 0; {
			var g field
			if g, e, err = next(e, "map entry"); err != nil {
				return err
			}
			switch {
			case g.num == 1 && g.typ == protowire.BytesType:
				key = g.body
			case g.num == 2 && g.typ == protowire.BytesType:
				val = g.body
			case g.num == 1 || g.num == 2:
				return wireErr(fmt.Sprintf("%s: map entry field %d has wire type %d", msg, g.num, g.typ), nil)
			}
		}
		if err := fn(key, val); err != nil {
			return err
		}
	}
	return nil
}

// walkList calls fn with the bytes of every Feature of a FeatureList.
func walkList(b []byte, fn func(feat []byte) error) error {
	for len(b) > 0 {
		f, rest, err := next(b, "feature_list")
		if err != nil {
			return err
		}
		b = rest
		if f.num != 1 {
			continue
		}
		if f.typ != protowire.BytesType {
			return wireErr("feature_list: feature is not a message", nil)
		}
		if err := fn(f.body); err != nil {
			return err
		}
	}
	return nil
}

// parseFeature returns a Feature's kind and the bytes of its list message. A Feature that
// sets its oneof more than once is refused: protobuf would merge or replace, and either
// silently changes what a reader sees.
func parseFeature(b []byte) (kind, []byte, error) {
	k, body := kindNone, []byte(nil)
	for len(b) > 0 {
		f, rest, err := next(b, "feature")
		if err != nil {
			return 0, nil, err
		}
		b = rest
		if f.num < 1 || f.num > 3 {
			continue
		}
		if f.typ != protowire.BytesType {
			return 0, nil, wireErr(fmt.Sprintf("feature: field %d has wire type %d", f.num, f.typ), nil)
		}
		if k != kindNone {
			return 0, nil, wireErr("feature sets more than one list", nil)
		}
		k, body = kind(f.num), f.body
	}
	return k, body, nil
}

// countValues returns the number of values of a list of kind k.
func countValues(k kind, b []byte) (int64, error) {
	var n int64
	for len(b) > 0 {
		f, rest, err := next(b, k.String())
		if err != nil {
			return 0, err
		}
		b = rest
		if f.num != 1 {
			continue
		}
		switch {
		case k == kindBytes && f.typ == protowire.BytesType:
			n++
		case k == kindFloat && f.typ == protowire.Fixed32Type:
			n++
		case k == kindFloat && f.typ == protowire.BytesType:
			if len(f.body)%4 != 0 {
				return 0, wireErr(fmt.Sprintf("float_list: packed values of %d bytes", len(f.body)), nil)
			}
			n += int64(len(f.body) / 4)
		case k == kindInt64 && f.typ == protowire.VarintType:
			n++
		case k == kindInt64 && f.typ == protowire.BytesType:
			c, err := countVarints(f.body)
			if err != nil {
				return 0, err
			}
			n += c
		default:
			return 0, wireErr(fmt.Sprintf("%s: value has wire type %d", k, f.typ), nil)
		}
	}
	return n, nil
}

// countVarints returns the number of varints packed in b.
func countVarints(b []byte) (int64, error) {
	if len(b) > 0 && b[len(b)-1] >= 0x80 {
		return 0, wireErr("int64_list: packed values end inside a varint", nil)
	}
	var n int64
	// Count the bytes that end a varint (high bit clear), eight at a time.
	for len(b) >= 8 {
		w := uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
			uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
		n += int64(8 - bits.OnesCount64(w&0x8080808080808080))
		b = b[8:]
	}
	for _, c := range b {
		if c < 0x80 {
			n++
		}
	}
	return n, nil
}
