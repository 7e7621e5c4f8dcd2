#include "../pp/pp_int.h"
#include "update_int.h"
#include "../chunk/lang/lang.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

/* Files are prepared (read, hashed, chunked, tokenized) by a pool of
 * threads and written by the calling thread in path order, in batched
 * transactions; each file's rows land whole or not at all. */

#define BATCH_FILES 500
/* a pass of this many files or more sorts past the cache into files */
#define SPILL_FILES 10000
#define MAX_AHEAD 256
/* Files the writer waits for at once when it has caught up with the
 * workers: one sleep and one wake-up for them, not one a file (each a
 * futex round trip, and the lock taken against the workers a file). */
#define WRITER_STRIDE 16

typedef struct Pool {
    FileWork *work;
    Stemmer **stems; /* one per worker (made here: they need the store's connection), or NULL */
    Embedder *em;    /* embeds as it prepares (idx_dense_parse_embedder), or NULL */
    int started;     /* workers that took their Stemmer */
    size_t n;
    const char *root;
    size_t max_bytes;
    IdxQueries *queries;     /* the store's */
    const ParseMarks *marks; /* the update's, each worker writes its slot */
    pthread_mutex_t mu;
    pthread_cond_t room;  /* workers wait for the writer to catch up */
    pthread_cond_t ready; /* the writer waits for [want_lo, want_hi) */
    int n_stems;          /* stems made (one per worker asked for) */
    int inline_prep;      /* no worker could start: the writer prepares each file */
    Chunker *inline_ch;
    size_t next;             /* next index a worker takes */
    size_t written;          /* files the writer has written (noted each time it waits) */
    size_t want_lo, want_hi; /* the files the writer waits for; want_hi 0: none */
    size_t ready_to;         /* files the writer knows done (its own) */
    unsigned char *done;
    int stop;
} Pool;

static int pool_all_done(const Pool *p, size_t lo, size_t hi)
{
    for (size_t i = lo; i < hi; i++)
        if (!p->done[i]) return 0;
    return 1;
}

static void *pool_worker(void *arg)
{
    Pool *p = arg;
    Chunker *ch = idx_chunker_new_queries(p->queries);
    pthread_mutex_lock(&p->mu);
    Stemmer *stem = p->stems ? p->stems[p->started] : NULL;
    int slot = p->started++;
    for (;;) {
        while (!p->stop && p->next < p->n && p->next >= p->written + MAX_AHEAD)
            pthread_cond_wait(&p->room, &p->mu);
        if (p->stop || p->next >= p->n) break;
        size_t i = p->next++;
        if (p->done[i]) continue; /* a suspect, prepared alone (pool_start) */
        pthread_mutex_unlock(&p->mu);
        idx_marks_set(p->marks, slot, 0, p->work[i].path);
        idx_filework_prepare(&p->work[i], p->root, p->max_bytes, ch, stem, p->em);
        idx_marks_set(p->marks, slot, 0, NULL);
        pthread_mutex_lock(&p->mu);
        p->done[i] = 1;
        if (i >= p->want_lo && i < p->want_hi && pool_all_done(p, p->want_lo, p->want_hi))
            pthread_cond_signal(&p->ready);
    }
    pthread_mutex_unlock(&p->mu);
    idx_chunker_free(ch);
    return NULL;
}

static CrErr begin(IdxStore *st, ErrInfo *e)
{
    st->refs_new_from = 0;
    i64map_release(&st->refs_kept);
    idx_fanin_forget(st); /* those of a transaction rolled back */
    return idx_store_exec(st, "BEGIN IMMEDIATE", e);
}

static CrErr commit(IdxStore *st, ErrInfo *e)
{
    /* an I/O error SQLite answered by rolling the transaction back, which a
     * step that could fail without failing the write did not report */
    if (sqlite3_get_autocommit(st->db))
        return err_set(e, CR_EDB, "%s: the update's transaction was rolled back by an error",
                       st->db_path);
    CrErr rc = idx_fanin_flush(st, e);
    return rc ? rc : idx_store_exec(st, "COMMIT", e);
}

/* Where a pass that commits in batches stands, for readers (idx_status):
 * "done total pid" while it writes, "" once it is whole. A pass that stops
 * leaves its last figures, the pass a reader then calls partial. */
static CrErr note_pass(IdxStore *st, size_t done, size_t total, ErrInfo *e)
{
    char v[64] = "";
    if (total) snprintf(v, sizeof v, "%zu %zu %ld", done, total, (long)getpid());
    return idx_store_meta_put(st, "pass", v, e);
}

