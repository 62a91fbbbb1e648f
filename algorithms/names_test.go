package algorithms

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"testing"

	"github.com/scoll/scoll/schedule"
)

// TestNamesAreConstants: every registered algorithm's name is one of the
// constants of names.go, and every constant names a registered algorithm.
func TestNamesAreConstants(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "names.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	consts := map[string]bool{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, sp := range g.Specs {
			for _, v := range sp.(*ast.ValueSpec).Values {
				if lit, ok := v.(*ast.BasicLit); ok {
					s, _ := strconv.Unquote(lit.Value)
					consts[s] = false
				}
			}
		}
	}
	for c := range schedule.NumCollectives {
		for _, in := range List(c) {
			if _, ok := consts[in.Name]; !ok {
				t.Errorf("%s/%s: no constant in names.go", c, in.Name)
			}
			consts[in.Name] = true
		}
	}
	for name, used := range consts {
		if !used {
			t.Errorf("names.go: %q names no registered algorithm", name)
		}
	}
}
