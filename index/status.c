/* status.c - what an index holds (counts, languages, skipped files, the
 * dense leg) and the consistency check of `coderag status --check`. */
#include "store/store_int.h"
#include "chunk/lang/lang.h"
#include "dense/vec_int.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int64_t count_rows(IdxStore *st, const char *sql)
{
    sqlite3_stmt *s = NULL;
    int64_t n = -1;
    if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW)
        n = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    return n;
}

static int64_t file_size(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 ? (int64_t)sb.st_size : 0;
}

static int status__lang_cmp(const void *pa, const void *pb)
{
    const IdxLangCount *a = pa, *b = pb;
    if (a->files != b->files) return a->files > b->files ? -1 : 1;
    return strcmp(a->name, b->name);
}

/* One language's count in out (a new entry when there is room). */
static void status__count(IdxStatus *out, const char *name, int64_t n)
{
    size_t i = 0;
    while (i < out->n_langs && strcmp(out->langs[i].name, name) != 0)
        i++;
    if (i == out->n_langs) {
        if (i == IDX_STATUS_LANGS) return;
        snprintf(out->langs[i].name, sizeof out->langs[i].name, "%s", name);
        out->n_langs++;
    }
    out->langs[i].files += n;
}

/* Indexed files per language: as the index read them, a suffix rows share
 * (a header) as the project's pick says (IdxStore.lang_pick). */
static CrErr status__langs(IdxStore *st, IdxStatus *out, ErrInfo *e)
{
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(st->db, "SELECT path FROM files WHERE status = 'ok'", -1, &s, NULL) !=
        SQLITE_OK)
        return idx_store_err(st, e, "status");
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        const char *path = (const char *)sqlite3_column_text(s, 0);
        const IdxLang *l = idx_lang_for_file(&st->lang_pick, path);
        status__count(out, l ? l->name : "script", 1);
    }
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE) return idx_store_err(st, e, "status");
    qsort(out->langs, out->n_langs, sizeof out->langs[0], status__lang_cmp);
    return CR_OK;
}

/* A pass that committed files and has not finished (update.c's meta
 * "pass"), and whether its process still runs. */
CrErr idx_status_pass(IdxStore *st, IdxStatus *out, ErrInfo *e)
{
    char v[64];
    long long done = 0, total = 0;
    long pid = 0;
    if (idx_store_meta_get(st, "pass", v, sizeof v, e) == CR_EDB) return CR_EDB;
    if (sscanf(v, "%lld %lld %ld", &done, &total, &pid) != 3 || total <= 0) return CR_OK;
    out->pass_done = done;
    out->pass_total = total;
    if (pid > 0 && (kill((pid_t)pid, 0) == 0 || errno == EPERM)) out->pass_pid = (int)pid;
    return CR_OK;
}

/* The row counts of idx_status (files, skipped, chunks, edges, symbols)
 * and its pass fields; the rest zero. */
static CrErr status_counts(IdxStore *st, IdxStatus *out, ErrInfo *e)
{
    memset(out, 0, sizeof *out);
    out->files = count_rows(st, "SELECT count(*) FROM files WHERE status = 'ok'");
    out->skipped = count_rows(st, "SELECT count(*) FROM files WHERE status != 'ok'");
    out->chunks = count_rows(st, "SELECT count(*) FROM chunks");
    out->edges = count_rows(st, "SELECT count(*) FROM edges");
    out->symbols = count_rows(st, "SELECT count(*) FROM symbols");
    if (out->files < 0 || out->skipped < 0 || out->chunks < 0 || out->edges < 0 || out->symbols < 0)
        return idx_store_err(st, e, "status");
    return idx_status_pass(st, out, e);
}

int idx_status_empty(IdxStore *st, int64_t *skipped)
{
    *skipped = 0;
    int64_t any = count_rows(st, "SELECT count(*) FROM (SELECT 1 FROM files WHERE status = 'ok' "
                                 "LIMIT 1)");
    if (any != 0) return 0;
    *skipped = count_rows(st, "SELECT count(*) FROM files WHERE status != 'ok'");
    return *skipped >= 0;
}

CrErr idx_status_sizes(IdxStore *st, int64_t *chunks, int64_t *edges, ErrInfo *e)
{
    *chunks = count_rows(st, "SELECT count(*) FROM chunks");
    *edges = count_rows(st, "SELECT count(*) FROM edges");
    if (*chunks < 0 || *edges < 0) return idx_store_err(st, e, "status");
    return CR_OK;
}

