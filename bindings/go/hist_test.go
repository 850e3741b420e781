package hist_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"example.com/hist"
)

func initRepo(t *testing.T) (*hist.Repo, string) {
	t.Helper()
	dir := t.TempDir()
	repo, err := hist.Init(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { repo.Close() })
	return repo, dir
}

var maria = hist.WriteOptions{Actor: "user:maria", Reason: "upgrade"}

func TestWritesAndReads(t *testing.T) {
	repo, _ := initRepo(t)
	changes, err := repo.Set("customer/1", "/plan", json.RawMessage(`"pro"`), maria)
	if err != nil {
		t.Fatal(err)
	}
	if len(changes) != 1 {
		t.Fatalf("changes: %+v", changes)
	}
	c := changes[0]
	// The document did not exist: one add of the whole document.
	if c.Tx != 1 || c.Actor != "user:maria" || c.Reason != "upgrade" || c.Key != "customer/1" ||
		c.Path != "" || c.Op != "add" || c.Old != nil || string(c.New) != `{"plan":"pro"}` || c.At.IsZero() {
		t.Fatalf("change: %+v", c)
	}
	// The same value again: nothing recorded.
	if again, err := repo.Set("customer/1", "/plan", json.RawMessage(`"pro"`), maria); err != nil || len(again) != 0 {
		t.Fatalf("unchanged set: %v %v", again, err)
	}
	// Big integers come back digit for digit.
	big := json.RawMessage(`12345678901234567890123`)
	if _, err := repo.Set("customer/1", "/seats", big, hist.WriteOptions{Actor: "job:sync"}); err != nil {
		t.Fatal(err)
	}
	doc, err := repo.Show("customer/1")
	if err != nil || string(doc) != `{"plan":"pro","seats":12345678901234567890123}` {
		t.Fatalf("show: %s %v", doc, err)
	}
	then, err := repo.ShowTx("customer/1", 1)
	if err != nil || string(then) != `{"plan":"pro"}` {
		t.Fatalf("show tx 1: %s %v", then, err)
	}
	at, err := repo.ShowAt("customer/1", c.At)
	if err != nil || string(at) != `{"plan":"pro"}` {
		t.Fatalf("show at: %s %v", at, err)
	}
	if _, err := repo.ShowAt("customer/1", c.At.Add(-time.Second)); hist.CodeOf(err) != hist.Failure {
		t.Fatalf("show before the first write: %v", err)
	}
	removed, err := repo.Remove("customer/1", "/plan", hist.WriteOptions{Actor: "user:sam", Reason: "downgrade"})
	if err != nil || len(removed) != 1 || removed[0].Op != "remove" || string(removed[0].Old) != `"pro"` || removed[0].New != nil {
		t.Fatalf("remove: %+v %v", removed, err)
	}
	history, err := repo.History("customer/1", "/plan")
	if err != nil || len(history) != 2 {
		t.Fatalf("history: %+v %v", history, err)
	}
	if history[0].Op != "add" || history[1].Op != "remove" || history[1].Actor != "user:sam" ||
		history[1].ChangePath != "/plan" || history[1].Reason != "downgrade" {
		t.Fatalf("history: %+v", history)
	}
	blame, err := repo.Blame("customer/1")
	if err != nil || len(blame) != 1 || blame[0].Path != "/seats" || blame[0].Actor != "job:sync" ||
		string(blame[0].Value) != "12345678901234567890123" || blame[0].Tx != 2 {
		t.Fatalf("blame: %+v %v", blame, err)
	}
	old, err := repo.BlameAt("customer/1", c.At)
	if err != nil || len(old) != 1 || old[0].Path != "/plan" {
		t.Fatalf("blame at: %+v %v", old, err)
	}
	rows, err := repo.SQL("SELECT key, count(*) AS n FROM changes GROUP BY key")
	if err != nil || len(rows) != 1 || string(rows[0]["key"]) != `"customer/1"` || string(rows[0]["n"]) != "3" {
		t.Fatalf("sql: %+v %v", rows, err)
	}
}

func TestIngest(t *testing.T) {
	repo, _ := initRepo(t)
	poller := hist.WriteOptions{Actor: "poller:acme"}
	first, err := repo.Ingest("feed/acme", []byte(`{"items":[{"id":1,"price":10}]}`), poller)
	if err != nil || len(first) != 1 || first[0].Path != "" {
		t.Fatalf("first: %+v %v", first, err)
	}
	second, err := repo.Ingest("feed/acme", []byte(`{"items":[{"id":1,"price":11}]}`), poller)
	if err != nil || len(second) != 1 {
		t.Fatalf("second: %+v %v", second, err)
	}
	same, err := repo.Ingest("feed/acme", []byte(`{ "items" : [ {"price":11, "id":1} ] }`), poller)
	if err != nil || len(same) != 0 {
		t.Fatalf("unchanged: %+v %v", same, err)
	}
}

