#include "cli.h"
#include "cli_int.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The commands that report: status (what the index holds) and root (where
 * it is, by the root rule). */

/* status of a workspace never indexed: not an error, a state. */
static CrErr print_missing(const CliArgs *a, const IdxConfig *ic, const ErrInfo *why, ErrInfo *e)
{
    CrErr rc = CR_OK;
    char real[PATH_MAX];
    const char *root = realpath(ic->root, real) ? real : ic->root;
    if (a->json) {
        StrBuf llm;
        sb_init(&llm);
        ws_config_llm_label(&a->cfg, &llm);
        json_t *j =
            json_pack("{s:s, s:o, s:o, s:i, s:i, s:i, s:i, s:i, s:o}", "state", "missing", "root",
                      json_text(root), "message", json_text(why->msg), "files", 0, "chunks", 0,
                      "edges", 0, "vectors", 0, "symbols", 0, "llm", json_text(llm.buf));
        rc = cli_print_json(j, e);
        json_decref(j);
        sb_release(&llm);
    } else {
        printf("root:      %s\nstate:     not indexed yet: run `coderag index`\n", root);
    }
    return rc;
}

/* The files skipped for one reason. */
typedef struct SkipReason {
    const char *reason; /* borrowed from the list */
    size_t n;
} SkipReason;

static int skip_reason_cmp(const void *pa, const void *pb)
{
    const SkipReason *a = pa, *b = pb;
    if (a->n != b->n) return a->n > b->n ? -1 : 1;
    return strcmp(a->reason, b->reason);
}

/* The reasons of the skipped files with their counts, most first; at most
 * cap of them (the index's reasons are a handful). */
static size_t skip_reasons(const IdxSkipped *sk, size_t n, SkipReason *out, size_t cap)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        size_t r = 0;
        while (r < k && strcmp(out[r].reason, sk[i].reason) != 0)
            r++;
        if (r == k) {
            if (k == cap) continue;
            out[k++] = (SkipReason){sk[i].reason, 0};
        }
        out[r].n++;
    }
    qsort(out, k, sizeof *out, skip_reason_cmp);
    return k;
}

int cli_status(const CliCommand *cmd, int argc, char **argv)
{
    CliArgs a;
    ErrInfo e = {0};
    WsRoot *r = NULL;
    IdxStore *st = NULL;
    WsStatusReport rep = {0};
    IdxConfig ic;
    CrErr rc = cli_parse_args(cmd, argc, argv, &a, &e);
    if (rc || a.help) goto out;
    StrBuf note;
    sb_init(&note);
    ws_config_resolve_root_note(&a.cfg, &note);
    if (note.len) fprintf(stderr, "coderag: %s\n", note.buf);
    sb_release(&note);
    ws_config_idx(&a.cfg, &ic);
    r = cli_root_new(&a.cfg);
    if ((rc = ws_root_open_fresh(r, &(WsFresh){.how = WS_OPEN_READ}, &e)) == CR_ENOINDEX) {
        ErrInfo why = e;
        rc = print_missing(&a, &ic, &why, &e);
        if (a.check && !a.json) printf("check: nothing to check: not indexed yet\n");
        goto out;
    }
    if (rc) goto out;
    st = r->q;
    if (a.check && (rc = ws_status_check(st, &e))) {
        /* the verdict on stdout (and the error on stderr, exit 2) */
        if (!a.json) printf("check: FAILED: %s\n", e.msg[0] ? e.msg : cr_strerror(rc));
        goto out;
    }
    if ((rc = ws_status_report(st, 1, &rep, &e))) goto out;
    const IdxStatus s = rep.s;
    char when[32];
    utc_iso8601(s.last_update, when);
    StrBuf shown;
    sb_init(&shown);
    ws_config_llm_label(&a.cfg, &shown);
    const char *llm = shown.buf;
    const IdxSkipped *sk = rep.skipped;
    size_t n_sk = rep.n_skipped;
    /* the reasons, most files first */
    SkipReason reasons[16];
    size_t n_reasons = skip_reasons(sk, n_sk, reasons, 16);
    if (a.json) {
        json_t *j = json_pack("{s:s}", "state", ws_index_state(&s));
        json_t *common = ws_status_json(ws_store_root(st), &s);
        json_object_update(j, common);
        json_decref(common);
        json_object_set_new(j, "lastUpdateUnix", json_integer((json_int_t)s.last_update));
        json_object_set_new(j, "llm", json_string(llm));
        json_t *langs = json_object();
        for (size_t i = 0; i < s.n_langs; i++)
            json_object_set_new(langs, s.langs[i].name, json_integer((json_int_t)s.langs[i].files));
        json_object_set_new(j, "languages", langs);
        json_t *by = json_object();
        for (size_t i = 0; i < n_reasons; i++)
            json_object_set_new(by, reasons[i].reason, json_integer((json_int_t)reasons[i].n));
        json_object_set_new(j, "skippedByReason", by);
        if (a.skipped) {
            json_t *list = json_array();
            for (size_t i = 0; i < n_sk; i++)
                json_array_append_new(list, json_pack("{s:o, s:s}", "path", json_text(sk[i].path),
                                                      "reason", sk[i].reason));
            json_object_set_new(j, "skippedFiles", list);
        }
        if (a.check) json_object_set_new(j, "check", json_string("ok"));
        rc = cli_print_json(j, &e);
        json_decref(j);
    } else {
        StrBuf state;
        sb_init(&state);
        ws_index_state_text(&s, &state);
        printf("root:      %s\nstate:     %s\nfiles:     %lld", ws_store_root(st),
               state.len ? state.buf : "ready", (long long)s.files);
        sb_release(&state);
        if (s.skipped) {
            printf(" (%lld skipped:", (long long)s.skipped);
            for (size_t i = 0; i < n_reasons; i++)
                printf("%s %zu %s", i ? "," : "", reasons[i].n, reasons[i].reason);
            printf(")");
        }
        printf("\nchunks:    %lld\nsymbols:   %lld\n"
               "edges:     %lld\nvectors:   %lld\nindex:     %.1f MB\nupdated:   %s\n"
               "embedder:  %s\nllm:       %s\n",
               (long long)s.chunks, (long long)s.symbols, (long long)s.edges, (long long)s.vectors,
               (double)s.db_bytes / 1e6, s.last_update ? when : "never (no pass has finished yet)",
               s.embedder, llm);
        if (s.n_langs) {
            printf("languages:");
            for (size_t i = 0; i < s.n_langs; i++)
                printf("%s %s %lld", i ? "," : "", s.langs[i].name, (long long)s.langs[i].files);
            printf("\n");
        }
        if (s.skipped && a.skipped) {
            printf("skipped files:\n");
            for (size_t i = 0; i < n_sk; i++)
                printf("  %s (%s)\n", sk[i].path, sk[i].reason);
        } else if (s.skipped) {
            printf("(`coderag status --skipped` lists the skipped files)\n");
        }
        if (a.check) printf("check: ok\n");
    }
    sb_release(&shown);
out:
    ws_status_report_release(&rep);
    cli_root_free(r);
    ws_config_release(&a.cfg);
    return rc ? cli_fail(rc, &e) : 0;
}

