//go:build !linux

package launch

import "errors"

// allowedCPUs returns nil: binding is implemented on Linux only.
func allowedCPUs() []int { return nil }

// bindThread is not supported here.
func bindThread([]int) error { return errors.ErrUnsupported }
