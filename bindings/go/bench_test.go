package hist_test

import (
	"os"
	"testing"

	"example.com/hist"
)

// BenchmarkShowTx is the Go side of benches/bindings.sh: an as-of read of a small document
// through one open Repo, in the repository HIST_BENCH_REPO (made by the script).
func BenchmarkShowTx(b *testing.B) {
	dir := os.Getenv("HIST_BENCH_REPO")
	if dir == "" {
		b.Skip("HIST_BENCH_REPO is not set: run benches/bindings.sh")
	}
	repo, err := hist.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer repo.Close()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := repo.ShowTx("customer/1", 100); err != nil {
			b.Fatal(err)
		}
	}
}
