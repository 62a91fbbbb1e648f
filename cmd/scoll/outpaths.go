package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Output-path flags, checked before any command starts its work: a plot
// to an unknown format, or a file in a directory that does not exist,
// would otherwise fail only after minutes of measuring or simulating.
var (
	// plotFlags name image files: .svg or .png, in an existing directory.
	plotFlags = map[string]bool{"plot": true, "plot-bounds": true}
	// fileFlags name files of any kind in an existing directory ("-":
	// standard output).
	fileFlags = map[string]bool{"output": true, "record": true, "csv": true, "tune-out": true}
	// dirFlags name directories that are made if missing, under an
	// existing parent.
	dirFlags = map[string]bool{"out": true}
)

// checkOutputFlags checks the output-path flags the user set on cmd.
func checkOutputFlags(cmd *cobra.Command, _ []string) error {
	var err error
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if err == nil {
			err = checkOutputFlag(f.Name, f.Value.String())
		}
	})
	return err
}

// checkOutputFlag checks one flag's path.
func checkOutputFlag(name, path string) error {
	if path == "" || path == "-" || !(plotFlags[name] || fileFlags[name] || dirFlags[name]) {
		return nil
	}
	if plotFlags[name] {
		if ext := strings.ToLower(filepath.Ext(path)); ext != ".svg" && ext != ".png" {
			return fmt.Errorf("--%s %s: want a .svg or .png file", name, path)
		}
	}
	dir := filepath.Dir(filepath.Clean(path))
	if dirFlags[name] {
		if st, err := os.Stat(path); err == nil {
			if !st.IsDir() {
				return fmt.Errorf("--%s %s: not a directory", name, path)
			}
			return nil
		}
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return fmt.Errorf("--%s %s: directory %s does not exist", name, path, dir)
	}
	return nil
}

// shownPath is the path of file name in directory dir as the commands
// report it: relative paths start with ./ or ../, so that a file written
// to the current directory reads as one.
func shownPath(dir, name string) string {
	p := filepath.Join(dir, name)
	if filepath.IsAbs(p) || p == ".." || strings.HasPrefix(p, "../") || strings.HasPrefix(p, "."+string(filepath.Separator)) {
		return p
	}
	return "." + string(filepath.Separator) + p
}
