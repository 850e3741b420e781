package hist_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"example.com/hist"
)

// README begin

// PlanHandler records who changes a customer's plan (PUT /plan?customer=4411 with the
// plan as JSON, the actor in X-Actor and the reason in X-Reason) and answers what the
// plan was on a day (GET /plan?customer=4411&on=2026-08-01).
func PlanHandler(repo *hist.Repo) http.HandlerFunc {
	return func(w http.ResponseWriter, req *http.Request) {
		key := "customer/" + req.URL.Query().Get("customer")
		if req.Method == http.MethodPut {
			plan, err := io.ReadAll(io.LimitReader(req.Body, 1<<20))
			if err == nil {
				_, err = repo.Set(key, "/plan", plan, hist.WriteOptions{
					Actor: req.Header.Get("X-Actor"), Reason: req.Header.Get("X-Reason")})
			}
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
			}
			return
		}
		day, err := time.Parse("2006-01-02", req.URL.Query().Get("on"))
		if err != nil {
			http.Error(w, "on=YYYY-MM-DD is required", http.StatusBadRequest)
			return
		}
		doc, err := repo.ShowAt(key, day.Add(24*time.Hour-time.Microsecond)) // the end of that day
		var found struct{ Plan json.RawMessage }
		if err != nil || json.Unmarshal(doc, &found) != nil || found.Plan == nil {
			http.Error(w, "no plan then", http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(found.Plan)
	}
}

// README end

func TestPlanHandler(t *testing.T) {
	repo, _ := initRepo(t)
	server := httptest.NewServer(PlanHandler(repo))
	defer server.Close()
	put := func(plan, actor string) int {
		req, _ := http.NewRequest(http.MethodPut, server.URL+"/plan?customer=4411", strings.NewReader(plan))
		req.Header.Set("X-Actor", actor)
		req.Header.Set("X-Reason", "sales call")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	get := func(on string) (int, string) {
		resp, err := http.Get(server.URL + "/plan?customer=4411&on=" + on)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, strings.TrimSpace(string(body))
	}
	if code := put(`"pro"`, "user:maria"); code != http.StatusOK {
		t.Fatalf("put: %d", code)
	}
	if code := put(`"team"`, ""); code != http.StatusBadRequest {
		t.Fatalf("put without an actor: %d", code)
	}
	today := time.Now().UTC().Format("2006-01-02")
	if code, body := get(today); code != http.StatusOK || body != `"pro"` {
		t.Fatalf("get today: %d %s", code, body)
	}
	if code, _ := get("2001-01-01"); code != http.StatusNotFound {
		t.Fatalf("get before: %d", code)
	}
	history, err := repo.History("customer/4411", "/plan")
	if err != nil || len(history) != 1 || history[0].Actor != "user:maria" || history[0].Reason != "sales call" {
		t.Fatalf("history: %+v %v", history, err)
	}
}

// The example in README.md is the code above, byte for byte: so it compiles and is tested.
func TestReadmeShowsTheHandler(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	source, err := os.ReadFile("example_http_test.go")
	if err != nil {
		t.Fatal(err)
	}
	begin, end := []byte("// README begin\n\n"), []byte("\n// README end")
	from, to := bytes.Index(source, begin), bytes.Index(source, end)
	if from < 0 || to < from {
		t.Fatal("the README markers are missing")
	}
	code := source[from+len(begin) : to]
	if !bytes.Contains(readme, append(append([]byte("```go\n"), code...), []byte("```")...)) {
		t.Fatalf("README.md does not show the handler of example_http_test.go as it is; paste it in a ```go block:\n%s", code)
	}
	if lines := bytes.Count(code, []byte("\n")); lines > 40 {
		t.Fatalf("the handler is %d lines long", lines)
	}
}