/* Writes the scan's skip list as files rows (status = reason), so `status`
 * can report them; prepared skips (binary, not-utf8) are written by
 * idx_store_write_file. */
static CrErr record_scan_skips(IdxStore *st, const ScanResult *scan, StrMap *by_path,
                               UpdOldFile *old, ErrInfo *e)
{
    CrErr rc = CR_OK;
    for (size_t i = 0; i < scan->n_skipped && !rc; i++) {
        FileWork fw = {0};
        int64_t k;
        fw.path = scan->skipped[i].path;
        fw.skip = scan->skipped[i].reason;
        if (strmap_get(by_path, fw.path, &k)) {
            old[k].seen = 1;
            if (!old[k].ok && old[k].hash[0] == '\0') continue; /* already recorded */
            fw.old_id = old[k].id;
        }
        rc = idx_store_write_file(st, &fw, 1, e);
    }
    return rc;
}

/* Takes <index dir>/name (flock, exclusive; waits for another process
 * holding it). Full updates of one index run one at a time across
 * processes (update.lock: two indexers would both insert the same new
 * files), and so do vector syncs (vectors.lock: short, so a single-file
 * update never waits for a whole full update). Returns the fd to close, or
 * -1 to run unlocked (a read-only index dir: nothing to write anyway). */
static int lock_index_file(const IdxStore *st, const char *name)
{
    int fd = idx_index_file_open(st, name);
    if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) != 0) {
        /* another process updates this index: wait for it, and say so */
        log_msg(LOG_WARN,
                "waiting for another writer of the index at %s (a `coderag index` or a language "
                "server) to finish",
                st->index_real);
        while (flock(fd, LOCK_EX) != 0 && errno == EINTR) {
        }
    }
    return fd;
}

static CrErr locked_dense_sync(IdxStore *st, ErrInfo *e)
{
    int fd = lock_index_file(st, "vectors.lock");
    CrErr rc = idx_dense_sync(st, e);
    if (fd >= 0) close(fd);
    return rc;
}

/* The plan: which scanned files need reading (new, or size or mtime
 * moved; with repick, every file of a followed suffix, read as pick says
 * now); old files met are marked seen, the others are the removed. */
static void update__plan(const ScanResult *scan, const StrMap *by_path, UpdOldFile *old, Pool *pool,
                         const IdxLangPick *pick, int repick, const ParseMarks *marks,
                         IdxUpdateStats *stats)
{
    pool->work = xcalloc(scan->n_files + 1, sizeof *pool->work);
    for (size_t i = 0; i < scan->n_files; i++) {
        const ScanFile *f = &scan->files[i];
        int64_t k;
        UpdOldFile *o = NULL;
        if (strmap_get(by_path, f->path, &k)) {
            o = &old[k];
            o->seen = 1;
        }
        int reread = repick && o && o->ok && idx_lang_path_follows(f->path);
        if (o && o->ok && o->size == f->size && o->mtime_ns == f->mtime_ns && !reread) {
            stats->files_unchanged++;
            continue;
        }
        /* a file the parser died on stays skipped until it changes */
        if (o && o->crashed && o->size == f->size && o->mtime_ns == f->mtime_ns) {
            stats->files_skipped++;
            continue;
        }
        FileWork *fw = &pool->work[pool->n++];
        if (idx_marks_has(marks->convicted, marks->n_convicted, f->path)) {
            log_msg(LOG_WARN, "%s: the parser stopped the process on it (skipped)", f->path);
            fw->skip = IDX_SKIP_PARSER_CRASHED;
        }
        fw->path = xstrdup(f->path);
        fw->pick = pick;
        fw->reread = reread;
        fw->size = f->size;
        fw->mtime_ns = f->mtime_ns;
        if (o) {
            fw->old_id = o->id;
            memcpy(fw->old_hash, o->hash, sizeof fw->old_hash);
        }
    }
}

