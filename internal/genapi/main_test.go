package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestAPIUpToDate fails when api.go in the repository root is not what
// genapi writes (run go generate in the root after changing genapi).
func TestAPIUpToDate(t *testing.T) {
	want, err := generate()
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join("..", "..", "api.go"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("api.go is stale: run go generate in the repository root")
	}
}
