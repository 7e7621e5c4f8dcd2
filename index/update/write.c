#include "../chunk/lang/lang.h"
#include "../pp/pp_int.h"
#include "update_int.h"
#include "../dense/vec_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

/* ---------------------------------------------------------------- prepare (any thread) */

/* Each chunk's vector: those the save's memo has from the last save copied,
 * the others embedded (one batch) and kept in the memo for the next. A
 * failure leaves fw->vecs NULL: the sync embeds these chunks then. */
static void filework__embed(FileWork *fw, Embedder *em, char **etext, size_t n, int keep)
{
    int dim = idx_save_memo_dim(fw->memo, em);
    char **miss = xcalloc(n, sizeof *miss);
    size_t *at = xcalloc(n, sizeof *at), n_miss = 0;
    for (size_t i = 0; i < n; i++) {
        if (!idx_save_memo_vec_get(fw->memo, em, etext[i])) {
            miss[n_miss] = etext[i];
            at[n_miss++] = i;
        }
    }
    float *got = NULL;
    int got_dim = dim;
    ErrInfo e = {0};
    if (n_miss && idx_embedder_embed(em, (const char *const *)miss, n_miss, &got, &got_dim, &e))
        got = NULL;
    if ((n_miss && !got) || got_dim <= 0 || (dim && got_dim != dim)) goto out;
    fw->dim = got_dim;
    fw->vecs = xmalloc(n * (size_t)got_dim * sizeof *fw->vecs);
    for (size_t i = 0; i < n; i++) {
        const float *v = idx_save_memo_vec_get(fw->memo, em, etext[i]);
        if (v) memcpy(fw->vecs + i * (size_t)got_dim, v, (size_t)got_dim * sizeof *v);
    }
    for (size_t k = 0; k < n_miss; k++)
        memcpy(fw->vecs + at[k] * (size_t)got_dim, got + k * (size_t)got_dim,
               (size_t)got_dim * sizeof *got);
    for (size_t i = 0; keep && i < n; i++)
        idx_save_memo_vec_put(fw->memo, em, etext[i], fw->vecs + i * (size_t)got_dim, got_dim);
out:
    free(got);
    free(miss);
    free(at);
}

static void filework__tokens(FileWork *fw, const char *src, const size_t *line_off,
                             uint32_t n_lines, size_t src_len, Embedder *em)
{
    StrBuf sb, key;
    sb_init(&sb);
    sb_init(&key);
    size_t n = fw->set.n_chunks;
    fw->text = xcalloc(n * IDX_SEARCH_FIELDS + 1, sizeof(char *));
    fw->chunk_hash = xcalloc(n + 1, sizeof *fw->chunk_hash);
    fw->cont = xcalloc(n + 1, 1);
    StrMap seen;
    strmap_init(&seen);
    for (size_t i = 0; i < n; i++) {
        const ChunkDef *c = &fw->set.chunks[i];
        int again = c->symbol && c->symbol[0] && strmap_get(&seen, c->symbol, NULL);
        fw->cont[i] = (char)idx_chunk_continues(c, again);
        if (c->symbol && c->symbol[0]) strmap_put(&seen, c->symbol, 1);
    }
    strmap_release(&seen);
    /* a save keeps this file's chunks for the next (save_memo.c) */
    int keep = fw->memo && idx_save_memo_keeps(src_len);
    /* with an embedder, each chunk's embedding text (idx_dense_text) */
    char **etext = em && n ? xcalloc(n, sizeof *etext) : NULL;
    StrBuf path_tok;
    sb_init(&path_tok);
    idx_search_path_tokens(fw->path, &path_tok);
    for (size_t i = 0; i < n; i++) {
        const ChunkDef *c = &fw->set.chunks[i];
        size_t a, b;
        idx_chunk_span(c->start_line, c->end_line, line_off, n_lines, src_len, &a, &b);
        idx_hash_text(src + a, b - a, fw->chunk_hash[i]);
        char **fields = &fw->text[i * IDX_SEARCH_FIELDS];
        if (fw->memo)
            idx_save_memo_fields_key(c->symbol, path_tok.buf, c->docstring, fw->cont[i],
                                     c->signature, src + a, b - a, &key);
        if (!fw->memo || !idx_save_memo_fields_get(fw->memo, &key, fields))
            idx_search_fields(c->symbol, path_tok.buf, c->docstring, fw->cont[i], c->signature,
                              src + a, b - a, fields);
        if (keep) idx_save_memo_fields_put(fw->memo, &key, fields);
        if (etext) {
            idx_dense_text(fw->path, c->symbol[0] ? c->symbol : fw->module, fw->cont[i],
                           c->signature, src + a, b - a, &sb);
            etext[i] = sb_detach(&sb, NULL);
        }
    }
    if (etext) {
        filework__embed(fw, em, etext, n, keep);
        for (size_t i = 0; i < n; i++)
            free(etext[i]);
        free(etext);
    }
    if (fw->memo) idx_save_memo_turn(fw->memo, keep);
    sb_release(&path_tok);
    sb_release(&key);
    sb_release(&sb);
}

