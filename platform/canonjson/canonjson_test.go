package canonjson

import "testing"

func TestCanonicalize(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, in, want string }{
		{"sorted keys", `{"b":1,"a":{"d":[1,2],"c":null}}`, `{"a":{"c":null,"d":[1,2]},"b":1}`},
		{"whitespace", "{ \"a\" :\n true }", `{"a":true}`},
		{"numbers", `[1.0, 1e2, 0.000001, 1e-7, 1e21, 123456789012, -0.5, 0]`, `[1,100,0.000001,1e-7,1e+21,123456789012,-0.5,0]`},
		{"strings", `"a\u0041\u00e9\n\u0001<>&"`, `"aAé\n\u0001<>&"`},
		{"utf16 order", `{"\ud83d\ude00":1,"\ufb01":2}`, `{"😀":1,"ﬁ":2}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got, err := Canonicalize([]byte(c.in))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != c.want {
				t.Fatalf("got %s, want %s", got, c.want)
			}
		})
	}
}

func TestMarshalStruct(t *testing.T) {
	t.Parallel()
	type s struct {
		Z string `json:"z"`
		A int    `json:"a"`
	}
	got, err := Marshal(s{Z: "x", A: 3})
	if err != nil || string(got) != `{"a":3,"z":"x"}` {
		t.Fatalf("got %s, %v", got, err)
	}
}
