/* The C ABI from C: every function, its codes and messages, and that every string the
 * library returns is freed (tests/c_abi.rs builds this with cc against libhistc.a and runs it,
 * under AddressSanitizer's leak checker where the compiler has it).
 *
 * Usage: test_hist DIR   (DIR: an empty directory for the repository) */
#include "hist.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int passed, failed;

#define CHECK(cond, ...)                                   \
  do {                                                     \
    if (cond) {                                            \
      passed++;                                            \
    } else {                                               \
      failed++;                                            \
      fprintf(stderr, "FAILED line %d: %s: ", __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                        \
      fprintf(stderr, "\n");                               \
    }                                                      \
  } while (0)

static int contains(const char *s, const char *part) {
  return s != NULL && strstr(s, part) != NULL;
}

static int lines(const char *s) {
  int n = 0;
  for (; s != NULL && *s; s++) n += *s == '\n';
  return n;
}

/* Frees *s and sets it to NULL. */
static void release(char **s) {
  hist_free(*s);
  *s = NULL;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: test_hist DIR\n");
    return 2;
  }
  const char *dir = argv[1];
  char *out = NULL, *err = NULL;
  int rc;

  /* Open before init: no repository there. */
  hist_repo *none = hist_open(dir, &err);
  CHECK(none == NULL && contains(err, "not a hist repository"), "%s", err ? err : "(null)");
  release(&err);
  none = hist_open(NULL, &err);
  CHECK(none == NULL && contains(err, "dir is required"), "%s", err ? err : "(null)");
  release(&err);

  hist_repo *r = hist_init(dir, &err);
  CHECK(r != NULL && err == NULL, "init: %s", err ? err : "(null)");
  release(&err);
  hist_repo *again = hist_init(dir, &err);
  CHECK(again == NULL && contains(err, "already exists"), "%s", err ? err : "(null)");
  release(&err);

  /* set: a change record per change, as `hist set --json`. */
  rc = hist_set(r, "user:maria", "upgrade", NULL, "customer/1", "/plan", "\"pro\"", &out, &err);
  CHECK(rc == 0 && err == NULL, "set: %d %s", rc, err ? err : "");
  /* The document did not exist: one add of the whole document. */
  CHECK(contains(out, "\"actor\":\"user:maria\"") && contains(out, "\"op\":\"add\"") &&
            contains(out, "\"path\":\"\"") && contains(out, "\"new\":{\"plan\":\"pro\"}") &&
            contains(out, "\"reason\":\"upgrade\"") &&
            contains(out, "\"tx\":1") && lines(out) == 1,
        "set out: %s", out ? out : "(null)");
  release(&out);
  /* The same value again: nothing recorded, an empty answer. */
  rc = hist_set(r, "user:maria", NULL, NULL, "customer/1", "/plan", "\"pro\"", &out, &err);
  CHECK(rc == 0 && out != NULL && out[0] == '\0', "unchanged set: %d %s", rc, out ? out : "(null)");
  release(&out);
  /* out may be NULL when the answer is not wanted. */
  rc = hist_set(r, "user:maria", NULL, NULL, "customer/1", "/seats", "12345678901234567890123", NULL, &err);
  CHECK(rc == 0 && err == NULL, "set without out: %d %s", rc, err ? err : "");

  /* The actor: required, kind:name, refused before anything is written (usage, 2). */
  rc = hist_set(r, NULL, NULL, NULL, "customer/1", "/plan", "\"free\"", &out, &err);
  CHECK(rc == 2 && out == NULL && contains(err, "actor"), "no actor: %d %s", rc, err ? err : "");
  release(&err);
  rc = hist_set(r, "maria", NULL, NULL, "customer/1", "/plan", "\"free\"", &out, &err);
  CHECK(rc == 2 && contains(err, "maria"), "bad actor: %d %s", rc, err ? err : "");
  release(&err);
  rc = hist_ingest(r, "", NULL, NULL, "customer/1", "{}", &out, &err);
  CHECK(rc == 2, "empty actor on ingest: %d %s", rc, err ? err : "");
  release(&err);
  rc = hist_remove(r, NULL, NULL, NULL, "customer/1", "", &out, &err);
  CHECK(rc == 2, "no actor on remove: %d %s", rc, err ? err : "");
  release(&err);

  /* Bad JSON: a failure (1), with where it went wrong. */
  rc = hist_set(r, "user:maria", NULL, NULL, "customer/1", "/plan", "pro", &out, &err);
  CHECK(rc == 1 && contains(err, "not valid JSON"), "bad value: %d %s", rc, err ? err : "");
  release(&err);
  rc = hist_ingest(r, "poller:acme", NULL, NULL, "feed/acme", "{\"items\": [1,", &out, &err);
  CHECK(rc == 1 && contains(err, "feed/acme") && contains(err, "not valid JSON"), "bad snapshot: %d %s",
        rc, err ? err : "");
  release(&err);

  /* Usage errors: NULL where a value is required, a bad key, path or WHEN, no handle. */
  rc = hist_set(r, "user:maria", NULL, NULL, NULL, "/plan", "1", &out, &err);
  CHECK(rc == 2 && contains(err, "key is required"), "NULL key: %d %s", rc, err ? err : "");
  release(&err);
  rc = hist_set(r, "user:maria", NULL, NULL, "customer/1", NULL, "1", &out, &err);
  CHECK(rc == 2 && contains(err, "path is required"), "NULL path: %d %s", rc, err ? err : "");
  release(&err);
  rc = hist_set(r, "user:maria", NULL, NULL, "customer/1", "/plan", NULL, &out, &err);
  CHECK(rc == 2 && contains(err, "json is required"), "NULL json: %d %s", rc, err ? err : "");
  release(&err);
  rc = hist_set(r, "user:maria", NULL, NULL, "", "/plan", "1", &out, &err);
  CHECK(rc == 2, "empty key: %d %s", rc, err ? err : "");
  release(&err);
  rc = hist_set(r, "user:maria", NULL, NULL, "customer/1", "plan", "1", &out, &err);
  CHECK(rc == 2, "bad path: %d %s", rc, err ? err : "");
  release(&err);
  rc = hist_set(r, "user:maria", NULL, "@tx:1", "customer/1", "/plan", "1", &out, &err);
  CHECK(rc == 2 && contains(err, "not @tx"), "at @tx: %d %s", rc, err ? err : "");
  release(&err);
  rc = hist_set(r, "user:maria", NULL, "@2001-01-01", "customer/1", "/plan", "1", &out, &err);
  CHECK(rc == 1 && contains(err, "append-only"), "at before newest: %d %s", rc, err ? err : "");
  release(&err);
  rc = hist_show(NULL, "customer/1", NULL, &out, &err);
  CHECK(rc == 2 && contains(err, "handle is required"), "NULL handle: %d %s", rc, err ? err : "");
  release(&err);
  rc = hist_show(r, "customer/1", "last tuesday-ish", &out, &err);
  CHECK(rc == 2 && contains(err, "as a time"), "bad when: %d %s", rc, err ? err : "");
  release(&err);
  /* err may be NULL: the code still says what happened. */
  rc = hist_show(r, NULL, NULL, &out, NULL);
  CHECK(rc == 2 && out == NULL, "NULL key, NULL err: %d", rc);

  /* ingest: changes, then unchanged. */
  const char *feed1 = "{\"items\": [{\"id\": 1, \"price\": 10}], \"name\": \"acme\"}";
  const char *feed2 = "{\"items\": [{\"id\": 1, \"price\": 11}], \"name\": \"acme\"}";
  rc = hist_ingest(r, "poller:acme", NULL, NULL, "feed/acme", feed1, &out, &err);
  CHECK(rc == 0 && lines(out) == 1 && contains(out, "\"op\":\"add\""), "ingest: %d %s %s", rc,
        out ? out : "", err ? err : "");
  release(&out);
  rc = hist_ingest(r, "poller:acme", "poll", NULL, "feed/acme", feed2, &out, &err);
  /* No array rule: the array is one value, replaced whole. */
  CHECK(rc == 0 && lines(out) == 1 && contains(out, "\"path\":\"/items\"") &&
            contains(out, "\"new\":[{\"id\":1,\"price\":11}]"),
        "ingest 2: %d %s", rc, out ? out : "");
  release(&out);
  rc = hist_ingest(r, "poller:acme", NULL, NULL, "feed/acme", feed2, &out, &err);
  CHECK(rc == 0 && out != NULL && out[0] == '\0', "unchanged ingest: %d %s", rc, out ? out : "(null)");
  release(&out);

  /* show: now, as of a tx, exact big integers; an absent key is a failure (1). */
  rc = hist_show(r, "customer/1", NULL, &out, &err);
  CHECK(rc == 0 && out != NULL && strcmp(out, "{\"plan\":\"pro\",\"seats\":12345678901234567890123}") == 0,
        "show: %d %s", rc, out ? out : err);
  release(&out);
  rc = hist_show(r, "customer/1", "@tx:1", &out, &err);
  CHECK(rc == 0 && out != NULL && strcmp(out, "{\"plan\":\"pro\"}") == 0, "show @tx:1: %d %s", rc,
        out ? out : err);
  release(&out);
  rc = hist_show(r, "customer/404", NULL, &out, &err);
  CHECK(rc == 1 && out == NULL && err != NULL && strcmp(err, "customer/404 does not exist now") == 0,
        "absent: %d %s", rc, err ? err : "");
  release(&err);
  rc = hist_show(r, "customer/1", "@2001-01-01", &out, &err);
  CHECK(rc == 1 && contains(err, "does not exist at @2001-01-01"), "absent then: %d %s", rc, err ? err : "");
  release(&err);

  /* remove, then history of the field: add, remove. */
  rc = hist_remove(r, "user:sam", "downgrade", NULL, "customer/1", "/plan", &out, &err);
  CHECK(rc == 0 && contains(out, "\"op\":\"remove\"") && contains(out, "\"old\":\"pro\""), "remove: %d %s",
        rc, out ? out : err);
  release(&out);
  rc = hist_history(r, "customer/1", "/plan", &out, &err);
  CHECK(rc == 0 && lines(out) == 2 && contains(out, "\"change_path\":\"/plan\"") &&
            contains(out, "\"actor\":\"user:sam\""),
        "history: %d %s", rc, out ? out : err);
  release(&out);
  rc = hist_history(r, "customer/1", NULL, &out, &err);
  CHECK(rc == 2, "history NULL path: %d", rc);
  release(&err);

  /* blame: a line per leaf; absent is a failure. */
  rc = hist_blame(r, "feed/acme", NULL, &out, &err);
  CHECK(rc == 0 && lines(out) == 2 && contains(out, "\"actor\":\"poller:acme\"") &&
            contains(out, "\"reason\":\"poll\""),
        "blame: %d %s", rc, out ? out : err);
  release(&out);
  rc = hist_blame(r, "feed/none", NULL, &out, &err);
  CHECK(rc == 1 && contains(err, "does not exist"), "blame absent: %d %s", rc, err ? err : "");
  release(&err);

  /* sql: rows as NDJSON; a write is refused (1). */
  rc = hist_sql(r, "SELECT key, count(*) AS n FROM changes GROUP BY key ORDER BY key", &out, &err);
  CHECK(rc == 0 && out != NULL &&
            strcmp(out, "{\"key\":\"customer/1\",\"n\":3}\n{\"key\":\"feed/acme\",\"n\":2}\n") == 0,
        "sql: %d %s", rc, out ? out : err);
  release(&out);
  rc = hist_sql(r, "DROP TABLE transactions", &out, &err);
  CHECK(rc == 1 && out == NULL && contains(err, "read-only"), "sql write: %d %s", rc, err ? err : "");
  release(&err);
  rc = hist_sql(r, "SELEC nothing", &out, &err);
  CHECK(rc == 1 && contains(err, "failed"), "sql syntax: %d %s", rc, err ? err : "");
  release(&err);
  rc = hist_sql(r, NULL, &out, &err);
  CHECK(rc == 2, "sql NULL: %d", rc);
  release(&err);

  /* A second handle (hist_open from a subdirectory: the nearest .hist above) sees it all. */
  hist_close(r);
  char sub[4096];
  snprintf(sub, sizeof sub, "%s/.hist/objects", dir);
  r = hist_open(sub, &err);
  CHECK(r != NULL, "open from below: %s", err ? err : "");
  release(&err);
  rc = hist_show(r, "customer/1", NULL, &out, &err);
  CHECK(rc == 0 && strcmp(out, "{\"seats\":12345678901234567890123}") == 0, "reopened: %s", out ? out : err);
  release(&out);
  hist_close(r);

  /* Options. */
  r = hist_open_with(dir, "{}", &err);
  CHECK(r != NULL, "open_with {}: %s", err ? err : "");
  hist_close(r);
  r = hist_open_with(dir, NULL, &err);
  CHECK(r != NULL, "open_with NULL: %s", err ? err : "");
  hist_close(r);
  r = hist_open_with(dir, "{\"colour\": 1}", &err);
  CHECK(r == NULL && contains(err, "unknown option"), "unknown option: %s", err ? err : "");
  release(&err);
  r = hist_open_with(dir, "[", &err);
  CHECK(r == NULL && contains(err, "not valid JSON"), "bad options: %s", err ? err : "");
  release(&err);

  /* NULLs are allowed where nothing is owned. */
  hist_close(NULL);
  hist_free(NULL);

  printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