/* ChunkRef.level of an import a row keeps bound to a library's module as
 * written (resolve_import's IDX_IMPORT_LIBRARY). */
#define IMPORT_LIBRARY_LEVEL (-2)
/* ChunkRef.level of a binding of the file's own names (IDX_LANG_OWN_MODULE):
 * no import reference */
#define IMPORT_OWN_LEVEL (-3)

/* Raw import specs of table languages become absolute modules (the
 * filesystem decides where the language makes that decidable); the rest are
 * dropped: an import we cannot place makes no edge. */
static void filework__resolve_imports(FileWork *fw, const char *root, const IdxLang *lang)
{
    if (!lang->resolve_import) return;
    LangImportCtx ctx = {root, fw->path, fw->module, fw->set.package ? fw->set.package : ""};
    for (size_t i = 0; i < fw->set.n_refs; i++) {
        ChunkRef *r = &fw->set.refs[i];
        if (r->kind != REF_IMPORT || !r->module) continue;
        r->level = 0;
        if (!strcmp(r->module, IDX_LANG_OWN_MODULE)) {
            free(r->module);
            r->module = xstrdup(fw->module);
            r->level = IMPORT_OWN_LEVEL;
            continue;
        }
        char *raw = xstrdup(r->module);
        int got = lang->resolve_import(&ctx, r);
        if (got == IDX_IMPORT_LIBRARY) r->level = IMPORT_LIBRARY_LEVEL;
        if (!got) {
            /* no file by that name (yet): kept as written, level -1, so that
             * the file is read again when one appears (deps.c) */
            free(r->alias);
            r->alias = NULL;
            free(r->module);
            r->module = raw;
            raw = NULL;
            r->level = -1;
        }
        free(raw);
    }
}