func TestErrors(t *testing.T) {
	repo, dir := initRepo(t)
	code := func(err error) hist.Code { return hist.CodeOf(err) }
	if _, err := repo.Set("k", "/a", json.RawMessage(`1`), hist.WriteOptions{}); code(err) != hist.Usage ||
		!strings.Contains(err.Error(), "actor") {
		t.Fatalf("no actor: %v", err)
	}
	if _, err := repo.Ingest("k", []byte(`{}`), hist.WriteOptions{Actor: "maria"}); code(err) != hist.Usage {
		t.Fatalf("bad actor: %v", err)
	}
	if _, err := repo.Set("k", "/a", json.RawMessage(`{`), maria); code(err) != hist.Failure ||
		!strings.Contains(err.Error(), "not valid JSON") {
		t.Fatalf("bad JSON: %v", err)
	}
	if _, err := repo.Set("k", "a", json.RawMessage(`1`), maria); code(err) != hist.Usage {
		t.Fatalf("bad path: %v", err)
	}
	_, err := repo.Show("customer/404")
	var e *hist.Error
	if !errors.As(err, &e) || e.Code != hist.Failure || e.Message != "customer/404 does not exist now" {
		t.Fatalf("absent: %#v", err)
	}
	if _, err := repo.SQL("DROP TABLE transactions"); code(err) != hist.Failure || !strings.Contains(err.Error(), "read-only") {
		t.Fatalf("sql write: %v", err)
	}
	if _, err := repo.Set("k", "/a", json.RawMessage(`1`), hist.WriteOptions{Actor: "user:x", At: time.Unix(0, 0)}); err != nil {
		t.Fatalf("first write at 1970: %v", err)
	}
	if _, err := hist.Open(filepath.Join(dir, "..", "no-such-dir")); code(err) != hist.Failure {
		t.Fatalf("open nowhere: %v", err)
	}
	if _, err := hist.Init(dir); code(err) != hist.Failure || !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("init twice: %v", err)
	}
	if _, err := hist.OpenWith(dir, hist.Options{Identity: "/nowhere"}); code(err) != hist.Failure {
		t.Fatalf("identity: %v", err)
	}
	other, err := hist.OpenWith(filepath.Join(dir, ".hist"), hist.Options{})
	if err != nil {
		t.Fatalf("open with no options, from below: %v", err)
	}
	if doc, err := other.Show("k"); err != nil || string(doc) != `{"a":1}` {
		t.Fatalf("second handle: %s %v", doc, err)
	}
	other.Close()
	other.Close()
	if _, err := other.Show("k"); err != hist.ErrClosed {
		t.Fatalf("after close: %v", err)
	}
	// A write without an actor is refused before the library is called: even on a closed
	// repository the answer is about the actor.
	if _, err := other.Set("k", "/a", json.RawMessage(`2`), hist.WriteOptions{}); !strings.Contains(err.Error(), "actor") {
		t.Fatalf("no actor, closed: %v", err)
	}
}

// Many goroutines write fields of one key through two handles (two SQLite connections)
// while others read: every write lands, none is lost, every read sees a whole document.
func TestConcurrentWritersAndReaders(t *testing.T) {
	repo, dir := initRepo(t)
	second, err := hist.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	const writers, writes = 8, 25
	var wg sync.WaitGroup
	errs := make(chan error, writers*writes+100)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			handle := repo
			if w%2 == 1 {
				handle = second
			}
			o := hist.WriteOptions{Actor: fmt.Sprintf("job:writer-%d", w)}
			for i := 0; i < writes; i++ {
				path := fmt.Sprintf("/w%d/n%d", w, i)
				if _, err := handle.Set("shared", path, json.RawMessage(fmt.Sprint(i)), o); err != nil {
					errs <- err
					return
				}
			}
		}(w)
	}
	stop := make(chan struct{})
	var readers sync.WaitGroup
	for r := 0; r < 4; r++ {
		readers.Add(1)
		go func(r int) {
			defer readers.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				doc, err := repo.Show("shared")
				if err != nil && hist.CodeOf(err) != hist.Failure { // absent before the first write
					errs <- err
					return
				}
				if err == nil && !json.Valid(doc) {
					errs <- fmt.Errorf("reader %d: invalid document %s", r, doc)
					return
				}
				if _, err := second.History("shared", "/w0"); err != nil {
					errs <- err
					return
				}
			}
		}(r)
	}
	wg.Wait()
	close(stop)
	readers.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	doc, err := repo.Show("shared")
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]map[string]int
	if err := json.Unmarshal(doc, &got); err != nil {
		t.Fatal(err)
	}
	for w := 0; w < writers; w++ {
		for i := 0; i < writes; i++ {
			if v, ok := got[fmt.Sprintf("w%d", w)][fmt.Sprintf("n%d", i)]; !ok || v != i {
				t.Fatalf("lost write w%d/n%d: %s", w, i, doc)
			}
		}
	}
	rows, err := repo.SQL("SELECT count(*) AS n, count(DISTINCT tx) AS txs FROM changes WHERE key = 'shared'")
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprint(writers * writes)
	if string(rows[0]["n"]) != want || string(rows[0]["txs"]) != want {
		t.Fatalf("changes: %v, want %s", rows, want)
	}
}
