package main

import (
	"strings"
	"testing"
)

// TestVersionAndCompletion: --version names the build, and completion
// scripts come out for bash and zsh.
func TestVersionAndCompletion(t *testing.T) {
	out, _, err := run(t, "--version")
	if err != nil || !strings.HasPrefix(out, "scoll ") || !strings.Contains(out, "go1.") {
		t.Errorf("--version: %q %v", out, err)
	}
	for shell, mark := range map[string]string{"bash": "complete -o default -F", "zsh": "#compdef scoll"} {
		out, _, err := run(t, "completion", shell)
		if err != nil || !strings.Contains(out, mark) {
			t.Errorf("completion %s: %v, output lacks %q", shell, err, mark)
		}
	}
}
