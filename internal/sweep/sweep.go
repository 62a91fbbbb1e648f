// Package sweep says how far the tests sweep. go test ./... runs the
// sizes, counts and cases a change needs to be trusted, in under five
// minutes on two cores; built with -tags long (as .ci/run does) the
// tests also run their long sweeps: more rank counts, larger
// communicators, every transport with every algorithm. -short runs less
// than either: it skips the sweeps altogether.
//
//	go test ./...                  # the tests (about 4 minutes on 2 cores)
//	go test -short ./...           # the quick subset (about 1 minute)
//	go test -tags long ./...       # with the long sweeps (about 12 minutes)
package sweep

// Long reports whether the tests run their long sweeps (-tags long).
const Long = long

// More returns normal, followed by more when the long sweeps run.
func More[T any](normal []T, more ...T) []T {
	if !Long {
		return normal
	}
	return append(normal[:len(normal):len(normal)], more...)
}
