package binsparse

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/mlfeed/mlfeed"
)

func TestParseDataType(t *testing.T) {
	for _, c := range []struct {
		in   string
		want DataType
	}{
		{"uint8", DataType{Type: mlfeed.Uint8}},
		{"int64", DataType{Type: mlfeed.Int64}},
		{"float32", DataType{Type: mlfeed.Float32}},
		{"bint8", DataType{Type: mlfeed.Bool}},
		{"iso[bint8]", DataType{Type: mlfeed.Bool, Iso: true}},
		{"complex[float32]", DataType{Type: mlfeed.Complex64}},
		{"complex[float64]", DataType{Type: mlfeed.Complex128}},
		{"iso[complex[float64]]", DataType{Type: mlfeed.Complex128, Iso: true}},
		{"iso[int8]", DataType{Type: mlfeed.Int8, Iso: true}},
	} {
		got, err := ParseDataType(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseDataType(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
		if got.String() != c.in {
			t.Errorf("%v.String() = %q, want %q", got, got.String(), c.in)
		}
	}
	for _, bad := range []string{"", "float16", "complex[int32]", "iso[]", "complex[iso[float64]]", "uint128", "bool"} {
		if _, err := ParseDataType(bad); !errors.Is(err, ErrFormat) {
			t.Errorf("ParseDataType(%q): err = %v, want ErrFormat", bad, err)
		}
	}
}

// Descriptors as the implementations write them (see the corpus README).
var descriptorCases = []struct {
	name, js  string
	format    Format
	unwrapped bool
	nnz       int64
	user      []string
}{
	{"c-reference", "{\n\t\"binsparse\":\t{\n\t\t\"version\":\t\"0.1\",\n\t\t\"format\":\t\"CSR\",\n\t\t\"shape\":\t[5, 5],\n\t\t\"number_of_stored_values\":\t6,\n\t\t\"data_types\":\t{\n\t\t\t\"values\":\t\"iso[bint8]\",\n\t\t\t\"indices_1\":\t\"uint8\",\n\t\t\t\"pointers_to_1\":\t\"uint8\"\n\t\t},\n\t\t\"structure\":\t\"symmetric_lower\"\n\t},\n\t\"comment\":\t\"% small symmetric pattern test\"\n}",
		CSR, false, 6, []string{"comment"}},
	{"python-2026", `{"data_types": {"indices_0": "int64", "indices_1": "int64", "values": "complex[float64]"}, "format": "COOR", "number_of_stored_values": 2, "shape": [2, 2], "version": "0.1"}`,
		COOR, true, 2, nil},
	{"ivirshup-2023", `{"format": "COO", "shape": [3, 3], "data_types": {"indices_0": "int32", "indices_1": "int32", "values": "float64"}}`,
		COOR, true, -1, nil},
	{"finch-2024", `{"binsparse": {"tensor": {"level": {"level_kind": "dense", "rank": 1, "level": {"level_kind": "sparse", "rank": 1, "level": {"level_kind": "element"}}}, "transpose": [1, 0]}, "fill": true, "shape": [7, 7], "data_types": {"pointers_to_1": "int64", "indices_1": "int64", "values": "float64", "fill_value": "float64"}, "version": "0.1", "number_of_stored_values": 15, "attrs": {}, "format": "CSC"}}`,
		CSC, false, 15, nil},
	{"c-tensor", `{"binsparse": {"custom": {"transpose": [0, 1, 2], "level": {"level_desc": "dense", "rank": 1, "level": {"level_desc": "sparse", "rank": 2, "level": {"level_desc": "element"}}}}, "version": "0.1", "shape": [2, 3, 4], "number_of_stored_values": 5, "data_types": {"values": "float64", "pointers_to_1": "uint64", "indices_1": "uint8", "indices_2": "uint8"}}}`,
		Custom, false, 5, nil},
	{"custom-alias", `{"custom": {"level": {"level": {"level_desc": "element"}, "level_desc": "sparse", "rank": 2}}, "data_types": {"indices_0": "int32", "indices_1": "int32", "values": "float64"}, "format": "custom", "number_of_stored_values": 5, "shape": [3, 3], "version": "0.1"}`,
		COOR, true, 5, nil},
	{"semver", `{"binsparse": {"version": "0.1.0", "format": "DMAT", "shape": [2, 3], "number_of_stored_values": 6, "data_types": {"values": "int8"}}, "metadata": {"role": "A"}, "x": [1, 2]}`,
		DMATR, false, 6, []string{"metadata", "x"}},
	{"attributes", `{"binsparse": {"version": "0.1", "format": "CSR", "shape": [2, 2], "number_of_stored_values": 1, "data_types": {"values": "float64", "indices_1": "uint8", "pointers_to_1": "uint8"}, "attributes": {"number_of_diagonal_elements": 1}}}`,
		CSR, false, 1, nil},
}

func TestParseDescriptor(t *testing.T) {
	for _, c := range descriptorCases {
		t.Run(c.name, func(t *testing.T) {
			d, err := ParseDescriptor([]byte(c.js))
			if err != nil {
				t.Fatal(err)
			}
			if d.Format != c.format || d.Unwrapped != c.unwrapped || d.NumberOfStoredValues != c.nnz {
				t.Errorf("got format %s unwrapped %v nnz %d; want %s %v %d", d.Format, d.Unwrapped, d.NumberOfStoredValues, c.format, c.unwrapped, c.nnz)
			}
			if len(d.User) != len(c.user) {
				t.Errorf("user keys %v, want %v", d.User, c.user)
			}
			for _, k := range c.user {
				if _, ok := d.User[k]; !ok {
					t.Errorf("user key %q lost", k)
				}
			}
			// Marshal and parse again: same descriptor, user keys preserved, wrapped.
			if d.NumberOfStoredValues < 0 {
				d.NumberOfStoredValues = 7
			}
			js, err := d.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			d2, err := ParseDescriptor(js)
			if err != nil {
				t.Fatalf("re-parse %s: %v", js, err)
			}
			if d2.Unwrapped || d2.Version != Version || d2.Format != d.Format || d2.Structure != d.Structure || d2.Fill != d.Fill {
				t.Errorf("round trip changed the descriptor:\n%s", js)
			}
			for k, v := range d.User {
				if compact(d2.User[k]) != compact(v) {
					t.Errorf("user key %q: %s, want %s", k, d2.User[k], v)
				}
			}
			for k, v := range d.DataTypes {
				if d2.DataTypes[k] != v {
					t.Errorf("data type %s: %v, want %v", k, d2.DataTypes[k], v)
				}
			}
		})
	}
}

func TestDescriptorCustom(t *testing.T) {
	d, err := ParseDescriptor([]byte(descriptorCases[4].js))
	if err != nil {
		t.Fatal(err)
	}
	if d.Custom == nil || len(d.Custom.Levels) != 2 || d.Custom.Levels[1] != (Level{LevelSparse, 2}) {
		t.Fatalf("custom levels %+v", d.Custom)
	}
	want := []string{"pointers_to_1", "indices_1", "indices_2", "values"}
	if got := d.Arrays(); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("arrays %v, want %v", got, want)
	}
	js, _ := d.Marshal()
	if strings.Contains(string(js), `"format"`) == false {
		t.Errorf("custom descriptor written without format: %s", js)
	}
}

func TestDescriptorPredefinedArrays(t *testing.T) {
	want := map[Format]string{
		DVEC: "values", DMATR: "values", DMATC: "values", CVEC: "indices_0,values",
		CSR: "pointers_to_1,indices_1,values", CSC: "pointers_to_1,indices_1,values",
		DCSR: "indices_0,pointers_to_1,indices_1,values", DCSC: "indices_0,pointers_to_1,indices_1,values",
		COOR: "indices_0,indices_1,values", COOC: "indices_0,indices_1,values",
	}
	for f, w := range want {
		if got := strings.Join(predefined(f).arrays(), ","); got != w {
			t.Errorf("%s arrays %s, want %s", f, got, w)
		}
		if a := predefined(f).alias(); a != f {
			t.Errorf("alias of %s's levels is %s", f, a)
		}
	}
}

func TestParseDescriptorErrors(t *testing.T) {
	base := func(mod func(m map[string]any)) string {
		m := map[string]any{"version": "0.1", "format": "CSR", "shape": []int{3, 3}, "number_of_stored_values": 2,
			"data_types": map[string]string{"values": "float64", "indices_1": "int32", "pointers_to_1": "int32"}}
		mod(m)
		b, _ := json.Marshal(map[string]any{"binsparse": m})
		return string(b)
	}
	for _, c := range []struct {
		name string
		js   string
		want error
	}{
		{"not json", "{", ErrFormat},
		{"no binsparse", `{"comment": 1}`, ErrFormat},
		{"binsparse not object", `{"binsparse": 3}`, ErrFormat},
		{"unknown format", base(func(m map[string]any) { m["format"] = "BSR" }), ErrUnsupported},
		{"version 0.2", base(func(m map[string]any) { m["version"] = "0.2" }), ErrUnsupported},
		{"version 2.0.0", base(func(m map[string]any) { m["version"] = "2.0.0" }), ErrUnsupported},
		{"bad version", base(func(m map[string]any) { m["version"] = "zero" }), ErrFormat},
		{"version number", base(func(m map[string]any) { m["version"] = 0.1 }), ErrFormat},
		{"version 0.10", base(func(m map[string]any) { m["version"] = "0.10" }), ErrFormat},
		{"version 0.1.", base(func(m map[string]any) { m["version"] = "0.1." }), ErrFormat},
		{"version 0.1.x", base(func(m map[string]any) { m["version"] = "0.1.x" }), ErrFormat},
		{"version 0.1.2.3", base(func(m map[string]any) { m["version"] = "0.1.2.3" }), ErrFormat},
		{"version 1.2.3.4", base(func(m map[string]any) { m["version"] = "1.2.3.4" }), ErrFormat},
		{"version 1", base(func(m map[string]any) { m["version"] = "1" }), ErrFormat},
		{"version .1", base(func(m map[string]any) { m["version"] = ".1" }), ErrFormat},
		{"version Arabic-Indic digit", base(func(m map[string]any) { m["version"] = "\u0661.0" }), ErrFormat},
		{"version 00.1", base(func(m map[string]any) { m["version"] = "00.1" }), ErrUnsupported},
		{"version 1.0", base(func(m map[string]any) { m["version"] = "1.0" }), ErrUnsupported},
		{"no shape", base(func(m map[string]any) { delete(m, "shape") }), ErrFormat},
		{"shape rank", base(func(m map[string]any) { m["shape"] = []int{3} }), ErrFormat},
		{"negative shape", base(func(m map[string]any) { m["shape"] = []int{3, -1} }), ErrFormat},
		{"negative nnz", base(func(m map[string]any) { m["number_of_stored_values"] = -2 }), ErrFormat},
		{"no data_types", base(func(m map[string]any) { delete(m, "data_types") }), ErrFormat},
		{"missing array type", base(func(m map[string]any) {
			m["data_types"] = map[string]string{"values": "float64", "indices_1": "int32"}
		}), ErrFormat},
		{"extra array", base(func(m map[string]any) {
			m["data_types"] = map[string]string{"values": "float64", "indices_1": "int32", "pointers_to_1": "int32", "indices_0": "int8"}
		}), ErrFormat},
		{"float index", base(func(m map[string]any) {
			m["data_types"] = map[string]string{"values": "float64", "indices_1": "float32", "pointers_to_1": "int32"}
		}), ErrFormat},
		{"unknown type", base(func(m map[string]any) {
			m["data_types"] = map[string]string{"values": "float128", "indices_1": "int32", "pointers_to_1": "int32"}
		}), ErrFormat},
		{"unknown structure", base(func(m map[string]any) { m["structure"] = "banded" }), ErrUnsupported},
		{"symmetric not square", base(func(m map[string]any) {
			m["structure"] = "symmetric_lower"
			m["shape"] = []int{3, 4}
		}), ErrFormat},
		{"hermitian real", base(func(m map[string]any) { m["structure"] = "hermitian_lower" }), ErrFormat},
		{"custom without levels", base(func(m map[string]any) { m["format"] = "custom" }), ErrFormat},
		{"custom bad kind", base(func(m map[string]any) {
			m["format"] = "custom"
			m["custom"] = map[string]any{"level": map[string]any{"level_desc": "banded", "rank": 1}}
		}), ErrUnsupported},
		{"custom no rank", base(func(m map[string]any) {
			m["format"] = "custom"
			m["custom"] = map[string]any{"level": map[string]any{"level_desc": "dense", "level": map[string]any{"level_desc": "element"}}}
		}), ErrFormat},
		{"custom bad transpose", base(func(m map[string]any) {
			m["format"] = "custom"
			m["custom"] = map[string]any{"transpose": []int{0, 0}, "level": map[string]any{"level_desc": "sparse", "rank": 2, "level": map[string]any{"level_desc": "element"}}}
		}), ErrFormat},
		{"fill not bool", base(func(m map[string]any) { m["fill"] = "yes" }), ErrFormat},
	} {
		_, err := ParseDescriptor([]byte(c.js))
		if !errors.Is(err, c.want) {
			t.Errorf("%s: err = %v, want %v", c.name, err, c.want)
		}
	}
}

func TestMarshalOrder(t *testing.T) {
	d, err := ParseDescriptor([]byte(descriptorCases[0].js))
	if err != nil {
		t.Fatal(err)
	}
	js, err := d.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	s := string(js)
	order := []string{`"binsparse"`, `"version": "0.1"`, `"format": "CSR"`, `"shape"`, `"number_of_stored_values": 6`,
		`"data_types"`, `"values": "iso[bint8]"`, `"pointers_to_1"`, `"indices_1"`, `"structure": "symmetric_lower"`, `"comment"`}
	at := 0
	for _, o := range order {
		i := strings.Index(s[at:], o)
		if i < 0 {
			t.Fatalf("%s missing or out of order in\n%s", o, s)
		}
		at += i
	}
}

func compact(raw json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return "invalid: " + string(raw)
	}
	return b.String()
}