static int same_stat(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
           a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

/* Reads rel under root whole (path_read_under: opened, then checked, so a
 * file swapped for a link out of the root is never read), and again when it
 * changed while being read (its identity, size or mtime moved between the
 * stat before and the one after). *mtime_ns is the mtime of the content
 * read, or 0 (the next update reads it again) when it never held still, or
 * was modified in the last seconds: a write within the same clock tick
 * leaves the mtime where it was. */
static CrErr read_settled(const char *root, const char *rel, size_t max, StrBuf *src,
                          int64_t *mtime_ns, ErrInfo *e)
{
    struct stat a, b;
    StrBuf abs;
    sb_init(&abs);
    sb_addf(&abs, "%s/%s", root, rel);
    *mtime_ns = 0;
    CrErr rc = CR_OK;
    for (int tries = 0; tries < 5; tries++) {
        if (stat(abs.buf, &a) != 0) {
            rc = err_set(e, errno == ENOENT || errno == ENOTDIR ? CR_ENOENT : CR_EIO, "%s: %s", rel,
                         strerror(errno));
            break;
        }
        sb_reset(src);
        if ((rc = path_read_under(root, rel, src, max, e))) break;
        if (stat(abs.buf, &b) == 0 && same_stat(&a, &b) &&
            (int64_t)src->len == (int64_t)b.st_size) {
            struct timespec now;
            clock_gettime(CLOCK_REALTIME, &now);
            if (b.st_mtim.tv_sec + 2 < now.tv_sec)
                *mtime_ns = (int64_t)b.st_mtim.tv_sec * 1000000000 + b.st_mtim.tv_nsec;
            break;
        }
        /* else: what was read last, to be read again (mtime 0) */
    }
    sb_release(&abs);
    return rc;
}

void idx_filework_prepare(FileWork *fw, const char *root, size_t max_bytes, Chunker *ch,
                          Stemmer *stem, Embedder *em)
{
    StrBuf src;
    ErrInfo e = {0};
    size_t *line_off = NULL;
    if (fw->skip) return; /* decided before reading (update.c: parser-crashed) */
    sb_init(&src);
    /* opened, then checked: a file swapped for a link out of the root since
     * the scan is never read */
    CrErr rc = read_settled(root, fw->path, max_bytes, &src, &fw->mtime_ns, &e);
    if (rc == CR_ENOENT) {
        fw->skip = "gone";
        goto out;
    } else if (rc == CR_EOUTSIDE) {
        fw->skip = "outside-root";
        goto out;
    } else if (rc == CR_ETOOBIG) {
        fw->skip = "too-large";
        goto out;
    } else if (rc) {
        fw->skip = "unreadable";
        goto out;
    }
    if (looks_binary(src.buf, src.len)) {
        fw->skip = "binary";
        goto out;
    }
    if (!utf8_valid(src.buf, src.len)) {
        fw->skip = "not-utf8";
        goto out;
    }
    fw->size = (int64_t)src.len;
    idx_hash_text(src.buf, src.len, fw->hash);
    if (fw->old_id && !strcmp(fw->hash, fw->old_hash) && !fw->reread) {
        fw->same_content = 1;
        goto out;
    }
    fw->lines = (uint32_t)count_lines(src.buf, src.len);
    const IdxLang *lang = idx_lang_for_file(fw->pick, fw->path);
    if (!lang) lang = idx_lang_for_shebang(src.buf, src.len);
    if (!lang) lang = idx_lang_fallback();
    lang = idx_lang_for_content(fw->pick, fw->path, lang, src.buf, src.len);
    fw->lang = lang;
    fw->module =
        lang->module_name ? lang->module_name(fw->path) : idx_lang_module_keep_ext(fw->path);
    const char *base = strrchr(fw->path, '/');
    fw->is_pkg = 0;
    for (const char *const *p = lang->pkg_files; p && *p; p++)
        fw->is_pkg |= !strcmp(base ? base + 1 : fw->path, *p);
    if ((rc = idx_chunker_run_lang(ch, lang, src.buf, src.len, 100, &fw->set, &e))) {
        idx_chunk_set_release(&fw->set);
        if (rc == CR_ETOOBIG) {
            /* a bound of the chunker's (docs/hardening.md): listed, not read */
            log_msg(LOG_WARN, "%s: %s (skipped)", fw->path, e.msg);
            fw->skip = "too-nested";
            goto out;
        }
        if (rc == CR_ETIMEOUT) {
            /* past the parse budget for its size (ts_parse.c): listed, not read */
            log_msg(LOG_WARN, "%s: %s (skipped)", fw->path, e.msg);
            fw->skip = "too-costly";
            goto out;
        }
        log_msg(LOG_WARN, "%s: %s (indexed without chunks)", fw->path, e.msg);
    }
    filework__resolve_imports(fw, root, lang);
    line_offsets(src.buf, src.len, &line_off);
    if (em && !idx_embedder_covers(em, fw->path)) em = NULL;
    filework__tokens(fw, src.buf, line_off, fw->lines, src.len, em);
    if (stem && fw->set.n_chunks) {
        /* the writer reads the terms, not the text: held no longer than this */
        for (size_t i = 0; i < fw->set.n_chunks * IDX_SEARCH_FIELDS; i++) {
            idx_fileterms_add_field(&fw->terms, stem, fw->text[i]);
            free(fw->text[i]);
        }
        free(fw->text);
        fw->text = NULL;
        idx_fileterms_done(&fw->terms);
    }
out:
    free(line_off);
    sb_release(&src);
}

void idx_filework_release(FileWork *fw)
{
    if (!fw) return;
    for (size_t i = 0; fw->text && i < fw->set.n_chunks * 4; i++)
        free(fw->text[i]);
    free(fw->text);
    idx_fileterms_release(&fw->terms);
    free(fw->chunk_hash);
    free(fw->cont);
    free(fw->vecs);
    idx_chunk_set_release(&fw->set);
    free(fw->module);
    free(fw->path);
    memset(fw, 0, sizeof *fw);
}

/* ---------------------------------------------------------------- write (writer thread) */

static CrErr run_file_stmt(IdxStore *st, StmtId id, int64_t file_id, ErrInfo *e)
{
    sqlite3_stmt *s = idx_store_stmt(st, id, e);
    if (!s) return CR_EDB;
    sqlite3_bind_int64(s, 1, file_id);
    return idx_store_step_done(st, s, e, "remove file rows");
}

/* Removes the rows that hang off a file (chunks, symbols,
 * imports, refs, edges in and out), marking refs elsewhere that pointed into
 * it for re-resolution when mark_dependents is set; the files row itself
 * goes too unless keep_row. */
static CrErr idx_store_remove_file(IdxStore *st, int64_t file_id, int mark_dependents, int keep_row,
                                   FileKeep *keep, ErrInfo *e)
{
    static const StmtId steps[] = {STMT_RM_EDGES_IN, STMT_RM_EDGES_OUT, STMT_RM_SYMBOLS,
                                   STMT_RM_IMPORTS,  STMT_RM_REFS,      STMT_RM_PP,
                                   STMT_RM_PP_DEFS,  STMT_RM_CHUNKS};
    CrErr rc;
    if (st->post) idx_postings_remove_file(st->post, file_id);
    /* (with keep: the edges into chunks kept stay, keep.c) */
    if (mark_dependents && !keep && (rc = run_file_stmt(st, STMT_RM_MARK_DEPENDENTS, file_id, e)))
        return rc;
    if ((rc = idx_fanin_note_file(st, file_id, e))) return rc;
    if (keep && (rc = idx_keep_remove_in(st, keep, e))) return rc;
    if ((rc = idx_dense_note_removed(st, file_id, e))) return rc;
    for (size_t i = keep ? 1 : 0; i < sizeof steps / sizeof steps[0]; i++)
        if ((rc = run_file_stmt(st, steps[i], file_id, e))) return rc;
    if (keep_row) return CR_OK;
    idx_fanin_file_gone(st, file_id);
    return run_file_stmt(st, STMT_FILE_DELETE, file_id, e);
}

/* Binds the files-row columns shared by FILE_INSERT (from ?1 = path) and
 * FILE_UPDATE (?1 = id). */
static void bind_file_cols(sqlite3_stmt *s, const FileWork *fw, const char *status)
{
    sqlite3_bind_text(s, 2, fw->module ? fw->module : "", -1, SQLITE_STATIC);
    sqlite3_bind_int(s, 3, fw->is_pkg);
    sqlite3_bind_text(s, 4, fw->hash, -1, SQLITE_STATIC);
    sqlite3_bind_int64(s, 5, fw->size);
    sqlite3_bind_int64(s, 6, fw->mtime_ns);
    sqlite3_bind_int(s, 7, (int)fw->lines);
    sqlite3_bind_text(s, 8, status, -1, SQLITE_STATIC);
}

/* The next database generation, for a file whose rows are rewritten. */
static CrErr next_gen(IdxStore *st, int64_t *out, ErrInfo *e)
{
    sqlite3_stmt *s = idx_store_stmt(st, STMT_GEN_NEXT, e);
    if (!s) return CR_EDB;
    if (sqlite3_step(s) != SQLITE_ROW) return idx_store_err(st, e, "generation");
    *out = sqlite3_column_int64(s, 0);
    sqlite3_reset(s);
    return CR_OK;
}

static CrErr upsert_file_row(IdxStore *st, const FileWork *fw, const char *status, int64_t *out_id,
                             ErrInfo *e)
{
    int64_t gen = 0;
    CrErr rc = next_gen(st, &gen, e);
    if (rc) return rc;
    sqlite3_stmt *s = idx_store_stmt(st, fw->old_id ? STMT_FILE_UPDATE : STMT_FILE_INSERT, e);
    if (!s) return CR_EDB;
    sqlite3_bind_int64(s, 9, gen);
    if (fw->old_id)
        sqlite3_bind_int64(s, 1, fw->old_id);
    else
        sqlite3_bind_text(s, 1, fw->path, -1, SQLITE_STATIC);
    bind_file_cols(s, fw, status);
    rc = idx_store_step_done(st, s, e, "file row");
    if (!rc) *out_id = fw->old_id ? fw->old_id : sqlite3_last_insert_rowid(st->db);
    return rc;
}

/* The absolute dotted module an import refers to, or NULL when a relative
 * import climbs above the workspace root. Caller frees. */
static char *import_base(const FileWork *fw, const ChunkRef *r)
{
    StrBuf sb;
    sb_init(&sb);
    if (r->level > 0) {
        /* The package the file lives in: itself for __init__.py. */
        sb_adds(&sb, fw->module);
        int up = r->level - (fw->is_pkg ? 1 : 0);
        for (int i = 0; i < up; i++) {
            char *dot = strrchr(sb.buf, '.');
            if (!dot) {
                if (!sb.len) {
                    sb_release(&sb);
                    return NULL;
                }
                sb_reset(&sb);
                continue;
            }
            sb_truncate(&sb, (size_t)(dot - sb.buf));
        }
    }
    if (r->module && r->module[0]) {
        if (sb.len) sb_addc(&sb, '.');
        sb_adds(&sb, r->module);
    }
    return sb_detach(&sb, NULL);
}

static const char *last_component(const char *name)
{
    const char *d = strrchr(name, '.');
    return d ? d + 1 : name;
}

/* (a ref's file is its chunk's: the files row keeps its refs' ids) */
static CrErr insert_ref(IdxStore *st, int64_t chunk_id, RefKind kind, const char *name, int argc,
                        uint64_t argt, ErrInfo *e)
{
    sqlite3_stmt *s = idx_store_stmt(st, STMT_REF_INSERT, e);
    if (!s) return CR_EDB;
    sqlite3_bind_int64(s, 1, chunk_id);
    sqlite3_bind_int(s, 2, (int)kind);
    const char *last = last_component(name);
    if (last != name)
        sqlite3_bind_text(s, 3, name, -1, SQLITE_STATIC); /* else NULL: name is last */
    sqlite3_bind_text(s, 4, last, -1, SQLITE_STATIC);
    /* else NULL: not known */
    if (argc > 0) sqlite3_bind_int64(s, 5, idx_argt_pack(argc, argt));
    sqlite3_bind_int(s, 6, st->refs_born && idx_graph_born_kind((int)kind));
    return idx_store_step_done(st, s, e, "ref");
}

static CrErr insert_import(IdxStore *st, const FileWork *fw, int64_t file_id, int64_t chunk_id,
                           const ChunkRef *r, ErrInfo *e)
{
    CrErr rc = CR_OK;
    StrBuf target, bound;
    if (r->level == -1) return idx_facts_add_pending(st, file_id, r->module, e);
    /* a library's module, bound as written: read again should the
     * workspace get a module of its name */
    if (r->level == IMPORT_LIBRARY_LEVEL && (rc = idx_facts_add_pending(st, file_id, r->module, e)))
        return rc;
    char *base = import_base(fw, r);
    if (!base || !r->alias) {
        free(base);
        return CR_OK;
    }
    sb_init(&target);
    sb_init(&bound);
    sb_adds(&target, base);
    if (r->member && strcmp(r->member, "*") != 0) {
        if (target.len) sb_addc(&target, '.');
        sb_adds(&target, r->member);
    }
    /* `import a.b.c` binds only `a`; `import a.b as x` binds x to a.b. */
    size_t first = strcspn(base, ".");
    if (!r->member && strlen(r->alias) == first && !strncmp(base, r->alias, first))
        sb_add(&bound, base, first);
    else
        sb_adds(&bound, target.buf);
    /* (a name bound to the workspace's root package, module "": Go's
     * `import "example.com/mod"` from a subfolder, binds; nothing else
     * without a target does) */
    if (!target.len && r->member) goto out;
    sqlite3_stmt *s = idx_store_stmt(st, STMT_IMPORT_INSERT, e);
    if (!s) {
        rc = CR_EDB;
        goto out;
    }
    sqlite3_bind_int64(s, 1, file_id);
    sqlite3_bind_text(s, 2, r->alias, -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 3, bound.buf, -1, SQLITE_STATIC);
    if ((rc = idx_store_step_done(st, s, e, "import"))) goto out;
    if (r->level != IMPORT_OWN_LEVEL && target.len)
        rc = insert_ref(st, chunk_id, REF_IMPORT, target.buf, 0, 0, e);
out:
    free(base);
    sb_release(&target);
    sb_release(&bound);
    return rc;
}

/* Which chunk names each symbol of the file: its first piece, except that a
 * function or method takes a name from a type declared before it (TypeScript
 * merges `interface EmptyError` and `const EmptyError = …`; a call means
 * the value). owner maps symbol -> chunk index. */
static void symbol_owners(const FileWork *fw, StrMap *owner)
{
    for (size_t i = 0; i < fw->set.n_chunks; i++) {
        const ChunkDef *c = &fw->set.chunks[i];
        if (!c->symbol || !c->symbol[0] || fw->cont[i]) continue;
        int64_t k;
        if (!strmap_get(owner, c->symbol, &k))
            strmap_put(owner, c->symbol, (int64_t)i);
        else if (fw->set.chunks[k].kind == IDX_KIND_CLASS &&
                 (c->kind == IDX_KIND_FUNCTION || c->kind == IDX_KIND_METHOD))
            strmap_put(owner, c->symbol, (int64_t)i);
    }
}

/* What the file keeps of its old rows (keep.c), given which new chunk
 * names each symbol. */
static CrErr keep_load(IdxStore *st, const FileWork *fw, FileKeep **out, ErrInfo *e)
{
    StrMap owners;
    strmap_init(&owners);
    symbol_owners(fw, &owners);
    char *owner = xcalloc(fw->set.n_chunks + 1, 1);
    for (size_t i = 0; i < fw->set.n_chunks; i++) {
        const ChunkDef *c = &fw->set.chunks[i];
        int64_t k = -1;
        owner[i] = (char)(c->symbol && c->symbol[0] && !fw->cont[i] &&
                          strmap_get(&owners, c->symbol, &k) && k == (int64_t)i);
    }
    CrErr rc = idx_keep_load(st, fw, fw->old_id, owner, out, e);
    free(owner);
    strmap_release(&owners);
    return rc;
}

static CrErr insert_chunks(IdxStore *st, FileWork *fw, int64_t file_id, int64_t *ids, ErrInfo *e)
{
    CrErr rc = CR_OK;
    StrBuf qual;
    StrMap seen;
    sb_init(&qual);
    strmap_init(&seen);
    symbol_owners(fw, &seen);
    /* the term ids of the file's distinct terms, looked up at first use */
    uint32_t *gid = xmalloc(((size_t)fw->terms.ids.n + 1) * sizeof *gid);
    memset(gid, 0xff, ((size_t)fw->terms.ids.n + 1) * sizeof *gid);
    for (size_t i = 0; i < fw->set.n_chunks && !rc; i++) {
        const ChunkDef *c = &fw->set.chunks[i];
        int64_t parent = c->parent >= 0 && (size_t)c->parent < i ? ids[c->parent] : 0;
        sqlite3_stmt *s = idx_store_stmt(st, STMT_CHUNK_INSERT, e);
        if (!s) {
            rc = CR_EDB;
            break;
        }
        sqlite3_bind_int64(s, 1, file_id);
        sqlite3_bind_int(s, 2, (int)c->start_line);
        sqlite3_bind_int(s, 3, (int)c->end_line);
        sqlite3_bind_int(s, 4, (int)c->window);
        sqlite3_bind_int(s, 5, (int)c->kind);
        sqlite3_bind_text(s, 6, c->symbol ? c->symbol : "", -1, SQLITE_STATIC);
        const char *sym = c->symbol ? c->symbol : "", *name = c->name ? c->name : "";
        if (strcmp(name, sym) != 0) /* else NULL: its name is its symbol */
            sqlite3_bind_text(s, 7, name, -1, SQLITE_STATIC);
        sqlite3_bind_text(s, 8, c->signature ? c->signature : "", -1, SQLITE_STATIC);
        sqlite3_bind_text(s, 9, c->docstring ? c->docstring : "", -1, SQLITE_STATIC);
        sqlite3_bind_int64(s, 10, parent);
        sqlite3_bind_int64(s, 11, (int64_t)strtoull(fw->chunk_hash[i], NULL, 16));
        sqlite3_bind_int(s, 12, fw->cont[i]);
        if ((rc = idx_store_step_done(st, s, e, "chunk"))) break;
        ids[i] = sqlite3_last_insert_rowid(st->db);
        if (fw->vecs) idx_dense_stage(st, ids[i], fw->vecs + i * (size_t)fw->dim, fw->dim);

        if (st->post && fw->terms.n_fields)
            idx_postings_add_terms(st->post, ids[i], file_id, c->kind, &fw->terms, i, gid);
        else if (st->post)
            idx_postings_add(st->post, ids[i], file_id, c->kind,
                             (const char *const *)&fw->text[i * 4]);

        /* A definition is named once: by its first piece (window 0 or 1, and a
         * class's first run, which is the one holding its header), or by a
         * function after a type of its name (symbol_owners). */
        int64_t owner = -1;
        int first_piece = c->symbol && c->symbol[0] && !fw->cont[i] &&
                          strmap_get(&seen, c->symbol, &owner) && owner == (int64_t)i;
        if (first_piece) {
            sb_reset(&qual);
            if (fw->module[0]) sb_addf(&qual, "%s.", fw->module);
            sb_adds(&qual, c->symbol);
            s = idx_store_stmt(st, STMT_SYMBOL_INSERT, e);
            if (!s) {
                rc = CR_EDB;
                break;
            }
            sqlite3_bind_text(s, 1, qual.buf, (int)qual.len, SQLITE_STATIC);
            const char *nm = c->name ? c->name : "", *dot = strrchr(qual.buf, '.');
            if (strcmp(nm, dot ? dot + 1 : qual.buf) != 0) /* else NULL: the last part */
                sqlite3_bind_text(s, 2, nm, -1, SQLITE_STATIC);
            sqlite3_bind_int64(s, 3, ids[i]);
            sqlite3_bind_int64(s, 4, file_id);
            rc = idx_store_step_done(st, s, e, "symbol");
        }
        if (!rc && parent) {
            s = idx_store_stmt(st, STMT_EDGE_INSERT, e);
            if (!s) {
                rc = CR_EDB;
                break;
            }
            sqlite3_bind_int64(s, 1, parent);
            sqlite3_bind_int64(s, 2, ids[i]);
            sqlite3_bind_int(s, 3, IDX_EDGE_CONTAIN);
            sqlite3_bind_int64(s, 4, 0);
            rc = idx_store_step_done(st, s, e, "edge");
        }
    }
    free(gid);
    sb_release(&qual);
    strmap_release(&seen);
    return rc;
}

/* The id the next reference (REF_NEXT_ID) or symbol (SYMBOL_NEXT_ID) gets:
 * the rowid SQLite gives a row past the largest. */
static CrErr next_id(IdxStore *st, StmtId which, int64_t *out, ErrInfo *e)
{
    sqlite3_stmt *s = idx_store_stmt(st, which, e);
    if (!s) return CR_EDB;
    if (sqlite3_step(s) != SQLITE_ROW) return idx_store_err(st, e, "refs");
    *out = sqlite3_column_int64(s, 0);
    sqlite3_reset(s);
    return CR_OK;
}

/* The id the next reference gets, as the first of those this transaction
 * writes (store_int.h's refs_new_from), before the first is written. */
static CrErr note_refs_new_from(IdxStore *st, ErrInfo *e)
{
    CrErr rc = next_id(st, STMT_REF_NEXT_ID, &st->refs_new_from, e);
    st->refs_new_version = idx_store_data_version(st);
    return rc;
}

/* Keeps on file_id's row the ids of the refs and symbols it wrote, each
 * from lo[] to the next one's less one: the ranges by which they are read
 * (store.c). */
static CrErr note_spans(IdxStore *st, int64_t file_id, const int64_t lo[2], ErrInfo *e)
{
    int64_t next[2] = {0, 0};
    CrErr rc = next_id(st, STMT_REF_NEXT_ID, &next[0], e);
    if (!rc) rc = next_id(st, STMT_SYMBOL_NEXT_ID, &next[1], e);
    if (rc) return rc;
    sqlite3_stmt *s = idx_store_stmt(st, STMT_FILE_REF_SPAN, e);
    if (!s) return CR_EDB;
    sqlite3_bind_int64(s, 1, file_id);
    sqlite3_bind_int64(s, 2, lo[0]);
    sqlite3_bind_int64(s, 3, next[0] - 1);
    sqlite3_bind_int64(s, 4, lo[1]);
    sqlite3_bind_int64(s, 5, next[1] - 1);
    return idx_store_step_done(st, s, e, "file row");
}

void idx_store_save_facts_drop(IdxStore *st)
{
    if (st->save_facts) idx_facts_release(st->save_facts);
    st->save_facts_state = 0;
    st->save_facts_file = 0;
}

/* The facts of file_id's rows into *old from those the last save kept,
 * when they are still its rows' (no write since on this connection or
 * another); 0 when not. Every write drops them. */
static int save_facts_take(IdxStore *st, int64_t file_id, IdxFacts *old)
{
    int ok = file_id && st->save_facts && st->save_facts_state == 2 &&
             st->save_facts_file == file_id && idx_store_data_version(st) == st->save_facts_version;
    if (ok) {
        *old = *st->save_facts;
        memset(st->save_facts, 0, sizeof *st->save_facts);
    }
    idx_store_save_facts_drop(st);
    return ok;
}

/* Keeps now as the facts of file_id's rows (a save's, until its commit). */
static void save_facts_keep(IdxStore *st, int64_t file_id, IdxFacts *now)
{
    if (!st->save_facts) st->save_facts = xcalloc(1, sizeof *st->save_facts);
    idx_facts_release(st->save_facts);
    *st->save_facts = *now;
    memset(now, 0, sizeof *now);
    st->save_facts_file = file_id;
    st->save_facts_state = 1;
}

CrErr idx_store_write_file(IdxStore *st, FileWork *fw, int mark_dependents, ErrInfo *e)
{
    CrErr rc = CR_OK;
    int64_t file_id = 0, *ids = NULL, lo[2] = {0, 0}; /* the first ref's and symbol's ids */
    IdxFacts old = {0}, now = {0};
    FileKeep *keep = NULL;
    uint64_t pp_old = 0, pp_now = 0; /* the preprocessor digests (update/pp_settle.c) */
    if (fw->same_content) {
        sqlite3_stmt *s = idx_store_stmt(st, STMT_FILE_TOUCH, e);
        if (!s) return CR_EDB;
        sqlite3_bind_int64(s, 1, fw->old_id);
        sqlite3_bind_int64(s, 2, fw->size);
        sqlite3_bind_int64(s, 3, fw->mtime_ns);
        return idx_store_step_done(st, s, e, "file row");
    }
    /* What the file offered the resolver before: references that could
     * meet what comes or goes are resolved again (deps.c); the facts the
     * last save of this file kept when its rows are still those. */
    int kept = save_facts_take(st, fw->old_id, &old);
    if (fw->old_id && mark_dependents && !kept && (rc = idx_facts_load(st, fw->old_id, &old, e)))
        goto out;
    if (fw->old_id && (rc = idx_pp_file_sig(st, fw->old_id, &pp_old, e))) goto out;
    if (fw->skip && !strcmp(fw->skip, "gone")) {
        if (fw->old_id) rc = idx_store_remove_file(st, fw->old_id, mark_dependents, 0, NULL, e);
        goto marks;
    }
    /* an edit leaves most chunks as they were: what resolved to and from
     * them is kept (keep.c) */
    if (fw->old_id && mark_dependents && !fw->skip && !fw->reread &&
        (rc = keep_load(st, fw, &keep, e)))
        goto out;
    if (fw->old_id && (rc = idx_store_remove_file(st, fw->old_id, mark_dependents, 1, keep, e)))
        goto out;
    if (fw->skip) {
        fw->hash[0] = '\0';
        rc = upsert_file_row(st, fw, fw->skip, &file_id, e);
        goto marks;
    }
    if ((rc = upsert_file_row(st, fw, "ok", &file_id, e))) goto out;
    if (!st->refs_new_from && (rc = note_refs_new_from(st, e))) goto out;
    if ((rc = next_id(st, STMT_REF_NEXT_ID, &lo[0], e)) ||
        (rc = next_id(st, STMT_SYMBOL_NEXT_ID, &lo[1], e)))
        goto out;
    ids = xcalloc(fw->set.n_chunks + 1, sizeof *ids);
    if ((rc = insert_chunks(st, fw, file_id, ids, e))) goto out;
    for (size_t i = 0; keep && i < fw->set.n_chunks; i++)
        idx_keep_chunk_id(keep, i, ids[i]);
    if (keep && (rc = idx_keep_in_edges(st, keep, e))) goto out;
    for (size_t i = 0; i < fw->set.n_refs && !rc; i++) {
        const ChunkRef *r = &fw->set.refs[i];
        if (r->chunk < 0 || (size_t)r->chunk >= fw->set.n_chunks) continue;
        if (r->kind == REF_IMPORT)
            rc = insert_import(st, fw, file_id, ids[r->chunk], r, e);
        else if (r->name && r->name[0])
            rc = insert_ref(st, ids[r->chunk], r->kind, r->name, r->argc, r->argt, e);
    }
    if (!rc) rc = note_spans(st, file_id, lo, e);
    if (!rc) rc = idx_pp_insert(st, &fw->set, file_id, &pp_now, e);
    /* the references of a kept chunk resolved as before, unless the
     * preprocessor's facts (conditions, macros) moved */
    if (!rc && keep)
        rc = pp_now == pp_old ? idx_keep_refs(st, keep, lo[0], e) : idx_keep_moved(st, keep, e);
    if (!rc && keep) idx_keep_log(keep, fw->path);
marks:
    if (!rc && pp_now != pp_old) rc = idx_pp_moved(st, e);
    if (!rc && mark_dependents && file_id) rc = idx_facts_load(st, file_id, &now, e);
    if (!rc && mark_dependents) {
        if (idx_facts_classes_differ(&old, &now)) st->classes_moved = 1;
        rc = idx_facts_mark(st, &old, &now, e);
    }
    if (!rc && mark_dependents && file_id && st->save_facts_want)
        save_facts_keep(st, file_id, &now);
out:
    idx_keep_free(keep);
    idx_facts_release(&old);
    idx_facts_release(&now);
    free(ids);
    return rc;
}
