package hist

// The only file that calls into C: libhistc, the C ABI of the Rust library
// (../c/include/hist.h). The static library is linked explicitly: build with
//
//	CGO_LDFLAGS="/path/to/target/debug/libhistc.a" go test ./...
//
// (the path of the libhistc.a that `cargo build -p hist-c` made; see README.md).

/*
#cgo CFLAGS: -I${SRCDIR}/../c/include
#cgo LDFLAGS: -lpthread -ldl -lm
#include <stdlib.h>
#include "hist.h"
*/
import "C"

import "unsafe"

// cString is a C copy of s, or NULL when !present; free it with freeC.
func cString(s string, present bool) *C.char {
	if !present {
		return nil
	}
	return C.CString(s)
}

func freeC(ps ...*C.char) {
	for _, p := range ps {
		if p != nil {
			C.free(unsafe.Pointer(p))
		}
	}
}

// take turns a string the library returned into a Go string and frees it.
func take(p *C.char) string {
	if p == nil {
		return ""
	}
	s := C.GoString(p)
	C.hist_free(p)
	return s
}

// result is the answer of a call that returns a code, *out and *err.
func result(code C.int, out, err *C.char) (string, error) {
	text, message := take(out), take(err)
	if code != 0 {
		return "", &Error{Code: Code(code), Message: message}
	}
	return text, nil
}

type handle = *C.hist_repo

func openHandle(dir string, options *string, init bool) (handle, error) {
	cdir := C.CString(dir)
	var copts *C.char
	if options != nil {
		copts = C.CString(*options)
	}
	defer freeC(cdir, copts)
	var cerr *C.char
	var h handle
	switch {
	case init:
		h = C.hist_init(cdir, &cerr)
	case options != nil:
		h = C.hist_open_with(cdir, copts, &cerr)
	default:
		h = C.hist_open(cdir, &cerr)
	}
	if h == nil {
		message := take(cerr)
		return nil, &Error{Code: codeOfOpen(message), Message: message}
	}
	return h, nil
}

func closeHandle(h handle) { C.hist_close(h) }

// writeArgs are the arguments every write takes.
type writeArgs struct {
	actor, reason, at *C.char
}

func newWriteArgs(o WriteOptions) writeArgs {
	at := ""
	if !o.At.IsZero() {
		at = "@" + o.At.UTC().Format(timeLayout)
	}
	return writeArgs{
		actor:  cString(o.Actor, true),
		reason: cString(o.Reason, o.Reason != ""),
		at:     cString(at, at != ""),
	}
}

func (w writeArgs) free() { freeC(w.actor, w.reason, w.at) }

func callSet(h handle, o WriteOptions, key, path string, value []byte) (string, error) {
	w := newWriteArgs(o)
	ckey, cpath, cvalue := C.CString(key), C.CString(path), C.CString(string(value))
	defer func() { w.free(); freeC(ckey, cpath, cvalue) }()
	var out, err *C.char
	code := C.hist_set(h, w.actor, w.reason, w.at, ckey, cpath, cvalue, &out, &err)
	return result(code, out, err)
}

func callRemove(h handle, o WriteOptions, key, path string) (string, error) {
	w := newWriteArgs(o)
	ckey, cpath := C.CString(key), C.CString(path)
	defer func() { w.free(); freeC(ckey, cpath) }()
	var out, err *C.char
	code := C.hist_remove(h, w.actor, w.reason, w.at, ckey, cpath, &out, &err)
	return result(code, out, err)
}

func callIngest(h handle, o WriteOptions, key string, doc []byte) (string, error) {
	w := newWriteArgs(o)
	ckey, cdoc := C.CString(key), C.CString(string(doc))
	defer func() { w.free(); freeC(ckey, cdoc) }()
	var out, err *C.char
	code := C.hist_ingest(h, w.actor, w.reason, w.at, ckey, cdoc, &out, &err)
	return result(code, out, err)
}

func callShow(h handle, key string, when string) (string, error) {
	ckey, cwhen := C.CString(key), cString(when, when != "")
	defer freeC(ckey, cwhen)
	var out, err *C.char
	return result(C.hist_show(h, ckey, cwhen, &out, &err), out, err)
}

func callHistory(h handle, key, path string) (string, error) {
	ckey, cpath := C.CString(key), C.CString(path)
	defer freeC(ckey, cpath)
	var out, err *C.char
	return result(C.hist_history(h, ckey, cpath, &out, &err), out, err)
}

func callBlame(h handle, key string, when string) (string, error) {
	ckey, cwhen := C.CString(key), cString(when, when != "")
	defer freeC(ckey, cwhen)
	var out, err *C.char
	return result(C.hist_blame(h, ckey, cwhen, &out, &err), out, err)
}

func callSQL(h handle, query string) (string, error) {
	cquery := C.CString(query)
	defer freeC(cquery)
	var out, err *C.char
	return result(C.hist_sql(h, cquery, &out, &err), out, err)
}