static int pool_start(Pool *pool, IdxStore *st, pthread_t **threads)
{
    pool->root = st->root;
    pool->max_bytes = st->max_file_bytes;
    pool->queries = st->queries;
    pool->em = idx_dense_parse_embedder_for(st, pool->work, pool->n);
    pool->done = xcalloc(pool->n + 1, 1);
    pthread_mutex_init(&pool->mu, NULL);
    pthread_cond_init(&pool->room, NULL);
    pthread_cond_init(&pool->ready, NULL);
    int n = pool->n < (size_t)st->threads ? (int)pool->n : st->threads;
    /* Stemming for the postings moves to the workers (the writer is the
     * bottleneck of a cold build): the postings are kept current by every
     * update that writes files (loaded next, if not yet). */
    if (n > 0) {
        pool->stems = xcalloc((size_t)n, sizeof *pool->stems);
        for (int t = 0; t < n; t++)
            if (idx_stemmer_new(st, &pool->stems[t], NULL)) {
                for (int k = 0; k < t; k++)
                    idx_stemmer_free(pool->stems[k]);
                free(pool->stems);
                pool->stems = NULL;
                break;
            }
    }
    pool->n_stems = pool->stems ? n : 0;
    /* the files a dead update was preparing beside others: each alone
     * first, so that a second death names the one (parse_marks.c) */
    Chunker *alone = NULL;
    for (size_t i = 0; i < pool->n && pool->marks->n_suspects; i++) {
        FileWork *fw = &pool->work[i];
        if (fw->skip || !idx_marks_has(pool->marks->suspects, pool->marks->n_suspects, fw->path))
            continue;
        if (!alone) alone = idx_chunker_new_queries(pool->queries);
        idx_marks_set(pool->marks, 0, 1, fw->path);
        idx_filework_prepare(fw, pool->root, pool->max_bytes, alone,
                             pool->stems ? pool->stems[0] : NULL, pool->em);
        idx_marks_set(pool->marks, 0, 1, NULL);
        pool->done[i] = 1;
    }
    idx_chunker_free(alone);
    *threads = xcalloc((size_t)n + 1, sizeof **threads);
    int started = 0;
    for (int t = 0; t < n; t++)
        if (pthread_create(&(*threads)[started], NULL, pool_worker, pool) == 0) started++;
    /* no thread to be had (a memory limit): the writer prepares the files */
    if (!started && pool->n) pool->inline_prep = 1;
    return started;
}

static void pool_stop(Pool *pool, pthread_t *threads, int n_threads)
{
    if (!threads) return;
    idx_chunker_free(pool->inline_ch);
    pthread_mutex_lock(&pool->mu);
    pool->stop = 1;
    pthread_cond_broadcast(&pool->room);
    pthread_mutex_unlock(&pool->mu);
    for (int t = 0; t < n_threads; t++)
        pthread_join(threads[t], NULL);
    for (int t = 0; pool->stems && t < pool->n_stems; t++)
        idx_stemmer_free(pool->stems[t]);
    free(pool->stems);
    pthread_mutex_destroy(&pool->mu);
    pthread_cond_destroy(&pool->room);
    pthread_cond_destroy(&pool->ready);
}

/* path off the files noted to read again (st->reread). */
static void reread_forget(IdxStore *st, const char *path)
{
    size_t k = 0;
    for (size_t i = 0; i < st->n_reread; i++) {
        if (strcmp(st->reread[i], path))
            st->reread[k++] = st->reread[i];
        else
            free(st->reread[i]);
    }
    st->n_reread = k;
}

/* Whether the file fw read has changed on disk since (size or mtime):
 * checked inside the write transaction, so that rows read before another
 * writer committed newer ones never overwrite them (a lost save). A file
 * read within two seconds of its last change has no trusted mtime
 * (write.c: mtime 0, read again by the next pass): with by_content its
 * text is read again and its hash compared (a single file), else it is
 * left to that next pass. */
static int moved_since_read(const IdxStore *st, const FileWork *fw, int by_content)
{
    if (fw->skip || fw->same_content) return 0;
    if (!fw->mtime_ns) {
        if (!by_content) return 0;
        StrBuf now;
        sb_init(&now);
        char h[17];
        int moved = path_read_under(st->root, fw->path, &now, st->max_file_bytes, NULL) != CR_OK;
        if (!moved) {
            idx_hash_text(now.buf, now.len, h);
            moved = strcmp(h, fw->hash) != 0;
        }
        sb_release(&now);
        return moved;
    }
    StrBuf p;
    sb_init(&p);
    sb_addf(&p, "%s/%s", st->root, fw->path);
    struct stat sb;
    int moved = stat(p.buf, &sb) == 0 &&
                ((int64_t)sb.st_size != fw->size ||
                 (int64_t)sb.st_mtim.tv_sec * 1000000000 + sb.st_mtim.tv_nsec != fw->mtime_ns);
    sb_release(&p);
    return moved;
}

