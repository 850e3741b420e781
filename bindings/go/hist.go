// Package hist embeds hist, the history-first JSON document store, in a Go program: every
// write names who made it and is kept with its old value, so any document can be read as
// of any moment, any field's history listed and any field blamed.
//
// It calls the Rust library through its C ABI (libhistc, linked statically with cgo; see
// README.md for the build). Values are JSON text (json.RawMessage): numbers come back
// exactly as stored, digit for digit, whatever their size.
//
// A Repo is safe for use by many goroutines: calls on one Repo take turns (the library
// serializes them), so a program that needs reads in parallel opens several Repos on the
// same directory. A Repo sees what other processes commit (rules, renames, forgets) before
// each call, so a service may keep one open for days.
package hist

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"sync"
	"time"
)

// Code classifies an error as the hist command's exit status does.
type Code int

const (
	// Failure: what was asked could not be done (invalid JSON, an absent document, a
	// refused query, a damaged repository...).
	Failure Code = 1
	// Usage: it was asked wrongly (an invalid actor, key, path or time; a missing argument).
	Usage Code = 2
	// Internal: a bug in hist.
	Internal Code = 255
)

// Error is an error from hist: its code and its message.
type Error struct {
	Code    Code
	Message string
}

func (e *Error) Error() string { return "hist: " + e.Message }

// ErrClosed is returned by calls on a Repo after Close.
var ErrClosed = &Error{Code: Usage, Message: "the repository was closed"}

// CodeOf is the code of err when it is (or wraps) an *Error, else 0.
func CodeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return 0
}

func codeOfOpen(message string) Code {
	if len(message) >= 14 && message[:14] == "internal error" {
		return Internal
	}
	return Failure
}

// Repo is an open repository.
type Repo struct {
	mu sync.RWMutex // held for reading by calls, for writing by Close
	h  handle
}

// Open opens the repository whose .hist is in dir or the nearest directory above it.
func Open(dir string) (*Repo, error) {
	h, err := openHandle(dir, nil, false)
	if err != nil {
		return nil, err
	}
	return &Repo{h: h}, nil
}

// Options are the options of OpenWith.
type Options struct {
	// Identity is a file holding the age identity that unlocks keys.db, when it is kept
	// outside the repository (hist init --identity). Without it (or Passphrase) every
	// read and write works but those of personal values.
	Identity string `json:"identity,omitempty"`
	// Passphrase unlocks keys.db when it is protected by one (hist init --passphrase).
	Passphrase string `json:"passphrase,omitempty"`
}

// OpenWith is Open with options.
func OpenWith(dir string, options Options) (*Repo, error) {
	text, err := json.Marshal(options)
	if err != nil {
		return nil, err
	}
	s := string(text)
	h, err := openHandle(dir, &s, false)
	if err != nil {
		return nil, err
	}
	return &Repo{h: h}, nil
}

// Init creates a repository (.hist) in dir, creating dir when missing, and opens it.
func Init(dir string) (*Repo, error) {
	h, err := openHandle(dir, nil, true)
	if err != nil {
		return nil, err
	}
	return &Repo{h: h}, nil
}

// Close closes the repository. It waits for calls in progress; later calls return
// ErrClosed. Closing twice is harmless.
func (r *Repo) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.h != nil {
		closeHandle(r.h)
		r.h = nil
	}
	return nil
}

// call runs f on the open handle.
func (r *Repo) call(f func(handle) (string, error)) (string, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.h == nil {
		return "", ErrClosed
	}
	return f(r.h)
}

// WriteOptions say who makes a write, why, and (importing recorded history) when.
type WriteOptions struct {
	// Actor is required: kind:name, such as user:maria or job:nightly-reprice.
	Actor string
	// Reason is optional.
	Reason string
	// At records the write at this time instead of now (importing recorded history); it is
	// refused if it precedes the newest transaction. The zero time means now.
	At time.Time
}

// errNoActor is returned, before anything is called, by a write without an actor.
func errNoActor() error {
	return &Error{Code: Usage, Message: "a write needs an actor, as kind:name (user:maria, job:nightly): set WriteOptions.Actor"}
}

// Change is one change a write recorded (and what History and the log list).
type Change struct {
	Tx     int64     `json:"tx"`
	At     time.Time `json:"at"`
	Actor  string    `json:"actor"`
	Reason string    `json:"reason"` // "" when none was given
	Key    string    `json:"key"`
	Path   string    `json:"path"` // "" is the whole document
	Op     string    `json:"op"`   // add, remove, replace or move
	// Old and New are JSON; nil when absent (Old for an add, New for a remove).
	Old json.RawMessage `json:"old,omitempty"`
	New json.RawMessage `json:"new,omitempty"`
}

// HistoryEntry is one change that altered the value at a path, with Old and New projected
// onto that path.
type HistoryEntry struct {
	Change
	// ChangePath is where the change was recorded: the path, an ancestor or a descendant.
	ChangePath string `json:"change_path"`
	// Compacted is true when the entry stands for several changes compacted by gc.
	Compacted bool `json:"compacted"`
	// From and To are set for a recorded rename (Op "move").
	From string `json:"from"`
	To   string `json:"to"`
}

