package scoll_test

import "testing"

// skipShort skips t in -short mode with the message why.
func skipShort(t *testing.T, why string) {
	t.Helper()
	if testing.Short() {
		t.Skip(why)
	}
}