CrErr idx_status(IdxStore *st, IdxStatus *out, ErrInfo *e)
{
    CrErr lrc = status_counts(st, out, e);
    if (lrc) return lrc;
    lrc = status__langs(st, out, e);
    if (lrc) return lrc;
    out->vectors = idx_dense_count(st);
    char t[32];
    if (idx_store_meta_get(st, "last_update", t, sizeof t, e) == CR_EDB) return CR_EDB;
    out->last_update = atoll(t);
    char p[PATH_MAX + 8];
    out->db_bytes = file_size(st->db_path);
    snprintf(p, sizeof p, "%s-wal", st->db_path);
    out->db_bytes += file_size(p);
    Embedder *em = idx_dense_embedder(st);
    if (em)
        idx_embedder_describe(em, out->embedder, sizeof out->embedder);
    else
        snprintf(out->embedder, sizeof out->embedder, "%.127s",
                 st->dense.note[0] ? st->dense.note : "none");
    return CR_OK;
}

CrErr idx_skipped(IdxStore *st, IdxSkipped **out, size_t *n_out, ErrInfo *e)
{
    sqlite3_stmt *s = NULL;
    IdxSkipped *v = NULL;
    size_t n = 0, cap = 0;
    *out = NULL;
    *n_out = 0;
    if (sqlite3_prepare_v2(st->db,
                           "SELECT path, status FROM files WHERE status != 'ok' ORDER BY path", -1,
                           &s, NULL) != SQLITE_OK)
        return idx_store_err(st, e, "skipped");
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        ARRAY_GROW(v, n + 1, cap);
        v[n].path = xstrdup((const char *)sqlite3_column_text(s, 0));
        v[n].reason = xstrdup((const char *)sqlite3_column_text(s, 1));
        n++;
    }
    if (rc != SQLITE_DONE) {
        CrErr err = idx_store_err(st, e, "skipped");
        sqlite3_finalize(s);
        idx_skipped_free(v, n);
        return err;
    }
    sqlite3_finalize(s);
    *out = v;
    *n_out = n;
    return CR_OK;
}

void idx_skipped_free(IdxSkipped *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(v[i].path);
        free(v[i].reason);
    }
    free(v);
}

/* The postings search uses (snapshot and what changed since) hold exactly
 * what a build from the chunks' rows and the source files would. A file
 * changed on disk since it was indexed (its hash differs) is no damage:
 * the build from the source leaves it out, and so does the comparison. */
static CrErr verify_postings(IdxStore *st, ErrInfo *e)
{
    Postings *fresh = NULL, *used = NULL;
    char why[256];
    int64_t *stale = NULL;
    size_t n_stale = 0;
    CrErr rc = idx_postings_load(st, 0, &fresh, e);
    if (!rc && st->n_post_stale) {
        n_stale = st->n_post_stale;
        stale = xmalloc(n_stale * sizeof *stale);
        memcpy(stale, st->post_stale, n_stale * sizeof *stale);
    }
    if (!rc) rc = idx_postings_load(st, 1, &used, e);
    for (size_t i = 0; !rc && i < n_stale; i++)
        idx_postings_remove_file(used, stale[i]);
    /* A damaged snapshot list is caught where it is read, and searches
     * then rebuild from the source: a cache to replace, not an inconsistency. */
    if (!rc && !idx_postings_same(used, fresh, why, sizeof why) && !idx_postings_damaged(used))
        rc = err_set(e, CR_ECORRUPT, "search postings differ from the indexed source: %s", why);
    free(stale);
    idx_postings_free(fresh);
    idx_postings_free(used);
    return rc;
}

/* SQLite's own check of the file. Damage it proves is recorded (the
 * damaged mark): the clean mark may still describe the file, and the next
 * `coderag index` must rebuild rather than trust it. */
static CrErr check_pages(IdxStore *st, ErrInfo *e)
{
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(st->db, "PRAGMA quick_check", -1, &s, NULL) != SQLITE_OK) {
        sqlite3_finalize(s);
        return idx_store_err(st, e, "quick_check");
    }
    int step = sqlite3_step(s);
    const char *v = step == SQLITE_ROW ? (const char *)sqlite3_column_text(s, 0) : NULL;
    if (step == SQLITE_ROW && v && !strcmp(v, "ok")) {
        sqlite3_finalize(s);
        return CR_OK;
    }
    if (step != SQLITE_ROW && !idx_store_code_damaged(step)) { /* a lock, an I/O error */
        CrErr rc = err_set(e, CR_EDB, "quick_check: %s", sqlite3_errmsg(st->db));
        sqlite3_finalize(s);
        return rc;
    }
    /* The first problem, on one line: past the "*** in database main ***" heading. */
    StrBuf why;
    sb_init(&why);
    if (!v) v = sqlite3_errmsg(st->db);
    if (!strncmp(v, "*** ", 4) && strchr(v, '\n')) v = strchr(v, '\n') + 1;
    sb_addf(&why, "quick_check: %.*s", (int)strcspn(v, "\n"), v);
    sqlite3_finalize(s);
    idx_store_record_damaged(st);
    CrErr rc = idx_store_refuse_damaged(st, why.buf, e);
    sb_release(&why);
    return rc;
}