static void reread_note(IdxStore *st, const char *path)
{
    ARRAY_GROW(st->reread, st->n_reread + 1, st->cap_reread);
    st->reread[st->n_reread++] = xstrdup(path);
}

/* The row of rel: its id (0: none) and content hash. */
static CrErr file_lookup(IdxStore *st, const char *rel, int64_t *id, char hash[17], ErrInfo *e)
{
    *id = 0;
    hash[0] = '\0';
    sqlite3_stmt *s = idx_store_stmt(st, STMT_FILE_BY_PATH, e);
    if (!s) return CR_EDB;
    sqlite3_bind_text(s, 1, rel, -1, SQLITE_STATIC);
    int row = 0;
    CrErr rc = idx_store_step(st, s, &row, e, "file lookup");
    if (row) {
        *id = sqlite3_column_int64(s, 0);
        const unsigned char *h = sqlite3_column_text(s, 1);
        snprintf(hash, 17, "%s", h ? (const char *)h : "");
    }
    sqlite3_reset(s);
    return rc;
}

/* The writer at file i, which it does not know done: notes the files
 * before it written (room for the workers) and waits until the next
 * WRITER_STRIDE files (or the rest) are done. */
static void pool_wait(Pool *pool, size_t i)
{
    size_t hi = pool->n - i < WRITER_STRIDE ? pool->n : i + WRITER_STRIDE;
    pthread_mutex_lock(&pool->mu);
    pool->written = i;
    pthread_cond_broadcast(&pool->room);
    pool->want_lo = i;
    pool->want_hi = hi;
    while (!pool_all_done(pool, i, hi))
        pthread_cond_wait(&pool->ready, &pool->mu);
    pool->want_hi = 0;
    pthread_mutex_unlock(&pool->mu);
    pool->ready_to = hi;
}

/* The apply: writes each file as the workers finish it, in scan order,
 * committing every BATCH_FILES files (*in_txn follows the transaction). */
static CrErr update__apply(IdxStore *st, Pool *pool, size_t n_scanned, int cold,
                           IdxProgressFn progress, void *ud, IdxUpdateStats *stats, int *in_txn,
                           ErrInfo *e)
{
    CrErr rc = CR_OK;
    /* Files the plan found unchanged (size and mtime); the pool's files are
     * counted by i, whatever the apply finds them to be. */
    size_t planned_unchanged = stats->files_unchanged;
    for (size_t i = 0; i < pool->n; i++) {
        if (pool->inline_prep && !pool->done[i]) {
            if (!pool->inline_ch) pool->inline_ch = idx_chunker_new_queries(pool->queries);
            idx_marks_set(pool->marks, 0, 1, pool->work[i].path);
            idx_filework_prepare(&pool->work[i], pool->root, pool->max_bytes, pool->inline_ch,
                                 pool->stems ? pool->stems[0] : NULL, pool->em);
            idx_marks_set(pool->marks, 0, 1, NULL);
            pool->done[i] = 1;
        }
        if (i >= pool->ready_to) pool_wait(pool, i);
        FileWork *fw = &pool->work[i];
        if (fw->skip && strcmp(fw->skip, "gone") != 0)
            stats->files_skipped++;
        else if (fw->same_content)
            stats->files_unchanged++;
        else if (fw->skip)
            stats->files_removed += fw->old_id != 0;
        else
            stats->files_changed++;
        int moved = moved_since_read(st, fw, 0);
        /* another writer (a language server's save) may have made or
         * replaced this path's row since the plan read the files: nothing
         * is written over it nor beside it (files.path is unique); the file
         * is read again at the end of the pass, against the row there now */
        int64_t now_id = fw->old_id;
        char now_hash[17];
        int gone = fw->skip && !strcmp(fw->skip, "gone");
        if (!gone) rc = file_lookup(st, fw->path, &now_id, now_hash, e);
        int raced = now_id != fw->old_id;
        if (!rc && !raced) rc = idx_store_write_file(st, fw, !cold, e);
        /* its rows now those of what was read: not read again (reread),
         * unless it changed since it was read */
        if (!rc && !raced && !fw->same_content && !fw->skip) reread_forget(st, fw->path);
        if (!rc && (moved || raced)) reread_note(st, fw->path);
        idx_filework_release(fw);
        if (rc) return rc;
        if ((i + 1) % BATCH_FILES == 0) {
            if ((rc = note_pass(st, planned_unchanged + i + 1, n_scanned, e)) ||
                (rc = commit(st, e)) || (rc = begin(st, e))) {
                *in_txn = rc == CR_OK;
                return rc;
            }
        }
        if (progress && progress(ud, planned_unchanged + i + 1, n_scanned))
            return err_set(e, CR_ECANCELED, "indexing stopped");
    }
    return CR_OK;
}

