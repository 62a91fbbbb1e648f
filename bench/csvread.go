package bench

import (
	"encoding/csv"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
)

// ReadCSV reads rows of type R that Write wrote as CSV: each column whose
// name is the JSON name of one of R's fields (string, bool, integer or
// float) sets that field; other columns are ignored. It is how a saved run
// is printed or plotted again (scoll bench --imbalance --from, scoll
// split-phases --from).
func ReadCSV[R any](r io.Reader) ([]R, error) {
	recs, err := csv.NewReader(r).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrConfig, err)
	}
	typ := reflect.TypeFor[R]()
	if typ.Kind() != reflect.Struct {
		return nil, fmt.Errorf("%w: ReadCSV of %v: want a struct type", ErrConfig, typ)
	}
	if len(recs) == 0 {
		return nil, fmt.Errorf("%w: CSV without a header", ErrConfig)
	}
	field := make([]int, len(recs[0])) // column → field index, -1 for none
	known := 0
	for c, name := range recs[0] {
		field[c] = -1
		for i := range typ.NumField() {
			if tag, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ","); tag == name {
				field[c] = i
				known++
			}
		}
	}
	if known == 0 {
		return nil, fmt.Errorf("%w: CSV columns %s: none is a column of %v", ErrConfig, strings.Join(recs[0], ","), typ.Name())
	}
	out := make([]R, 0, len(recs)-1)
	for line, rec := range recs[1:] {
		var row R
		v := reflect.ValueOf(&row).Elem()
		for c, s := range rec {
			if c >= len(field) || field[c] < 0 {
				continue
			}
			if err := setField(v.Field(field[c]), s); err != nil {
				return nil, fmt.Errorf("%w: CSV line %d: %s %q: %v", ErrConfig, line+2, recs[0][c], s, err)
			}
		}
		out = append(out, row)
	}
	return out, nil
}

// setField sets f from its CSV text.
func setField(f reflect.Value, s string) error {
	switch f.Kind() {
	case reflect.String:
		f.SetString(s)
	case reflect.Bool:
		b, err := strconv.ParseBool(s)
		if err != nil {
			return fmt.Errorf("want true or false")
		}
		f.SetBool(b)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || f.OverflowInt(n) {
			return fmt.Errorf("want a whole number")
		}
		f.SetInt(n)
	case reflect.Float32, reflect.Float64:
		x, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return fmt.Errorf("want a number")
		}
		f.SetFloat(x)
	default:
		return fmt.Errorf("a %v column cannot be read back", f.Kind())
	}
	return nil
}
