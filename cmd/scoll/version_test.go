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

// TestErrorLine: an error is printed with the failing command's name once,
// whatever prefixes the packages put on it.
func TestErrorLine(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"sim", "--sizes", "12Q"}, "scoll sim: invalid size"},
		{[]string{"schedule", "--op", "allreduce", "--algorithm", "nosuch", "--np", "4"}, "scoll schedule: "},
		{[]string{"bench", "--np", "0"}, "scoll bench: "},
	} {
		cmd := newRootCmd()
		var out, errb strings.Builder
		cmd.SetOut(&out)
		cmd.SetErr(&errb)
		cmd.SetArgs(tc.args)
		c, err := cmd.ExecuteC()
		if err == nil {
			t.Fatalf("%v: no error", tc.args)
		}
		line := errorLine(c, err)
		if !strings.HasPrefix(line, tc.want) {
			t.Errorf("%v: %q", tc.args, line)
		}
		t.Logf("%v: %s", tc.args, line)
		for _, wrong := range []string{"scoll: scoll:", ": bench:", ": sim:"} {
			if strings.Contains(line, wrong) {
				t.Errorf("%v: %q contains %q", tc.args, line, wrong)
			}
		}
	}
}