static CrErr verify(IdxStore *st, ErrInfo *e);

/* Every check reads one state of the database (a writer's commit between two
 * of them is no inconsistency). What the row checks and the postings find
 * is damage inside whole pages (a row's bytes changed: quick_check passes):
 * recorded like quick_check's, so the next `coderag index` rebuilds. */
CrErr idx_verify(IdxStore *st, ErrInfo *e)
{
    int own_txn = sqlite3_get_autocommit(st->db);
    CrErr rc = own_txn ? idx_store_exec(st, "BEGIN", e) : CR_OK;
    if (rc) return rc;
    rc = verify(st, e);
    if (own_txn) idx_store_exec(st, "COMMIT", NULL);
    return rc;
}

/* A row check's or the postings' finding, recorded and told. */
static CrErr found_damage(IdxStore *st, ErrInfo *e)
{
    char why[sizeof e->msg];
    snprintf(why, sizeof why, "%s", e->msg);
    idx_store_record_damaged(st);
    return idx_store_refuse_damaged(st, why, e);
}

static CrErr verify(IdxStore *st, ErrInfo *e)
{
    static const struct {
        const char *what;
        const char *sql; /* counts offending rows */
    } checks[] = {
        {"chunks without a file",
         "SELECT count(*) FROM chunks c LEFT JOIN files f ON f.id = c.file_id "
         "WHERE f.id IS NULL OR f.status != 'ok'"},
        {"edges with a missing end",
         "SELECT count(*) FROM edges e LEFT JOIN chunks a ON a.id = e.src "
         "LEFT JOIN chunks b ON b.id = e.dst WHERE a.id IS NULL OR b.id IS NULL"},
        {"edges of a missing ref",
         "SELECT count(*) FROM edges e LEFT JOIN refs r ON r.id = e.ref_id "
         "WHERE e.ref_id != 0 AND r.id IS NULL"},
        {"symbols without a chunk", "SELECT count(*) FROM symbols s LEFT JOIN chunks c ON c.id = "
                                    "s.chunk_id WHERE c.id IS NULL"},
        {"refs without a chunk",
         "SELECT count(*) FROM refs r LEFT JOIN chunks c ON c.id = r.chunk_id WHERE c.id IS NULL"},
        {"imports without a file",
         "SELECT count(*) FROM imports i LEFT JOIN files f ON f.id = i.file_id WHERE f.id IS NULL"},
        {"overlapping chunks",
         "SELECT count(*) FROM chunks a JOIN chunks b ON a.file_id = b.file_id AND a.id < b.id "
         "AND a.start_line <= b.end_line AND b.start_line <= a.end_line"},
    };
    CrErr rc = check_pages(st, e);
    if (rc) return rc;
    for (size_t i = 0; i < sizeof checks / sizeof checks[0]; i++) {
        int64_t n = count_rows(st, checks[i].sql);
        if (n < 0 && idx_store_code_damaged(sqlite3_errcode(st->db))) {
            char why[256];
            snprintf(why, sizeof why, "%s", sqlite3_errmsg(st->db));
            idx_store_record_damaged(st);
            return idx_store_refuse_damaged(st, why, e);
        }
        if (n < 0) return idx_store_err(st, e, checks[i].what);
        int code = sqlite3_errcode(st->db) & 0xff;
        if (n == -1 && code != SQLITE_OK && code != SQLITE_ROW && code != SQLITE_DONE &&
            !idx_store_code_damaged(code)) /* a lock, an I/O error: no finding */
            return idx_store_err(st, e, checks[i].what);
        if (n != 0) {
            err_set(e, CR_ECORRUPT, "%lld %s", (long long)n, checks[i].what);
            return found_damage(st, e);
        }
    }
    rc = verify_postings(st, e);
    return rc == CR_ECORRUPT ? found_damage(st, e) : rc;
}
