//go:build !long

package sweep

const long = false
