// Package jobenv reads what a launcher tells the processes of a job: each
// process's rank and the job's size (scoll run, Open MPI, PMI launchers,
// Slurm), an id of the job, and the secret the ranks of one host share
// through a rendezvous directory.
package jobenv

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/scoll/scoll/internal/errs"
)

// The variables scoll run sets.
const (
	Rank = "SCOLL_RANK"
	Size = "SCOLL_SIZE"
	Job  = "SCOLL_JOB"
)

// rankSources are the launchers whose environment gives rank and size, in
// the order RankFromEnv tries them.
var rankSources = []struct{ name, rank, size string }{
	{"scoll", Rank, Size},
	{"Open MPI", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
	{"PMI", "PMI_RANK", "PMI_SIZE"},
	{"Slurm", "SLURM_PROCID", "SLURM_NTASKS"},
}

// RankFromEnv finds rank and size in the environment getenv reads: found
// is false (rank 0 of 1) when no launcher set them; inconsistent values
// are an error wrapping errs.InvalidArgument.
func RankFromEnv(getenv func(string) string) (rank, size int, found bool, err error) {
	for _, s := range rankSources {
		rs, ss := getenv(s.rank), getenv(s.size)
		if rs == "" && ss == "" {
			continue
		}
		r, err1 := strconv.Atoi(rs)
		n, err2 := strconv.Atoi(ss)
		if err1 != nil || err2 != nil || n < 1 || r < 0 || r >= n {
			return 0, 0, false, fmt.Errorf("%w: %s environment gives rank %q of size %q (%s, %s)", errs.InvalidArgument, s.name, rs, ss, s.rank, s.size)
		}
		return r, n, true, nil
	}
	return 0, 1, false, nil
}

// JobFromEnv returns an id of the job the launcher gives, or "".
func JobFromEnv(getenv func(string) string) string {
	if j := getenv(Job); j != "" {
		return j
	}
	for _, k := range []string{"OMPI_MCA_ess_base_jobid", "PMIX_NAMESPACE", "PMI_KVSNAME"} {
		if j := getenv(k); j != "" {
			return j
		}
	}
	if j := getenv("SLURM_JOB_ID"); j != "" {
		return j + "." + getenv("SLURM_STEP_ID")
	}
	return ""
}

// Sanitize maps s to a file name: letters, digits, dot, dash and
// underscore stay, anything else becomes an underscore.
func Sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, s)
}

// SharedSecret returns the secret kept in dir/secret, creating it if no
// rank has yet: written to a private temporary file and linked into place,
// so that every rank reads the same complete secret.
func SharedSecret(dir string) ([]byte, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("rendezvous directory: %w", err)
	}
	path := filepath.Join(dir, "secret")
	if b, err := os.ReadFile(path); err == nil && len(b) >= 32 {
		return b, nil
	}
	tmp, err := os.CreateTemp(dir, ".secret-*")
	if err != nil {
		return nil, fmt.Errorf("rendezvous secret: %w", err)
	}
	defer os.Remove(tmp.Name())
	var raw [32]byte
	rand.Read(raw[:])
	_, err = tmp.WriteString(hex.EncodeToString(raw[:]))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("rendezvous secret: %w", err)
	}
	if err := os.Link(tmp.Name(), path); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, fmt.Errorf("rendezvous secret: %w", err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("rendezvous secret: %w", err)
	}
	return b, nil
}
