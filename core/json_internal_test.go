package core

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCheckJSON(t *testing.T) {
	t.Parallel()
	zeros := func(n int) string { return strings.Repeat("0", n) }
	for _, tc := range []struct {
		doc  string
		want int
	}{
		{`{}`, jsonOK},
		{`"\u0000"`, jsonNUL},
		{`{"\u0000":1}`, jsonNUL},
		{`["a\u0000b"]`, jsonNUL},
		{`"\\u0000"`, jsonOK},         // an escaped backslash, then text
		{`"\\\u0000"`, jsonNUL},       // an escaped backslash, then NUL
		{`"\\\\u0000"`, jsonOK},       // two escaped backslashes, then text
		{`"\\u0000 \u0000"`, jsonNUL}, // text first, NUL later
		{`"\u00001"`, jsonNUL},
		{`"\u0001"`, jsonOK},
		{`"u0000"`, jsonOK},

		{`"\ud83d\ude00"`, jsonOK}, // a pair
		{`"\uD83D\uDE00"`, jsonOK},
		{`"\ud800"`, jsonSurrogate},
		{`"\udc00"`, jsonSurrogate},
		{`"\udc00\ud800"`, jsonSurrogate}, // reversed
		{`"\ud800\ud800"`, jsonSurrogate},
		{`"\ud800x"`, jsonSurrogate},
		{`"\ud800\n"`, jsonSurrogate},
		{`"\ud800\u0041"`, jsonSurrogate},
		{`{"k\udfff":1}`, jsonSurrogate},
		{`"\\ud800"`, jsonOK}, // text
		{`"\ue000\ud7ff"`, jsonOK},

		{`1e131071`, jsonOK},
		{`9.9e131071`, jsonOK},
		{`1e131072`, jsonNumber},
		{`100000e131067`, jsonNumber},
		{`-1e1000000`, jsonNumber},
		{`1e-16383`, jsonOK},
		{`0.1e-16382`, jsonOK},
		{`1.5e-16382`, jsonOK},
		{`1.50e-16382`, jsonNumber},
		{`1e-16384`, jsonNumber},
		{`1e-1000000`, jsonNumber},
		{`0e-16383`, jsonOK},
		{`0e-16384`, jsonNumber},
		{`0.0e-16383`, jsonNumber},
		{`0e1000000`, jsonOK},
		{`0e1073741823`, jsonNumber},
		{`1e99999999999999999999999`, jsonNumber},
		{`0.` + zeros(16383), jsonOK},
		{`0.` + zeros(16384), jsonNumber},
		{`1` + zeros(131071), jsonOK},
		{`1` + zeros(131072), jsonNumber},
		{`1` + zeros(131072) + `e-1`, jsonOK},
		{`[1,-0,2.5E+3,{"a":-1.0e-2}]`, jsonOK},
		{`["1e1000000"]`, jsonOK}, // text
		{`[true,false,null,1e131072]`, jsonNumber},
	} {
		if !json.Valid([]byte(tc.doc)) {
			t.Fatalf("test document %.40s is not valid JSON", tc.doc)
		}
		if got, _ := checkJSON([]byte(tc.doc)); got != tc.want {
			t.Errorf("checkJSON(%.60s) = %d, want %d", tc.doc, got, tc.want)
		}
	}
}

// benchDoc is a payload of the usual shape: objects of short strings and
// numbers, some non-ASCII text and escapes.
var benchDoc = func() []byte {
	var b bytes.Buffer
	b.WriteByte('[')
	for i := range 2000 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"id":12345,"name":"caf\u00e9 na\"me \ud83d\ude00","price":-12.50e-1,"tags":["a","b\\c"],"ok":true,"note":"ünïcödé text of some length"}`)
	}
	b.WriteByte(']')
	return b.Bytes()
}()

// BenchmarkValidJSON compares the validation before checkJSON (json.Valid,
// UTF-8 and the NUL search) with the validation now.
func BenchmarkValidJSON(b *testing.B) {
	doc := benchDoc
	b.Run("before", func(b *testing.B) {
		b.SetBytes(int64(len(doc)))
		b.ReportAllocs()
		for b.Loop() {
			if !json.Valid(doc) || !utf8.Valid(doc) || bytes.Contains(doc, []byte(`\u0000`)) {
				b.Fatal("refused")
			}
		}
	})
	b.Run("now", func(b *testing.B) {
		s := &Store{opts: Options{MaxPayloadBytes: MaxPayloadCeiling}}
		b.SetBytes(int64(len(doc)))
		b.ReportAllocs()
		for b.Loop() {
			if err := s.validJSON("Payload", doc); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("checkJSON", func(b *testing.B) {
		b.SetBytes(int64(len(doc)))
		b.ReportAllocs()
		for b.Loop() {
			if p, _ := checkJSON(doc); p != jsonOK {
				b.Fatal(p)
			}
		}
	})
}
