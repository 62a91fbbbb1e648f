package model_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/scoll/scoll/model"
)

func TestPresets(t *testing.T) {
	names := model.Presets()
	if !slices.IsSorted(names) || !slices.Contains(names, "infiniband") {
		t.Fatalf("Presets() = %v, want sorted names including infiniband", names)
	}
	for _, name := range names {
		p, err := model.ParamsByName(strings.ToUpper(name))
		if err != nil {
			t.Fatalf("ParamsByName(%q): %v", name, err)
		}
		if p.Name != name || p.Source == "" || p.Alpha <= 0 || p.Beta <= 0 || p.L <= 0 || p.GPerByte <= 0 {
			t.Errorf("preset %q incomplete: %+v", name, p)
		}
		if err := p.Validate(); err != nil {
			t.Errorf("preset %q: %v", name, err)
		}
	}
	// Hoefler and Moor's sec. 4.2 values, and their message cost L + 2o + sG
	// as α + sβ.
	ib, _ := model.ParamsByName("infiniband")
	want := model.Params{L: 0.6e-6, O: 4.7e-6, GPerByte: 0.73e-9, EMsg: 16.5e-9, EByte: 8.1e-12, PStatic: 0.5, MemDesc: 32}
	if ib.L != want.L || ib.O != want.O || ib.GPerByte != want.GPerByte || ib.EMsg != want.EMsg ||
		ib.EByte != want.EByte || ib.PStatic != want.PStatic || ib.MemDesc != want.MemDesc || ib.G != 0 || ib.Gamma != 0 {
		t.Errorf("infiniband = %+v", ib)
	}
	if !near(ib.Alpha, ib.L+2*ib.O) || ib.Beta != ib.GPerByte {
		t.Errorf("infiniband α = %g, β = %g; want L+2o = %g, G = %g", ib.Alpha, ib.Beta, ib.L+2*ib.O, ib.GPerByte)
	}
	curie, _ := model.ParamsByName("curie")
	if curie.Alpha != 2.66e-6 || curie.Beta != 4.8179e-10 || curie.Gamma != 1.6654e-10 {
		t.Errorf("curie = %+v, want Marendic's α = 2.66 µs, β = 4.8179e-10, γ = 1.6654e-10", curie)
	}
	if _, err := model.ParamsByName("myrinet"); !errors.Is(err, model.ErrParams) {
		t.Errorf("unknown preset: err = %v, want ErrParams", err)
	}
}

func TestParamsJSONRoundTrip(t *testing.T) {
	for _, name := range model.Presets() {
		p, _ := model.ParamsByName(name)
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		q, err := model.LoadParams(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("%s: %v\n%s", name, err, b)
		}
		if q != p {
			t.Errorf("%s: round trip gave %+v, want %+v", name, q, p)
		}
	}
	// The documented keys.
	const doc = `{"name": "mycluster", "alpha": 2e-6, "beta": 1e-10, "gamma": 2e-10,
	 "latency": 1e-6, "overhead": 5e-7, "gap": 1e-7, "gap_per_byte": 1e-10,
	 "energy_per_message": 1.6e-8, "energy_per_byte": 8e-12,
	 "static_power": 0.5, "descriptor_bytes": 32}`
	p, err := model.LoadParams(strings.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	want := model.Params{Name: "mycluster", Alpha: 2e-6, Beta: 1e-10, Gamma: 2e-10, L: 1e-6, O: 5e-7, G: 1e-7,
		GPerByte: 1e-10, EMsg: 1.6e-8, EByte: 8e-12, PStatic: 0.5, MemDesc: 32}
	if p != want {
		t.Errorf("LoadParams = %+v, want %+v", p, want)
	}
}

func TestLoadParamsBad(t *testing.T) {
	for _, in := range []string{
		``,
		`   `,
		`{`,
		`[1, 2]`,
		`"infiniband"`,
		`{"alpha": -1}`,
		`{"static_power": -0.5}`,
		`{"alpha": "fast"}`,
		`{"alpah": 1e-6}`,
		`{"alpha": 1e999}`,
		`{"alpha": 1} {"beta": 2}`,
		`{"alpha": 1} x`,
		`null x`,
		`null`,
	} {
		if _, err := model.LoadParams(strings.NewReader(in)); !errors.Is(err, model.ErrParams) {
			t.Errorf("LoadParams(%q): err = %v, want ErrParams", in, err)
		}
	}
}

func TestValidate(t *testing.T) {
	var nan float64
	nan = nan / nan
	for _, p := range []model.Params{{Alpha: -1}, {Gamma: nan}, {MemDesc: -32}, {GPerByte: 1 / nan}} {
		if err := p.Validate(); !errors.Is(err, model.ErrParams) {
			t.Errorf("Validate(%+v) = %v, want ErrParams", p, err)
		}
	}
	if err := (model.Params{}).Validate(); err != nil {
		t.Errorf("zero Params: %v", err)
	}
}

func TestOpenParams(t *testing.T) {
	if p, err := model.OpenParams("infiniband"); err != nil || p.Name != "infiniband" {
		t.Errorf("OpenParams(infiniband) = %+v, %v", p, err)
	}
	dir := t.TempDir()
	good := filepath.Join(dir, "m.json")
	if err := os.WriteFile(good, []byte(`{"alpha": 1e-6, "beta": 1e-9}`), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := model.OpenParams(good)
	if err != nil || p.Alpha != 1e-6 || p.Beta != 1e-9 || p.Name != good {
		t.Errorf("OpenParams(file) = %+v, %v", p, err)
	}
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"alpha": -1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, arg := range []string{bad, filepath.Join(dir, "missing.json"), "nosuchpreset"} {
		if _, err := model.OpenParams(arg); !errors.Is(err, model.ErrParams) {
			t.Errorf("OpenParams(%q): err = %v, want ErrParams", arg, err)
		}
	}
}

func FuzzLoadParams(f *testing.F) {
	for _, name := range model.Presets() {
		p, _ := model.ParamsByName(name)
		b, _ := json.Marshal(p)
		f.Add(b)
	}
	f.Add([]byte(`{"alpha": -1}`))
	f.Add([]byte(`{"alpha": 1} {}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := model.LoadParams(bytes.NewReader(data))
		if err != nil {
			if !errors.Is(err, model.ErrParams) {
				t.Fatalf("error %v does not wrap ErrParams", err)
			}
			return
		}
		if err := p.Validate(); err != nil {
			t.Fatalf("accepted invalid %+v: %v", p, err)
		}
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		q, err := model.LoadParams(bytes.NewReader(b))
		if err != nil || q != p {
			t.Fatalf("round trip of %+v: %+v, %v", p, q, err)
		}
	})
}
