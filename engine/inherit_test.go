package engine

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// inheritParent makes a parent research/ folder with the files the table
// below picks from.
func inheritParent(t *testing.T) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "research")
	files := map[string]string{
		"notes.md": "# notes\n", "sub/data.csv": "n,v\n1,1\n", ".env": "KEY=1\n", ".git/config": "x\n",
		"provider.json": "{}\n", "conn.json": `{"base_url":"http://x","api_key":"k"}`, "plain.json": `{"base_url":"x"}`,
		"outside.txt": "secret\n",
	}
	for rel, text := range files {
		writeTestFile(t, filepath.Join(root, rel), []byte(text))
	}
	writeTestFile(t, filepath.Join(root, "big.bin"), make([]byte, 2<<20))
	writeTestFile(t, filepath.Join(root, "edge.bin"), make([]byte, MaxInheritFileBytes))
	for i := range MaxInheritFiles + 1 {
		writeTestFile(t, filepath.Join(root, "many", fmt.Sprintf("f%03d.txt", i)), []byte("x"))
	}
	must(t, os.Symlink(filepath.Join(root, "notes.md"), filepath.Join(root, "link.md")))
	must(t, os.Symlink(filepath.Join(root, "sub"), filepath.Join(root, "linkdir")))
	return root
}

func writeTestFile(t *testing.T, path string, b []byte) {
	t.Helper()
	must(t, os.MkdirAll(filepath.Dir(path), 0o755))
	must(t, os.WriteFile(path, b, 0o644))
}

func manyFiles(n int) []string {
	var out []string
	for i := range n {
		out = append(out, fmt.Sprintf("many/f%03d.txt", i))
	}
	return out
}

func TestInheritFileRules(t *testing.T) {
	root := inheritParent(t)
	tests := []struct {
		name    string
		rels    []string
		want    string // substring of the refusal; "" accepts
		nFiles  int
		nameErr string // the path the refusal must name
	}{
		{"two files", []string{"notes.md", "sub/data.csv"}, "", 2, ""},
		{"a duplicate counts once", []string{"notes.md", "./notes.md", "sub//../notes.md"}, "leaves", 0, "sub//../notes.md"},
		{"the same path twice", []string{"notes.md", "notes.md"}, "", 1, ""},
		{"exactly 1 MiB", []string{"edge.bin"}, "", 1, ""},
		{"exactly 128 files", manyFiles(MaxInheritFiles), "", MaxInheritFiles, ""},
		{"129 files", manyFiles(MaxInheritFiles + 1), "more than 128", 0, ""},
		{"a symlink", []string{"link.md"}, "is a symlink", 0, "link.md"},
		{"through a symlinked folder", []string{"linkdir/data.csv"}, "is a symlink", 0, "linkdir"},
		{"..", []string{"../outside.txt"}, "leaves the parent's research/", 0, "../outside.txt"},
		{"an absolute path", []string{filepath.Join(root, "notes.md")}, "is absolute", 0, ""},
		{"a hidden file", []string{".env"}, "is hidden", 0, ".env"},
		{"in a hidden folder", []string{".git/config"}, "is hidden", 0, ".git/config"},
		{"2 MiB", []string{"big.bin"}, "larger than", 0, "big.bin"},
		{"a connection file name", []string{"provider.json"}, "named like a connection file", 0, "provider.json"},
		{"a connection file by content", []string{"conn.json"}, "api connection file", 0, "conn.json"},
		{"json without api_key", []string{"plain.json"}, "", 1, ""},
		{"a folder", []string{"sub"}, "not a regular file", 0, "sub"},
		{"missing", []string{"nope.txt"}, "no such file", 0, "nope.txt"},
		{"empty", []string{" "}, "an empty path", 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files, err := readInherited(root, tt.rels)
			if tt.want == "" {
				if err != nil || len(files) != tt.nFiles {
					t.Fatalf("readInherited(%v) = %d files, %v; want %d files", tt.rels, len(files), err, tt.nFiles)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), tt.nameErr) {
				t.Fatalf("readInherited(%v) = %v; want an error with %q naming %q", tt.rels, err, tt.want, tt.nameErr)
			}
			if fe, ok := AsFieldError(err); !ok || fe.Field != FieldInheritFile {
				t.Errorf("error %v is not a FieldError of %q", err, FieldInheritFile)
			}
		})
	}
}

func TestInheritedFilesHashed(t *testing.T) {
	root := inheritParent(t)
	files, err := readInherited(root, []string{"sub/data.csv"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := files[0].sha, sha256Hex([]byte("n,v\n1,1\n")); files[0].rel != "sub/data.csv" || got != want {
		t.Errorf("inherited %s sha %s, want sub/data.csv %s", files[0].rel, got, want)
	}
}

func TestResearchRootSymlinkRefused(t *testing.T) {
	root := inheritParent(t)
	link := filepath.Join(t.TempDir(), "research")
	must(t, os.Symlink(root, link))
	if _, err := readInherited(link, []string{"notes.md"}); err == nil || !strings.Contains(err.Error(), "symlink") {
		t.Errorf("a research/ that is a symlink: %v, want refused", err)
	}
}