static void reread_clear(IdxStore *st)
{
    for (size_t i = 0; i < st->n_reread; i++)
        free(st->reread[i]);
    st->n_reread = 0;
}

/* Wall and process CPU time of an update's phases, for the debug log
 * (CODERAG_LOG=debug): where a large build spends its time. */
typedef struct Phases {
    double wall, cpu;
} Phases;

static double cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void phases_init(Phases *ph)
{
    ph->wall = now_ms();
    ph->cpu = cpu_ms();
}

static void phase_mark(Phases *ph, const char *name)
{
    double w = now_ms(), c = cpu_ms();
    log_msg(LOG_DEBUG, "update: %s %.0f ms wall, %.0f ms CPU", name, w - ph->wall, c - ph->cpu);
    ph->wall = w;
    ph->cpu = c;
}

/* Reads and writes again the files noted in st->reread (their imports
 * resolved against the filesystem, through a file that came or went). */
static CrErr reread(IdxStore *st, const ParseMarks *marks, ErrInfo *e)
{
    CrErr rc = CR_OK;
    Chunker *ch = NULL;
    while (!rc && st->n_reread) {
        FileWork fw = {0};
        fw.path = st->reread[--st->n_reread];
        sqlite3_stmt *s = idx_store_stmt(st, STMT_FILE_BY_PATH, e);
        int row = 0;
        if (!s) rc = CR_EDB;
        if (!rc) {
            sqlite3_bind_text(s, 1, fw.path, -1, SQLITE_STATIC);
            rc = idx_store_step(st, s, &row, e, "file lookup");
            if (row) fw.old_id = sqlite3_column_int64(s, 0); /* no old hash: chunked again */
            sqlite3_reset(s);
        }
        if (!rc && fw.old_id) {
            if (!ch) ch = idx_chunker_new();
            fw.pick = &st->lang_pick;
            idx_marks_set(marks, 0, 1, fw.path);
            idx_filework_prepare(&fw, st->root, st->max_file_bytes, ch, NULL,
                                 idx_dense_parse_embedder(st));
            idx_marks_set(marks, 0, 1, NULL);
            rc = idx_store_write_file(st, &fw, 1, e);
        }
        idx_filework_release(&fw);
    }
    reread_clear(st);
    idx_chunker_free(ch);
    return rc;
}