// BlameLine is one leaf of a document with the change that last set it.
type BlameLine struct {
	Key   string          `json:"key"`
	Path  string          `json:"path"`
	Value json.RawMessage `json:"value"`
	// Tx, At, Actor, Reason, Op and ChangePath describe the setting change; Tx is 0 when
	// the log does not explain the leaf (hist fsck reports that).
	Tx         int64     `json:"tx"`
	At         time.Time `json:"at"`
	Actor      string    `json:"actor"`
	Reason     string    `json:"reason"`
	Op         string    `json:"op"`
	ChangePath string    `json:"change_path"`
	Compacted  bool      `json:"compacted"`
}

// Row is one row of an SQL answer: a JSON value per column.
type Row map[string]json.RawMessage

// Set writes value (JSON) at path of the document key ("" for the whole document), creating
// missing parents, and returns the changes recorded (none when the value was already there).
func (r *Repo) Set(key, path string, value json.RawMessage, o WriteOptions) ([]Change, error) {
	if o.Actor == "" {
		return nil, errNoActor()
	}
	out, err := r.call(func(h handle) (string, error) { return callSet(h, o, key, path, value) })
	if err != nil {
		return nil, err
	}
	return decodeLines[Change](out)
}

// Remove removes the value at path of the document key ("" removes the whole document).
func (r *Repo) Remove(key, path string, o WriteOptions) ([]Change, error) {
	if o.Actor == "" {
		return nil, errNoActor()
	}
	out, err := r.call(func(h handle) (string, error) { return callRemove(h, o, key, path) })
	if err != nil {
		return nil, err
	}
	return decodeLines[Change](out)
}

// Ingest records doc (JSON) as a whole snapshot of the document key: only its difference from
// the last snapshot is stored. It returns the changes, none when the snapshot is unchanged.
func (r *Repo) Ingest(key string, doc []byte, o WriteOptions) ([]Change, error) {
	if o.Actor == "" {
		return nil, errNoActor()
	}
	out, err := r.call(func(h handle) (string, error) { return callIngest(h, o, key, doc) })
	if err != nil {
		return nil, err
	}
	return decodeLines[Change](out)
}

// Show returns the document key now, as canonical JSON. An absent document is an error
// (Code Failure).
func (r *Repo) Show(key string) (json.RawMessage, error) {
	return r.show(key, "")
}

// ShowAt returns the document key as it was at t (every transaction recorded at or before t).
func (r *Repo) ShowAt(key string, t time.Time) (json.RawMessage, error) {
	return r.show(key, whenAt(t))
}

// ShowTx returns the document key as it was right after transaction tx.
func (r *Repo) ShowTx(key string, tx int64) (json.RawMessage, error) {
	return r.show(key, "@tx:"+strconv.FormatInt(tx, 10))
}

func (r *Repo) show(key, when string) (json.RawMessage, error) {
	out, err := r.call(func(h handle) (string, error) { return callShow(h, key, when) })
	if err != nil {
		return nil, err
	}
	return json.RawMessage(out), nil
}

// History lists every change that altered the value at path of key, oldest first, following
// renames back.
func (r *Repo) History(key, path string) ([]HistoryEntry, error) {
	out, err := r.call(func(h handle) (string, error) { return callHistory(h, key, path) })
	if err != nil {
		return nil, err
	}
	return decodeLines[HistoryEntry](out)
}

// Blame lists every leaf of the document key now with the change that last set it.
func (r *Repo) Blame(key string) ([]BlameLine, error) {
	return r.blame(key, "")
}

// BlameAt is Blame of the document as it was at t.
func (r *Repo) BlameAt(key string, t time.Time) ([]BlameLine, error) {
	return r.blame(key, whenAt(t))
}

func (r *Repo) blame(key, when string) ([]BlameLine, error) {
	out, err := r.call(func(h handle) (string, error) { return callBlame(h, key, when) })
	if err != nil {
		return nil, err
	}
	return decodeLines[BlameLine](out)
}

// SQL runs a read-only query over the views changes, transactions, current and checks. A
// query that would write is refused (Code Failure).
func (r *Repo) SQL(query string) ([]Row, error) {
	out, err := r.call(func(h handle) (string, error) { return callSQL(h, query) })
	if err != nil {
		return nil, err
	}
	return decodeLines[Row](out)
}

// timeLayout is RFC 3339 with microseconds, hist's precision.
const timeLayout = "2006-01-02T15:04:05.999999Z07:00"

func whenAt(t time.Time) string { return "@" + t.UTC().Format(timeLayout) }

// decodeLines decodes NDJSON, one T per line.
func decodeLines[T any](text string) ([]T, error) {
	out := []T{}
	for _, line := range bytes.Split([]byte(text), []byte{'\n'}) {
		if len(line) == 0 {
			continue
		}
		var v T
		if err := json.Unmarshal(line, &v); err != nil {
			return nil, &Error{Code: Internal, Message: "cannot read the library's answer: " + err.Error()}
		}
		out = append(out, v)
	}
	return out, nil
}
