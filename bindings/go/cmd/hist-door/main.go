// Command hist-door is the Go package as a command, for tests that write and read one
// repository through several doors (bindings/python/tests/test_doors.py):
//
//	hist-door DIR set KEY PATH JSON ACTOR REASON
//	hist-door DIR ingest KEY JSON ACTOR REASON
//	hist-door DIR show KEY               the document, canonical JSON
//	hist-door DIR history KEY PATH       NDJSON of the entries as the package decoded them
package main

import (
	"encoding/json"
	"fmt"
	"os"

	"example.com/hist"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "hist-door:", err)
		os.Exit(int(hist.CodeOf(err)) | 1)
	}
}

func run(args []string) error {
	if len(args) < 3 {
		return fmt.Errorf("usage: hist-door DIR set|ingest|show|history KEY ...")
	}
	repo, err := hist.Open(args[0])
	if err != nil {
		return err
	}
	defer repo.Close()
	cmd, key, rest := args[1], args[2], args[3:]
	switch {
	case cmd == "set" && len(rest) == 4:
		_, err = repo.Set(key, rest[0], json.RawMessage(rest[1]), hist.WriteOptions{Actor: rest[2], Reason: rest[3]})
		return err
	case cmd == "ingest" && len(rest) == 3:
		_, err = repo.Ingest(key, []byte(rest[0]), hist.WriteOptions{Actor: rest[1], Reason: rest[2]})
		return err
	case cmd == "show" && len(rest) == 0:
		doc, err := repo.Show(key)
		if err == nil {
			_, err = os.Stdout.Write(doc)
		}
		return err
	case cmd == "history" && len(rest) == 1:
		entries, err := repo.History(key, rest[0])
		if err != nil {
			return err
		}
		out := json.NewEncoder(os.Stdout)
		out.SetEscapeHTML(false)
		for _, e := range entries {
			if err := out.Encode(e); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("unknown command or wrong arguments: %q", args[1:])
}