static CrErr print_markers(const CliArgs *a, ErrInfo *e)
{
    const char *m;
    if (a->json) {
        json_t *vcs = json_array(), *project = json_array();
        for (size_t i = 0; (m = ws_vcs_marker(i)) != NULL; i++)
            json_array_append_new(vcs, json_string(m));
        for (size_t i = 0; (m = ws_project_marker(i)) != NULL; i++)
            json_array_append_new(project, json_string(m));
        json_t *j = json_pack("{s:o, s:o}", "vcs", vcs, "project", project);
        CrErr rc = cli_print_json(j, e);
        json_decref(j);
        return rc;
    }
    for (size_t i = 0; (m = ws_vcs_marker(i)) != NULL; i++)
        printf("vcs %s\n", m);
    for (size_t i = 0; (m = ws_project_marker(i)) != NULL; i++)
        printf("project %s\n", m);
    return CR_OK;
}

int cli_root(const CliCommand *cmd, int argc, char **argv)
{
    CliArgs a;
    ErrInfo e = {0};
    char *root = NULL;
    char start[PATH_MAX];
    CrErr rc = cli_parse_args(cmd, argc, argv, &a, &e);
    if (rc || a.help) goto out;
    if (a.markers) {
        rc = print_markers(&a, &e);
        goto out;
    }
    const char *path = a.cfg.root ? a.cfg.root : ".";
    if (!realpath(path, start)) {
        rc = err_set(&e, CR_EIO, "%s: %s", path, strerror(errno));
        goto out;
    }
    struct stat sb;
    if (a.cfg.root && !a.root_arg) { /* CODERAG_ROOT: the root as it is, for every command */
        root = xstrdup(start);
    } else {
        char *slash = strrchr(start, '/');
        if (stat(start, &sb) == 0 && !S_ISDIR(sb.st_mode) && slash)
            *(slash == start ? slash + 1 : slash) = '\0'; /* a file: its folder */
        root = ws_find_root(start, start);
    }
    if (a.json) {
        json_t *j = json_pack("{s:o}", "root", json_text(root));
        rc = cli_print_json(j, &e);
        json_decref(j);
    } else {
        printf("%s\n", root);
    }
out:
    free(root);
    ws_config_release(&a.cfg);
    return rc ? cli_fail(rc, &e) : 0;
}