CrErr idx_update(IdxStore *st, IdxProgressFn progress, void *ud, IdxUpdateStats *out, ErrInfo *e)
{
    CrErr rc = CR_OK;
    ScanResult scan = {0};
    ScanOptions opt;
    StrMap by_path;
    UpdOldFile *old = NULL;
    size_t n_old = 0;
    Pool pool = {0};
    pthread_t *threads = NULL;
    int n_threads = 0, in_txn = 0, spill_set = 0;
    IdxUpdateStats stats = {0};
    double t0 = now_ms();
    IdxLangPick pick, old_pick = st->lang_pick;

    Phases ph;
    phases_init(&ph);
    st->busy_failed = 0;
    int lock_fd = lock_index_file(st, "update.lock");
    ParseMarks marks;
    idx_marks_open(st, &marks);
    strmap_init(&by_path);
    idx_store_scan_options(st, &opt);
    /* the files rows read while the scan walks the tree (it touches no
     * store state): outside the transaction, as they always were */
    UpdPrefetch pre = {.st = st, .by_path = &by_path};
    pthread_t pre_thread;
    int pre_started = pthread_create(&pre_thread, NULL, idx_update_prefetch, &pre) == 0;
    if (!pre_started) idx_update_prefetch(&pre);
    rc = idx_scan_workspace(&opt, &scan, e);
    if (pre_started) pthread_join(pre_thread, NULL);
    old = pre.old;
    n_old = pre.n_old;
    if (!rc && pre.rc) {
        rc = pre.rc;
        if (e) *e = pre.e;
    }
    phase_mark(&ph, "scan and files");
    if (rc) goto out;
    stats.files_seen = scan.n_files;
    int cold = n_old == 0;
    /* how this project reads the suffixes rows share: from the files it
     * holds now; a change reads those files again */
    int64_t others[IDX_LANG_MAX_ROWS] = {0};
    for (size_t i = 0; i < scan.n_files; i++)
        idx_lang_pick_count(others, scan.files[i].path);
    idx_lang_pick_decide(&pick, others);
    char was[512], now[512];
    idx_lang_pick_text(&st->lang_pick, was, sizeof was);
    idx_lang_pick_text(&pick, now, sizeof now);
    int repick = strcmp(was, now) != 0;
    st->lang_pick = pick;
    update__plan(&scan, &by_path, old, &pool, &st->lang_pick, repick && !cold, &marks, &stats);
    pool.marks = &marks;

    /* A pass that writes a large tree sorts whole tables (the indexes a
     * cold build makes, resolution's edges): past the cache, to files, not
     * memory (the kernel's peak RSS). A smaller one keeps them in memory:
     * Django's cold build costs the same either way, but would write a
     * temporary file in /var/tmp. Set between transactions: setting it
     * makes the connection prepare its statements again. */
    if (pool.n >= SPILL_FILES && !(rc = idx_store_sorts_spill_to_disk(st, 1, e))) spill_set = 1;
    if (rc) goto out;
    if ((rc = begin(st, e))) goto out;
    in_txn = 1;
    /* A cold build loads the tables bare and indexes them once at the end. */
    if ((rc = cold ? idx_store_indexes_drop(st, e) : idx_store_indexes_ensure(st, e))) goto out;
    if (cold && (rc = idx_graph_born_begin(st, e))) goto out;
    if ((rc = idx_fanin_track(st, !cold, e))) goto out;
    if ((rc = idx_pp_begin(st, cold, e))) goto out;
    if ((rc = record_scan_skips(st, &scan, &by_path, old, e))) goto out;
    stats.files_skipped += scan.n_skipped;
    /* Rows of files that are gone (or now ignored) go first. */
    for (size_t k = 0; k < n_old; k++) {
        if (old[k].seen) continue;
        FileWork gone = {.old_id = old[k].id, .skip = "gone"};
        if ((rc = idx_store_write_file(st, &gone, 1, e))) goto out;
        stats.files_removed++;
    }

    /* The postings follow every write from here on, so that a snapshot can
     * be written at the end without reading the search text back. Loaded
     * in this transaction: exactly the rows it sees; not loaded when this
     * pass cannot make the snapshot stale (the next reader adds its files). */
    /* nothing to read: no workers, and no model loaded for them; started
     * first, so that they read while the postings load */
    if (pool.n) n_threads = pool_start(&pool, st, &threads);
    if (pool.n && !st->post && idx_postings_pass_follows(st, pool.n)) {
        st->post_version = idx_store_data_version(st);
        if ((rc = idx_postings_load(st, !st->post_distrust, &st->post, e))) goto out;
    }
    phase_mark(&ph, "plan, postings");
    rc = update__apply(st, &pool, scan.n_files, cold, progress, ud, &stats, &in_txn, e);
    if (rc) goto out;
    phase_mark(&ph, "parse+write");
    /* before the indexes: the definitions a cold build drops leave free
     * pages that the indexes fill */
    if ((rc = idx_pp_settle(st, e))) goto out;
    phase_mark(&ph, "macros");
    /* refs_dirty: made with the tables (idx_graph_born_begin) */
    if (cold && (rc = idx_store_indexes_ensure_lookup(st, e))) goto out;
    phase_mark(&ph, "indexes");
    if ((rc = reread(st, &marks, e)) || (rc = idx_pp_settle(st, e))) goto out;
    /* Many files written, or a cold build: their rows are committed first,
     * so that resolution can read what the tables hold once and look names
     * up on threads over connections of their own (the files are already
     * committed in batches: an update that stops here leaves references
     * marked unresolved, which the next one resolves). */
    if ((pool.n >= BATCH_FILES && st->threads > 1) || cold) {
        if ((pool.n >= BATCH_FILES && (rc = note_pass(st, scan.n_files, scan.n_files, e))) ||
            (rc = commit(st, e)) || (rc = begin(st, e))) {
            in_txn = rc == CR_OK;
            goto out;
        }
        rc = idx_graph_resolve_dirty_par(st, NULL, e);
    } else {
        rc = idx_graph_resolve_dirty(st, NULL, e);
    }
    /* refs_dirty, when resolution did not make it (graph.c's bulk pass) */
    if (!rc && cold) rc = idx_store_indexes_ensure(st, e);
    if (!rc) rc = idx_fanin_settle(st, cold, e);
    if (rc) goto out;
    phase_mark(&ph, "resolve");
    /* last: a pass stopped before here reads those files again next time */
    if (repick && (rc = idx_store_meta_put(st, "lang_pick", now, e))) goto out;
    if ((rc = idx_store_touch_update_time(st, e)) || (rc = note_pass(st, 0, 0, e))) goto out;
    rc = commit(st, e);
    in_txn = 0;
    if (!rc) sqlite3_wal_checkpoint_v2(st->db, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
    phase_mark(&ph, "commit");
    if (!rc) idx_store_postings_checkpoint(st);
    phase_mark(&ph, "postings");
    if (!rc) rc = locked_dense_sync(st, e);
out:
    st->refs_born = 0; /* a build stopped: meta "refs_born" tells the next resolution */
    reread_clear(st);
    pool_stop(&pool, threads, n_threads);
    /* A stop keeps the whole files written so far; anything else rolls back. */
    if (in_txn && (!rc || rc == CR_ECANCELED) && idx_fanin_flush(st, NULL)) rc = CR_EDB;
    if (in_txn) idx_store_exec(st, rc && rc != CR_ECANCELED ? "ROLLBACK" : "COMMIT", NULL);
    if (spill_set) idx_store_sorts_spill_to_disk(st, 0, NULL);
    if (rc) idx_store_postings_invalidate(st);
    if (rc) st->lang_pick = old_pick; /* as meta still says */
    idx_dense_write_end(st, rc == CR_OK);
    for (size_t i = 0; i < pool.n; i++)
        idx_filework_release(&pool.work[i]);
    free(pool.work);
    free(pool.done);
    free(threads);
    free(old);
    strmap_release(&by_path);
    idx_scan_result_release(&scan);
    idx_marks_close(&marks);
    if (lock_fd >= 0) close(lock_fd); /* releases the lock */
    /* A full pass leaves the connection's page cache full of the pages it
     * wrote (up to cache_size, 16 MB): a server keeps a connection per root
     * for good, and asks read little through it. Give them back. */
    if (st->db) sqlite3_db_release_memory(st->db);
    stats.ms = now_ms() - t0;
    if (out) *out = stats;
    return rc;
}

/* path (relative, absolute or a file:// URI) relative to the root,
 * normalised; CR_EOUTSIDE when it is not under the root. */
static CrErr relative_path(const IdxStore *st, const char *path, StrBuf *out, ErrInfo *e)
{
    char *rel = NULL;
    CrErr rc = path_relative(st->root, path, &rel);
    if (rc == CR_EOUTSIDE) return err_set(e, rc, "%s is outside the workspace %s", path, st->root);
    if (rc) return err_set(e, rc, "%s names no file", path);
    sb_adds(out, rel);
    free(rel);
    return CR_OK;
}

/* The Chunker of a store's saves: kept from one to the next, with each
 * language's last tree, so that saving a file again parses only what
 * changed in it (a save of flask/app.py: 58 M instructions of parse). */
static Chunker *save_chunker(IdxStore *st)
{
    if (!st->save_ch) {
        st->save_ch = idx_chunker_new_queries(st->queries);
        idx_chunker_keep_trees(st->save_ch);
    }
    return st->save_ch;
}

/* The memo of a store's saves: what the last save tokenized and embedded,
 * per chunk, for the next save of that file (save_memo.c). */
static SaveMemo *save_memo(IdxStore *st)
{
    if (!st->save_memo) st->save_memo = idx_save_memo_new();
    return st->save_memo;
}

/* The Stemmer of a store's saves while its postings are loaded (a
 * server's): the save's terms are stemmed a word at a time as a build's are
 * (stem.c's FileWords), and its chunks' postings added from them; NULL
 * while they are not (nothing reads the terms then). */
static Stemmer *save_stemmer(IdxStore *st)
{
    if (!st->post) return NULL;
    if (!st->save_stem && idx_stemmer_new(st, &st->save_stem, NULL)) st->save_stem = NULL;
    return st->save_stem;
}

CrErr idx_update_file(IdxStore *st, const char *path, ErrInfo *e)
{
    CrErr rc;
    StrBuf rel, abs;
    FileWork fw = {0};
    Chunker *ch = NULL;
    int in_txn = 0;
    double t0 = now_ms();
    st->busy_failed = 0;
    sb_init(&rel);
    sb_init(&abs);
    if ((rc = relative_path(st, path, &rel, e))) goto out;
    fw.path = xstrdup(rel.buf);

    if ((rc = file_lookup(st, rel.buf, &fw.old_id, fw.old_hash, e))) goto out;

    ScanOptions opt;
    idx_store_scan_options(st, &opt);
    struct stat sb;
    sb_addf(&abs, "%s/%s", st->root, rel.buf);
    if (!idx_scan_path_included(&opt, rel.buf) || stat(abs.buf, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        fw.skip = "gone";
    } else if ((size_t)sb.st_size > st->max_file_bytes) {
        fw.skip = "too-large";
    } else {
        fw.size = (int64_t)sb.st_size;
        fw.mtime_ns = (int64_t)sb.st_mtim.tv_sec * 1000000000 + sb.st_mtim.tv_nsec;
        ch = save_chunker(st);
        fw.pick = &st->lang_pick;
        fw.memo = save_memo(st);
        idx_filework_prepare(&fw, st->root, st->max_file_bytes, ch, save_stemmer(st),
                             idx_dense_parse_embedder(st));
        /* prepare records the size and mtime of what it read */
    }
    double t1 = now_ms();
    if ((rc = begin(st, e))) goto out;
    in_txn = 1;
    /* another writer may have written newer rows while this one waited:
     * what was read is read again, never written over them, and the row
     * it has (or made) is the one replaced */
    int excluded = fw.skip != NULL;
    for (int again = 0; again < 3; again++) {
        int64_t old_id = 0;
        char old_hash[sizeof fw.old_hash];
        if ((rc = file_lookup(st, rel.buf, &old_id, old_hash, e))) goto out;
        if (old_id == fw.old_id && !strcmp(old_hash, fw.old_hash) && !moved_since_read(st, &fw, 1))
            break;
        if (excluded) { /* still not indexed: the row there now goes */
            fw.old_id = old_id;
            memcpy(fw.old_hash, old_hash, sizeof old_hash);
            break;
        }
        char *keep = fw.path;
        fw.path = NULL;
        idx_filework_release(&fw);
        memset(&fw, 0, sizeof fw);
        fw.path = keep;
        fw.old_id = old_id;
        memcpy(fw.old_hash, old_hash, sizeof old_hash);
        if (stat(abs.buf, &sb) != 0 || !S_ISREG(sb.st_mode)) {
            fw.skip = "gone";
            break;
        }
        fw.size = (int64_t)sb.st_size;
        fw.mtime_ns = (int64_t)sb.st_mtim.tv_sec * 1000000000 + sb.st_mtim.tv_nsec;
        if (!ch) ch = save_chunker(st);
        fw.pick = &st->lang_pick;
        fw.memo = save_memo(st);
        idx_filework_prepare(&fw, st->root, st->max_file_bytes, ch, save_stemmer(st),
                             idx_dense_parse_embedder(st));
    }
    if ((rc = idx_store_indexes_ensure(st, e))) goto out;
    if ((rc = idx_fanin_track(st, 1, e))) goto out;
    if ((rc = idx_pp_begin(st, 0, e))) goto out;
    st->save_facts_want = 1;
    rc = idx_store_write_file(st, &fw, 1, e);
    st->save_facts_want = 0;
    if (rc) goto out;
    if ((rc = reread(st, NULL, e)) || (rc = idx_pp_settle(st, e))) goto out;
    double t2 = now_ms();
    size_t n_edges = 0;
    if ((rc = idx_graph_resolve_dirty(st, &n_edges, e))) goto out;
    if ((rc = idx_fanin_settle(st, 0, e))) goto out;
    double t3 = now_ms();
    if ((rc = idx_store_touch_update_time(st, e)) || (rc = note_pass(st, 0, 0, e))) goto out;
    rc = commit(st, e);
    in_txn = 0;
    if (!rc && st->save_facts_state == 1) {
        st->save_facts_state = 2;
        st->save_facts_version = idx_store_data_version(st);
    }
    log_msg(
        LOG_DEBUG,
        "update %s: prepare %.1f ms, write %.1f ms, resolve %.1f ms (%zu edges), commit %.1f ms",
        rel.buf, t1 - t0, t2 - t1, t3 - t2, n_edges, now_ms() - t3);
    if (!rc) rc = locked_dense_sync(st, e);
out:
    reread_clear(st);
    if (in_txn) idx_store_exec(st, "ROLLBACK", NULL);
    if (rc) idx_store_postings_invalidate(st);
    if (rc) idx_store_save_facts_drop(st);
    idx_dense_write_end(st, rc == CR_OK);
    idx_filework_release(&fw);
    sb_release(&rel);
    sb_release(&abs);
    return rc;
}
